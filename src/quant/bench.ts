import {
  describeAdapter,
  getGpu,
  type GpuContext,
  resolveBackend,
  storageBuffer,
} from "../gpu/mod.ts";
import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { formatInfo, type QuantFormat, storeBytes } from "./format.ts";
import { createQuantStore, decodeAll, encodeAll, type QuantStore } from "./store.ts";
import { updateAll, type UpdateOp } from "./update.ts";
import { destroyGpuQuantStore, recordGpuUpdate, uploadQuantStore } from "./gpu.ts";
import { withOwned } from "../gpu/owned.ts";

/** Which formats each fused update applies to (unsigned regrets only for CFR+/DCFR+). */
export const OP_FORMATS: Record<Exclude<UpdateOp, "set">, QuantFormat[]> = {
  dcfr: ["f32", "i16", "i8", "i4"],
  plus: ["f32", "i16", "u8", "u4"],
  strategy: ["f32", "u16", "u8", "u4"],
};

/** One measured (op, format, backend) point. */
export interface QuantSpeed {
  op: string;
  format: QuantFormat;
  backend: "cpu" | "gpu";
  elementsPerSecond: number;
  bytesPerElement: number;
}

function inputs(n: number, signed: boolean): Float32Array {
  const v = new Float32Array(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    v[i] = ((x >>> 8) / 16777216 - (signed ? 0.5 : 0)) * 10;
  }
  return v;
}

/** A store of `n` elements in blocks of `block`, filled with the op's kind of data. */
function benchStore(op: Exclude<UpdateOp, "set">, format: QuantFormat, n: number, block: number) {
  const s = createQuantStore(format, new Array(Math.ceil(n / block)).fill(block));
  encodeAll(s, inputs(s.n, op !== "strategy"), { seed: 1, iteration: 0 });
  return s;
}

/** Runs `step` (which reports how many updates it did) for at least 400 ms and two updates. */
async function timeUpdates(step: (done: number) => number | Promise<number>) {
  let reps = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 400 || reps < 2) reps += await step(reps);
  return { reps, secs: (performance.now() - t0) / 1000 };
}

function speed(
  op: string,
  format: QuantFormat,
  backend: "cpu" | "gpu",
  s: QuantStore,
  timed: { reps: number; secs: number },
): QuantSpeed {
  return {
    op,
    format,
    backend,
    elementsPerSecond: (timed.reps * s.n) / timed.secs,
    bytesPerElement: storeBytes(format, s.n, s.blocks) / s.n,
  };
}

/** Measures elements/s of one fused update on the CPU over `n` elements in blocks of `block`. */
export async function cpuSpeed(
  op: Exclude<UpdateOp, "set">,
  format: QuantFormat,
  n: number,
  block: number,
): Promise<QuantSpeed> {
  const s = benchStore(op, format, n, block);
  const input = inputs(s.n, op !== "strategy");
  const timed = await timeUpdates((done) => {
    updateAll(s, op, input, 0.9, 0.5, { seed: 1, iteration: done + 1 });
    return 1;
  });
  return speed(op, format, "cpu", s, timed);
}

/** Measures elements/s of one fused update on the GPU (several updates per submit, then one wait). */
export async function gpuSpeed(
  ctx: GpuContext,
  op: Exclude<UpdateOp, "set">,
  format: QuantFormat,
  n: number,
  block: number,
): Promise<QuantSpeed> {
  const s = benchStore(op, format, n, block);
  const timed = await withOwned(async (own) => {
    const g = uploadQuantStore(ctx, s);
    own({ destroy: () => destroyGpuQuantStore(g) });
    const input = own(storageBuffer(ctx, inputs(s.n, op !== "strategy")));
    const run = (reps: number, from: number) =>
      withOwned(async (ownPass) => {
        const enc = ctx.device.createCommandEncoder();
        for (let r = 0; r < reps; r++) {
          const key = { seed: 1, iteration: from + r };
          ownPass(await recordGpuUpdate(g, enc, op, input, 0.9, 0.5, key));
        }
        ctx.device.queue.submit([enc.finish()]);
        await ctx.device.queue.onSubmittedWorkDone();
        return reps;
      });
    await run(1, 1); // compile pipelines and warm up
    return await timeUpdates((done) => run(4, 10 + done));
  });
  return speed(op, format, "gpu", s, timed);
}

/** Largest relative round-trip error of a format on random data (nearest rounding), for the demo. */
export function roundTripError(format: QuantFormat, n = 1 << 16, block = 256): number {
  const s = createQuantStore(format, new Array(n / block).fill(block));
  const v = inputs(s.n, formatInfo(format).signed);
  encodeAll(s, v, { seed: 1, iteration: 0, mode: "nearest" });
  const back = decodeAll(s);
  let worst = 0;
  for (let b = 0; b < s.blocks; b++) {
    let max = 0;
    for (let i = b * block; i < (b + 1) * block; i++) max = Math.max(max, Math.abs(v[i]));
    for (let i = b * block; i < (b + 1) * block; i++) {
      worst = Math.max(worst, Math.abs(back[i] - v[i]) / max);
    }
  }
  return worst;
}

/** `deno task bench quant`: elements/s of every update kernel per format on CPU and GPU, bytes per element. */
export const suite: BenchSuite = {
  description: "fused quantized update kernels: elements/s per format on CPU and GPU",
  async run(opts): Promise<BenchReport> {
    const backend = await resolveBackend(opts.backend);
    const ctx = backend === "gpu" ? await getGpu() : null;
    const adapter = ctx ? describeAdapter(ctx.report) : null;
    const report = newReport("quant", adapter);
    const n = opts.full ? 1 << 22 : 1 << 18;
    const block = 256;
    const rows: (string | number | null)[][] = [];
    for (
      const [op, formats] of Object.entries(OP_FORMATS) as [
        Exclude<UpdateOp, "set">,
        QuantFormat[],
      ][]
    ) {
      for (const format of formats) {
        opts.log(`${op} ${format}`);
        const cpu = await cpuSpeed(op, format, n, block);
        const gpu = ctx ? await gpuSpeed(ctx, op, format, n, block) : null;
        rows.push([
          op,
          format,
          Number(cpu.bytesPerElement.toFixed(4)),
          Math.round(cpu.elementsPerSecond),
          gpu ? Math.round(gpu.elementsPerSecond) : null,
          gpu ? Number((gpu.elementsPerSecond / cpu.elementsPerSecond).toFixed(2)) : null,
        ]);
      }
    }
    report.tables.push({
      title: `Fused update throughput (${n} elements, blocks of ${block})`,
      columns: ["update", "format", "bytes/element", "CPU elements/s", "GPU elements/s", "GPU/CPU"],
      rows,
    });
    report.notes.push(
      `GPU: ${adapter ?? "none (CPU only)"}.` +
        (ctx?.report.isFallback
          ? " A software adapter: its speed says nothing about real GPUs."
          : ""),
      "bytes/element includes the one f32 scale per block; f32 has no scale.",
      "CPU: one thread, TypeScript reference path (decode, update in f32, max, re-encode per block).",
    );
    return report;
  },
};
