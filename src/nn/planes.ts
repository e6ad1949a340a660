// A batch's input planes: f32, or f16 (Float16Array) written by a caller that encodes positions
// straight into half precision. An f16 inference plan casts its input to f16 before the stem
// anyway, so f16 planes give it the same values at half the upload (batch 256 of the Hive net:
// 8.3 MB a call instead of 16.6, copied on the GPU's queue between calls) and no cast dispatch;
// every other consumer (the CPU, f32 plans, training) takes them converted to f32.

/** Input planes as a caller hands them to a network. */
export type Planes = Float32Array | Float16Array;

/** Whether the runtime has Float16Array (Deno 2.9, Chromium 135, Firefox 129, Safari 18.2). */
export function hasFloat16Array(): boolean {
  return typeof Float16Array !== "undefined";
}

/** Whether `p` holds halves. */
export function isHalfPlanes(p: Planes): p is Float16Array {
  return hasFloat16Array() && p instanceof Float16Array;
}

/** The planes as f32: `p` itself where it is f32, else a converted copy (exact: f16 widens). */
export function planesF32(p: Planes): Float32Array {
  return isHalfPlanes(p) ? new Float32Array(p) : p;
}

/** The halves' bits, for an upload into an f16 buffer (a view, no copy). */
export function halfBits(p: Float16Array): Uint16Array {
  return new Uint16Array(p.buffer, p.byteOffset, p.length);
}

/**
 * A zeroed planes array of `n` values: f16 where `half` and the runtime has Float16Array, else
 * f32 (what a batch for a network with `halfPlanes` should be encoded into).
 */
export function allocPlanes(n: number, half: boolean): Planes {
  return half && hasFloat16Array() ? new Float16Array(n) : new Float32Array(n);
}
