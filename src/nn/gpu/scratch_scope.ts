// The GPU scratch of one pass that is not part of a net's plan: a tuner timing candidate kernels,
// or a parity check running two kernels on the same random operands. Such a pass can throw, and its
// pool, recorders and buffers must not then live on until the device is dropped.
import type { GpuContext } from "../../gpu/device.ts";
import { type Own, withOwned } from "../../gpu/owned.ts";
import { GpuRecorder } from "./backend.ts";
import type { NnKernels } from "./kernels.ts";
import { TensorPool } from "./tensor.ts";

/** A pass's scratch: one tensor pool, the recorders made on it and the buffers it owns. */
export interface ScratchScope {
  readonly pool: TensorPool;
  /** A new recorder on the pool (tiled unless told), destroyed with the scope. */
  recorder(tiled?: boolean): GpuRecorder;
  /** Hands a buffer (or anything destroyable) to the scope, which destroys it at the end. */
  own: Own;
}

/**
 * Runs one pass and frees its pool, recorders and owned buffers when the pass ends, returned or
 * thrown, so no tuner or check leaks GPU buffers past its own end.
 */
export function withScratch<T>(
  ctx: GpuContext,
  kernels: NnKernels,
  pass: (scope: ScratchScope) => Promise<T>,
): Promise<T> {
  return withOwned((own) => {
    const pool = own(new TensorPool(ctx));
    const recorder = (tiled = true) => own(new GpuRecorder(ctx, kernels, pool, tiled));
    return pass({ pool, recorder, own });
  });
}
