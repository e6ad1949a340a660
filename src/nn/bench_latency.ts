// Latency and pipelining measurements of `bench nn` (GPU only): the readback floor, per-call
// times, the plan's GPU time and encoding cost, and calls completed per floor interval with
// several calls in flight.
import type { GpuContext } from "../gpu/device.ts";
import { storageBuffer } from "../gpu/buffers.ts";
import { timeComputePass } from "../gpu/timing.ts";
import type { GpuNet, NetBatch, PolicyValueNet } from "./net.ts";
import { countGpuCalls } from "../gpu/api_count.ts";
import { hostPhases, MAP_MODES, type MapMode } from "./gpu/readback.ts";
import { InferencePipeline } from "./pipeline.ts";
import { readTensors } from "./gpu/tensor.ts";
import { syntheticBatch } from "./train.ts";
import { rng } from "./tensor.ts";
import { hasFloat16Array } from "./planes.ts";
import { randomMask } from "./mask_bits.ts";

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median wall ms of a 4-byte readback round trip (submit a copy, map, read): the host's floor. */
export async function readbackFloorMs(ctx: GpuContext, samples = 15): Promise<number> {
  const buffer = storageBuffer(ctx, new Float32Array([1]), "bench.floor");
  const t = { shape: [1], buffer, size: 1 };
  await readTensors(ctx, [t]);
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await readTensors(ctx, [t]);
    ms.push(performance.now() - t0);
  }
  buffer.destroy();
  return median(ms);
}

/** Median wall ms per `infer` call over about `budgetMs` of back-to-back calls. */
export async function callMs(net: GpuNet, b: NetBatch, budgetMs: number): Promise<number> {
  const ms: number[] = [];
  const t0 = performance.now();
  do {
    const t = performance.now();
    await net.infer(b);
    ms.push(performance.now() - t);
  } while (performance.now() - t0 < budgetMs || ms.length < 5);
  return median(ms);
}

/**
 * The inference plan of batch `size` alone: median GPU ms of one replay (timestamps when the
 * adapter has them, else wall), and median host ms to encode and submit it.
 */
export async function planCost(
  ctx: GpuContext,
  net: GpuNet,
  size: number,
): Promise<{ gpuMs: number; encodeMs: number; dispatches: number; timer: string }> {
  // Software adapters: fewer samples (a call takes seconds there).
  const rec = await net.planFor(size, false);
  const gpu: number[] = [];
  let timer = "wall";
  const slow = ctx.report.isFallback;
  for (let i = 0; i < (slow ? 3 : 7); i++) {
    const t = await timeComputePass(ctx, (pass) => rec.encode(pass));
    gpu.push(t.gpuMs ?? t.wallMs);
    if (t.gpuMs !== null) timer = "gpu timestamps";
  }
  const enc: number[] = [];
  for (let i = 0; i < (slow ? 5 : 30); i++) {
    const t = performance.now();
    rec.submit();
    enc.push(performance.now() - t);
  }
  await ctx.device.queue.onSubmittedWorkDone();
  return {
    gpuMs: median(gpu),
    encodeMs: median(enc),
    dispatches: rec.ops.length,
    timer: `GPU time: ${timer}, median of ${gpu.length}; encode + submit: median of ${enc.length}`,
  };
}

/**
 * Calls per second with `depth` calls kept in flight by an InferencePipeline for `budgetMs`, and
 * the host ms per call spent in the calls' synchronous part (GpuNet.hostTime).
 */
export async function pipelinedCallsPerS(
  net: GpuNet,
  b: NetBatch,
  depth: number,
  budgetMs: number,
): Promise<{ rate: number; hostMs: number }> {
  const pipe = new InferencePipeline(net, depth);
  let done = 0;
  const h0 = { ...net.hostTime };
  const t0 = performance.now();
  const worker = async () => {
    while (performance.now() - t0 < budgetMs) {
      await pipe.evaluateAsync(b);
      done++;
    }
  };
  await Promise.all(Array.from({ length: depth }, worker));
  const rate = done / ((performance.now() - t0) / 1000);
  const calls = net.hostTime.calls - h0.calls;
  return { rate, hostMs: calls ? (net.hostTime.ms - h0.ms) / calls : 0 };
}

/**
 * Legal moves a position of the bench's batches has where the net reads back compact (GpuNet's
 * compactWidth): Hive's range, 50-216 of 5,489 in random Base+MLP games of 10-100 plies.
 */
export const BENCH_LEGAL: readonly [number, number] = [50, 220];

/**
 * Cells a position of the bench's batches has off their planes' bases, as a share of its values:
 * 66-334 of Hive's 16,224, a mean of 200 as the real games' 594 positions (66-601), so that the
 * sparse upload carries Hive's bytes.
 */
export const BENCH_OFF_BASE: readonly [number, number] = [66 / 16_224, 334 / 16_224];

