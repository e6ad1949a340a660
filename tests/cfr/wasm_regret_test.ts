import assert from "node:assert/strict";
import { regretKernel } from "../../src/cfr/wasm/regret.ts";

/** CfrSolver.current's f32 loop, as the twin the kernel must equal bit for bit. */
function twin(src: Float32Array, off: number, A: number, H: number, sig: Float32Array): void {
  const sum = new Float64Array(H), den = new Float64Array(H);
  for (let a = 0; a < A; a++) {
    for (let h = 0; h < H; h++) {
      const r = src[off + a * H + h];
      sum[h] += (r + Math.abs(r)) * 0.5;
    }
  }
  for (let h = 0; h < H; h++) {
    const s = sum[h];
    if (s > 0) den[h] = s, sum[h] = 0;
    else den[h] = Infinity, sum[h] = 1 / A;
  }
  for (let a = 0; a < A; a++) {
    for (let h = 0; h < H; h++) {
      const r = src[off + a * H + h];
      sig[a * H + h] = ((r + Math.abs(r)) * 0.5) / den[h] + sum[h];
    }
  }
}

Deno.test({
  name: "wasm: regret matching is bit-identical to the TypeScript loop (shapes, signs, zeros, -0)",
  ignore: regretKernel() === null,
  fn() {
    const k = regretKernel()!;
    let seed = 5;
    const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    for (const [A, H] of [[1, 1], [2, 3], [3, 4], [5, 7], [4, 1001], [7, 64], [2, 1326]]) {
      const off = 3;
      const src = new Float32Array(off + A * H);
      for (let i = off; i < src.length; i++) {
        const u = rand();
        src[i] = u < 0.15 ? 0 : u < 0.2 ? -0 : u < 0.3 ? 1e-30 * rand() : (rand() - 0.6) * 1e3;
      }
      // Some hands with no positive regret at all (the uniform branch).
      for (let a = 0; a < A; a++) src[off + a * H] = -1;
      const want = new Float32Array(A * H), got = new Float32Array(A * H).fill(9);
      twin(src, off, A, H, want);
      k.match(src, off, A, H, got);
      assert.deepEqual(got, want, `A ${A} H ${H}`);
    }
  },
});
