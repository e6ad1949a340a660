import { KibitzError } from "../errors.ts";

/** Anything with a shape: CPU and GPU tensors both satisfy it, so the model graph is written once. */
export interface Shaped {
  readonly shape: readonly number[];
}

/** A host tensor: a shape and its f32 values in row-major (NCHW) order. */
export interface CpuTensor extends Shaped {
  readonly data: Float32Array;
}

/** Number of elements of a shape. */
export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** `[2, 3, 4]` -> `"2x3x4"`, for messages and checkpoint headers. */
export function shapeString(shape: readonly number[]): string {
  return shape.join("x");
}

/** True when two shapes are identical. */
export function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** Creates a host tensor, zero-filled or wrapping `data` (whose length must match the shape). */
export function cpuTensor(shape: readonly number[], data?: Float32Array): CpuTensor {
  const n = numel(shape);
  if (data && data.length !== n) {
    throw new KibitzError(
      "shape_mismatch",
      `tensor data has ${data.length} values, shape ${shapeString(shape)} needs ${n}`,
    );
  }
  return { shape: [...shape], data: data ?? new Float32Array(n) };
}

/** Throws a `shape_mismatch` error naming `what` unless the shapes agree. */
export function expectShape(what: string, got: readonly number[], want: readonly number[]): void {
  if (!sameShape(got, want)) {
    throw new KibitzError(
      "shape_mismatch",
      `${what}: shape ${shapeString(got)}, expected ${shapeString(want)}`,
    );
  }
}

/** A small seeded PRNG (mulberry32) so weight init and synthetic data are deterministic. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples from a uniform source (Box-Muller). */
export function gaussian(next: () => number): () => number {
  return () => {
    const u = Math.max(next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
  };
}