/**
 * A synthetic inference batch of `size` positions for `net`: BENCH_OFF_BASE of each position's
 * values multiples of 1/8 at random cells, 0 elsewhere; its planes f16 where the net takes them
 * so (halfPlanes), as the AlphaZero evaluator encodes them (`f32`: f32 planes regardless); where
 * the net reads back compact, BENCH_LEGAL legal moves a position, as Hive positions have (the
 * synthetic mask's 70 % would never fit), unless `full`.
 */
export function benchBatch(
  net: PolicyValueNet,
  size: number,
  { f32 = false, full = false }: { f32?: boolean; full?: boolean } = {},
): NetBatch {
  const b: NetBatch = syntheticBatch(net.config, size, 5);
  const c = net.config, per = c.planes * c.height * c.width, draw = rng(37);
  const planes = b.planes = new Float32Array(size * per);
  for (let p = 0; p < size; p++) {
    const share = BENCH_OFF_BASE[0] + draw() * (BENCH_OFF_BASE[1] - BENCH_OFF_BASE[0]);
    for (let k = Math.round(per * share); k > 0; k--) {
      planes[p * per + Math.floor(draw() * per)] = (1 + Math.floor(draw() * 8)) / 8;
    }
  }
  if (!full && ((net as { compactWidth?: number }).compactWidth ?? 0) > 0) {
    const next = rng(36), [lo, hi] = BENCH_LEGAL;
    b.mask = randomMask(
      size,
      net.config.moves,
      () => lo + Math.floor(next() * (hi - lo + 1)),
      next,
    );
  }
  if (!net.halfPlanes || f32 || !hasFloat16Array()) return b;
  return { ...b, planes: new Float16Array(b.planes) };
}

/** One row of the host-side profile table (see hostProfileTable). */
export type HostRow = (string | number | null)[];

/** The host-side profile table's title and columns around its rows. */
export function hostProfileTable(rows: HostRow[]) {
  return {
    title:
      "Host side of pipelined inference calls (GpuNet, N in flight), per call: map requests eager (each call maps right after its submit, as before session 17), deferred (a call's map is requested when the next call is encoded, or by a timer after about the GPU time; a call alone in flight maps at once in all modes; the default on hardware adapters in sessions 17-29) or grouped (deferred, but requested every second call while 4 or more are in flight; session 30, the default on hardware adapters). Host ms by phase are the JavaScript thread's time inside the calls; `drain` and `request` are map requests, which in Deno 2.9 wait for the GPU to finish every submitted call (a blocking device poll), so on hardware they hold GPU time, not host work. WebGPU API calls counted in a separate run.",
    columns: [
      "model",
      "batch",
      "in flight",
      "map requests",
      "ms per call (wall)",
      "calls per floor interval",
      "host ms, sync part",
      "upload",
      "encode",
      "drain",
      "submit",
      "request",
      "readout",
      "maps requested by the next call / by the timer",
      "API calls",
      "API calls by method",
    ],
    rows,
  };
}

/**
 * The host-side profile of `depth` pipelined calls of batch `b` for each map mode: ms per call,
 * host ms by phase (GpuNet.profileHost) over `budgetMs`, and WebGPU API calls per call counted
 * over a shorter run. Leaves the net in its own map mode.
 */
export async function hostProfileRows(
  net: GpuNet,
  b: NetBatch,
  depth: number,
  budgetMs: number,
  floorMs: number,
  model: string,
  rows: HostRow[],
): Promise<Map<MapMode, number>> {
  const own = net.mapMode;
  const perFloor = new Map<MapMode, number>();
  try {
    for (const mode of MAP_MODES) {
      net.setMapMode(mode);
      const c0 = net.hostTime.calls;
      const counter = countGpuCalls();
      let counts: Map<string, number>;
      try {
        await pipelinedCallsPerS(net, b, depth, Math.min(budgetMs, 200));
      } finally {
        counts = counter.stop();
      }
      const calls = Math.max(1, net.hostTime.calls - c0);
      const p = hostPhases();
      net.profileHost(p);
      let run: { rate: number; hostMs: number };
      try {
        run = await pipelinedCallsPerS(net, b, depth, budgetMs);
      } finally {
        net.profileHost(null);
      }
      const n = Math.max(1, p.calls);
      const total = [...counts.values()].reduce((a, v) => a + v, 0);
      const byMethod = [...counts].sort((x, y) => y[1] - x[1])
        .map(([k, v]) => `${k.replace(/^GPU/, "")} ${(v / calls).toFixed(1)}`).join(", ");
      perFloor.set(mode, run.rate * floorMs / 1000);
      rows.push([
        model,
        b.size,
        depth,
        mode,
        1000 / run.rate,
        run.rate * floorMs / 1000,
        run.hostMs,
        p.upload / n,
        p.encode / n,
        p.drain / n,
        p.submit / n,
        p.request / n,
        p.readout / n,
        mode !== "eager" ? `${p.byNext} / ${p.byTimer}` : "-",
        total / calls,
        byMethod,
      ]);
    }
  } finally {
    net.setMapMode(own);
  }
  return perFloor;
}
