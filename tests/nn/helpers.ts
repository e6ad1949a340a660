import assert from "node:assert/strict";
import type { NetConfig } from "../../src/nn/config.ts";
import { type CpuTensor, cpuTensor, numel, rng } from "../../src/nn/tensor.ts";
import type { WinoTuneResult } from "../../src/nn/gpu/winograd_tune.ts";
import type { GpuNet } from "../../src/nn/net.ts";

/** A two-block, 8-filter tower on a 7 x 7 board: the GPU network tests' small model. */
export const TINY_TOWER: NetConfig = {
  blocks: 2,
  filters: 8,
  planes: 4,
  height: 7,
  width: 7,
  moves: 12,
  valueHidden: 16,
};

/** A tensor of uniform values in [lo, hi) from a seed. */
export function randTensor(shape: number[], seed: number, lo = -1, hi = 1): CpuTensor {
  const next = rng(seed);
  const t = cpuTensor(shape);
  for (let i = 0; i < numel(shape); i++) t.data[i] = lo + (hi - lo) * next();
  return t;
}

/** sum(a * b) in double precision. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Largest absolute difference between two arrays. */
export function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Largest absolute value. */
export function maxAbs(a: Float32Array): number {
  return a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
}

/** Largest difference relative to max(1, the reference's largest magnitude). */
export function relErr(got: Float32Array, want: Float32Array): number {
  return maxDiff(got, want) / Math.max(1, maxAbs(want));
}

/**
 * Compares an analytic gradient with central finite differences of `loss` at up to `samples`
 * entries of `x`; returns the worst error relative to max(1, |gradient|).
 */
export function gradError(
  x: CpuTensor,
  grad: Float32Array,
  loss: () => number,
  samples = 24,
  eps = 1e-2,
): number {
  const next = rng(99);
  let worst = 0;
  const n = x.data.length;
  for (let s = 0; s < Math.min(samples, n); s++) {
    const i = n <= samples ? s : Math.floor(next() * n);
    const orig = x.data[i];
    x.data[i] = orig + eps;
    const up = loss();
    x.data[i] = orig - eps;
    const down = loss();
    x.data[i] = orig;
    const fd = (up - down) / (2 * eps);
    worst = Math.max(worst, Math.abs(fd - grad[i]) / Math.max(1, Math.abs(grad[i])));
  }
  return worst;
}

/** Awaits `p` and checks that it rejects with a message matching `re`. */
export async function rejectsWith(p: Promise<unknown>, re: RegExp): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.match((e as Error).message, re);
    return;
  }
  assert.fail(`expected a rejection matching ${re}`);
}

/** A tuner result for the 256 -> 256, 26 x 26 layer at batch 256 (tests of the readers of one). */
export function tuneResult(r: Partial<WinoTuneResult>): WinoTuneResult {
  return {
    adapter: "test",
    storage: "f32",
    shape: "test",
    dims: { n: 256, ci: 256, co: 256, h: 26, w: 26 },
    winner: "",
    timer: "test",
    timings: [],
    ...r,
  };
}

/** Asserts a network's probabilities and values within `tol` (largest difference) of `want`'s. */
export function assertOutputsNear(
  got: { probs: Float32Array; value: Float32Array },
  want: { probs: Float32Array; value: Float32Array },
  tol: number,
  what: string,
): void {
  assert.ok(maxDiff(got.probs, want.probs) < tol, `${what}: probs`);
  assert.ok(maxDiff(got.value, want.value) < tol, `${what}: value`);
}

/** The kernel labels of a GPU network's inference plan for batch `size`. */
export async function planLabels(net: GpuNet, size: number): Promise<string[]> {
  return (await net.planFor(size, false)).ops.map((o) => o.label);
}
