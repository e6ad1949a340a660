// The GPU resources of one tuning pass. A tuner times candidate kernels on scratch tensors and
// throw-away recorders; a pass can throw (a lost device, a failed readback), and its buffers must
// not then live on until the net is disposed.
import type { GpuContext } from "../../gpu/device.ts";
import { GpuRecorder } from "./backend.ts";
import type { NnKernels } from "./kernels.ts";
import { TensorPool } from "./tensor.ts";

/** A tuning pass's scratch: one tensor pool and the recorders made on it. */
export interface TuneScope {
  readonly pool: TensorPool;
  /** A new tiled recorder on the pool, destroyed with the scope. */
  recorder(): GpuRecorder;
}

/**
 * Runs one tuning pass and frees its pool and recorders when the pass ends, returned or thrown,
 * so no tuner leaks GPU buffers into the net's lifetime.
 */
export async function withTuneScope<T>(
  ctx: GpuContext,
  kernels: NnKernels,
  pass: (scope: TuneScope) => Promise<T>,
): Promise<T> {
  const pool = new TensorPool(ctx);
  const recs: GpuRecorder[] = [];
  const recorder = () => {
    const rec = new GpuRecorder(ctx, kernels, pool, true);
    recs.push(rec);
    return rec;
  };
  try {
    return await pass({ pool, recorder });
  } finally {
    for (const rec of recs) rec.destroy();
    pool.destroy();
  }
}
