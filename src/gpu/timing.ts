import type { GpuContext } from "./device.ts";
import { readBuffer } from "./buffers.ts";
import { withOwned } from "./owned.ts";
import { withValidation } from "./error_scope.ts";
import { KibitzError } from "../errors.ts";

/** Result of a timed GPU run: GPU-side nanoseconds when timestamp queries exist, wall time always. */
export interface GpuTiming {
  gpuMs: number | null;
  wallMs: number;
}

/** Runs `record` inside one compute pass bracketed by timestamps, submits, waits, and reports the time. */
export async function timeComputePass(
  ctx: GpuContext,
  record: (pass: GPUComputePassEncoder) => void,
): Promise<GpuTiming> {
  const t0 = performance.now();
  const gpuMs = await withOwned(async (own) => {
    const enc = ctx.device.createCommandEncoder();
    let querySet: GPUQuerySet | null = null;
    let resolve: GPUBuffer | null = null;
    if (ctx.timestamps) {
      querySet = own(ctx.device.createQuerySet({ type: "timestamp", count: 2 }));
      // QUERY_RESOLVE | COPY_SRC
      resolve = own(ctx.device.createBuffer({ size: 16, usage: 0x200 | 0x4 }));
    }
    const pass = enc.beginComputePass(
      querySet
        ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } }
        : {},
    );
    record(pass);
    pass.end();
    if (querySet && resolve) enc.resolveQuerySet(querySet, 0, 2, resolve, 0);
    ctx.device.queue.submit([enc.finish()]);
    if (!resolve) {
      await ctx.device.queue.onSubmittedWorkDone();
      return null;
    }
    const t = new BigUint64Array(await readBuffer(ctx, resolve, 16));
    const ns = Number(t[1] - t[0]);
    return ns > 0 ? ns / 1e6 : null;
  });
  return { gpuMs, wallMs: performance.now() - t0 };
}

/** GPU ms of each pass of a sequence run in one submit (null without timestamp queries). */
export interface GpuPassTimings {
  passMs: (number | null)[];
  wallMs: number;
}

/** Timestamp slots per query set (WebGPU caps a query set at 4096 queries). */
const QUERY_CHUNK = 4096;

/**
 * Encodes each of `records` as its own compute pass bracketed by timestamps, all in one command
 * encoder and one submit, so every pass runs in sequence after the previous one (what a plan
 * does) and its GPU time is read separately: per-op or per-phase GPU time of a recorded plan.
 */
export async function timeComputePasses(
  ctx: GpuContext,
  records: ((pass: GPUComputePassEncoder) => void)[],
): Promise<GpuPassTimings> {
  const t0 = performance.now();
  const passMs: (number | null)[] = records.map(() => null);
  await withOwned(async (own) => {
    const enc = ctx.device.createCommandEncoder();
    const sets: { qs: GPUQuerySet; count: number; resolve: GPUBuffer }[] = [];
    const perSet = QUERY_CHUNK / 2;
    records.forEach((record, i) => {
      let ts: GPUComputePassTimestampWrites | undefined;
      if (ctx.timestamps) {
        if (i % perSet === 0) {
          const count = 2 * Math.min(perSet, records.length - i);
          sets.push({
            qs: own(ctx.device.createQuerySet({ type: "timestamp", count })),
            count,
            resolve: own(ctx.device.createBuffer({ size: 8 * count, usage: 0x200 | 0x4 })),
          });
        }
        const slot = 2 * (i % perSet);
        ts = {
          querySet: sets[sets.length - 1].qs,
          beginningOfPassWriteIndex: slot,
          endOfPassWriteIndex: slot + 1,
        };
      }
      const pass = enc.beginComputePass(ts ? { timestampWrites: ts } : {});
      record(pass);
      pass.end();
    });
    for (const s of sets) enc.resolveQuerySet(s.qs, 0, s.count, s.resolve, 0);
    ctx.device.queue.submit([enc.finish()]);
    if (!sets.length) {
      await ctx.device.queue.onSubmittedWorkDone();
      return;
    }
    const data = await Promise.all(sets.map((s) => readBuffer(ctx, s.resolve, 8 * s.count)));
    data.forEach((buf, k) => {
      const t = new BigUint64Array(buf);
      for (let j = 0; 2 * j < t.length; j++) {
        const ns = Number(t[2 * j + 1] - t[2 * j]);
        passMs[k * perSet + j] = ns >= 0 ? ns / 1e6 : null;
      }
    });
  });
  return { passMs, wallMs: performance.now() - t0 };
}

/**
 * Times the pass `record` encodes, best of three after one untimed run (in a validation error
 * scope: an invalid pipeline or binding throws, naming `what`, instead of timing nothing):
 * GPU ms by timestamps where the adapter has them, else wall ms.
 */
export async function bestOfThreePasses(
  ctx: GpuContext,
  what: string,
  record: (pass: GPUComputePassEncoder) => void,
): Promise<{ ms: number; timer: string }> {
  // The pass is encoded and submitted before timeComputePass first yields: the scope covers that
  // and is popped at once; the run's readback is awaited outside it (a handler is attached at once
  // so that a failed readback is not reported as unhandled while the scope is popped).
  const { value: run, error } = await withValidation(ctx, () => {
    const p = timeComputePass(ctx, record);
    p.catch(() => null);
    return { p };
  });
  if (error) throw new KibitzError("shader_error", `${what}: ${error.message}`);
  await run.p;
  let best = Infinity, timer = "wall";
  for (let s = 0; s < 3; s++) {
    const t = await timeComputePass(ctx, record);
    if (t.gpuMs !== null) timer = "gpu timestamps";
    best = Math.min(best, t.gpuMs ?? t.wallMs);
  }
  return { ms: best, timer: `${timer}, best of 3` };
}
