import type { GpuContext } from "./device.ts";
import { readBuffer } from "./buffers.ts";

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
  const enc = ctx.device.createCommandEncoder();
  let querySet: GPUQuerySet | null = null;
  let resolve: GPUBuffer | null = null;
  if (ctx.timestamps) {
    querySet = ctx.device.createQuerySet({ type: "timestamp", count: 2 });
    resolve = ctx.device.createBuffer({ size: 16, usage: 0x200 | 0x4 }); // QUERY_RESOLVE | COPY_SRC
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
  let gpuMs: number | null = null;
  if (resolve) {
    const t = new BigUint64Array(await readBuffer(ctx, resolve, 16));
    const ns = Number(t[1] - t[0]);
    gpuMs = ns > 0 ? ns / 1e6 : null;
    resolve.destroy();
    querySet?.destroy();
  } else {
    await ctx.device.queue.onSubmittedWorkDone();
  }
  return { gpuMs, wallMs: performance.now() - t0 };
}
