// What the GPU's timeline loses between one inference call's work and the next. Calls in flight at
// batch 256 ran about 2.1 ms a call slower than their plan's GPU time on the H200 (sessions 31 and
// 41), and neither grouped map requests nor inputs uploaded ahead changed it; the queue's copies
// explain 0.06 ms of it (copy_probe.ts). This times the same pass run twice, from the first's end
// to the second's start, three ways: both in one command buffer (the pass boundary alone), in two
// command buffers submitted together (the submit boundary: what the driver and the runtime add),
// and with a map request between the two submits (in Deno it waits for the queue to empty before
// it returns, so the second submit finds an idle GPU: the drain).
import type { GpuContext } from "./device.ts";
import { readBuffer } from "./buffers.ts";
import { withOwned } from "./owned.ts";
import { COPY_DST, COPY_SRC, MAP_READ, median, QUERY_RESOLVE, STORAGE } from "./copy_probe.ts";

/** GPU ms from one pass's end to the next's start (medians), by what separates them. */
export interface SubmitGaps {
  /** Two passes in one command buffer. */
  onePassBoundaryMs: number;
  /** Two command buffers, the second submitted while the first runs. */
  twoSubmitsMs: number;
  /** The same with a map request (a 4-byte readback) made between the two submits. */
  mapBetweenMs: number;
}

/**
 * Times the gaps around `record` (a pass's contents, e.g. a recorded plan) on an adapter with
 * timestamp queries (null without): `reps` of each kind, medians. About 6 * reps runs of the pass.
 */
export function submitGaps(
  ctx: GpuContext,
  record: (pass: GPUComputePassEncoder) => void,
  reps = 3,
): Promise<SubmitGaps | null> {
  if (!ctx.timestamps) return Promise.resolve(null);
  const device = ctx.device;
  return withOwned(async (own) => {
    const qs = own(device.createQuerySet({ type: "timestamp", count: 4 }));
    const resolve = own(device.createBuffer({ size: 32, usage: QUERY_RESOLVE | COPY_SRC }));
    const src = own(device.createBuffer({ size: 4, usage: STORAGE | COPY_SRC }));
    const staging = own(device.createBuffer({ size: 4, usage: MAP_READ | COPY_DST }));
    const pass = (enc: GPUCommandEncoder, first: number) => {
      const p = enc.beginComputePass({
        timestampWrites: {
          querySet: qs,
          beginningOfPassWriteIndex: first,
          endOfPassWriteIndex: first + 1,
        },
      });
      record(p);
      p.end();
    };
    // Both command buffers are encoded first, as a pipelined call's is before its submit.
    const gap = async (kind: keyof SubmitGaps): Promise<number> => {
      const a = device.createCommandEncoder();
      pass(a, 0);
      const b = kind === "onePassBoundaryMs" ? a : device.createCommandEncoder();
      if (kind === "mapBetweenMs") a.copyBufferToBuffer(src, 0, staging, 0, 4);
      pass(b, 2);
      b.resolveQuerySet(qs, 0, 4, resolve, 0);
      const first = a === b ? null : a.finish(), second = b.finish();
      let mapped: Promise<void> | null = null;
      if (first) {
        device.queue.submit([first]);
        if (kind === "mapBetweenMs") mapped = staging.mapAsync(MAP_READ);
      }
      device.queue.submit([second]);
      if (mapped) {
        await mapped;
        staging.unmap();
      }
      const t = new BigUint64Array(await readBuffer(ctx, resolve, 32));
      return Number(t[2] - t[1]) / 1e6;
    };
    const out: Partial<SubmitGaps> = {};
    for (const kind of ["onePassBoundaryMs", "twoSubmitsMs", "mapBetweenMs"] as const) {
      const xs: number[] = [];
      for (let r = 0; r < reps; r++) xs.push(await gap(kind));
      out[kind] = median(xs);
    }
    return out as SubmitGaps;
  });
}
