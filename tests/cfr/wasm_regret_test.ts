import assert from "node:assert/strict";
import {
  regretKernel,
  UPDATE_DCFR,
  UPDATE_PLUS,
  UPDATE_STRATEGY,
} from "../../src/cfr/wasm/regret.ts";
import { createQuantStore } from "../../src/quant/store.ts";
import { updateBlock } from "../../src/quant/update.ts";

/** CfrSolver.current's f32 loop, as the twin the kernel must equal bit for bit. */
function twin(src: Float32Array, off: number, A: number, H: number, sig: Float32Array): void {
  const sum = new Float64Array(H), den = new Float64Array(H);
  for (let a = 0; a < A; a++) {
    for (let h = 0; h < H; h++) {
      const r = src[off + a * H + h];
      sum[h] = Math.fround(sum[h] + (r + Math.abs(r)) * 0.5); // f32 sums, as CfrSolver.current
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
    for (
      const [A, H] of [[1, 1], [2, 3], [3, 4], [5, 7], [4, 1001], [7, 64], [2, 1326], [3, 10], [
        3,
        251,
      ]]
    ) {
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

Deno.test({
  name:
    "wasm: the fused f32 update equals quant/update.ts bit for bit (dcfr, plus, strategy) and refuses non-finite results untouched",
  ignore: regretKernel() === null,
  fn() {
    const k = regretKernel()!;
    let seed = 9;
    const rand = () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32;
    const blocks = [5, 1, 4, 1003, 64, 7];
    const ops = [
      [UPDATE_DCFR, "dcfr", 0.93, 0.5],
      [UPDATE_PLUS, "plus", 0.97, 0],
      [UPDATE_STRATEGY, "strategy", 0.81, 1.7],
    ] as const;
    for (const [op, name, a, c] of ops) {
      const ts = createQuantStore("f32", blocks), wa = createQuantStore("f32", blocks);
      for (let i = 0; i < ts.f32!.length; i++) ts.f32![i] = wa.f32![i] = (rand() - 0.5) * 100;
      for (let b = 0; b < blocks.length; b++) {
        const input = Float32Array.from({ length: blocks[b] }, () => (rand() - 0.45) * 10);
        updateBlock(ts, b, name, input, 0, a, c, { seed: 1, iteration: 1 });
        assert.ok(k.update(wa.f32!, wa.offsets, b, op, input, a, c));
      }
      assert.deepEqual(wa.f32, ts.f32, name);
    }
    const st = createQuantStore("f32", [6]);
    st.f32!.fill(1);
    const bad = new Float32Array(6).fill(1);
    bad[4] = Infinity;
    assert.equal(k.update(st.f32!, st.offsets, 0, UPDATE_DCFR, bad, 1, 1), false);
    assert.deepEqual([...st.f32!], [1, 1, 1, 1, 1, 1]);
  },
});

Deno.test({
  name:
    "wasm: the fused traverser step refuses a non-finite result (NaN or infinity, in a four-hand chunk or the tail) untouched",
  ignore: regretKernel() === null,
  fn() {
    const k = regretKernel()!;
    const A = 2, H = 6; // hands 0-3 in a chunk, 4-5 in the scalar tail
    for (const bad of [NaN, Infinity, -Infinity]) {
      for (const at of [0, 2, 4, 5, H + 3]) {
        const sig = new Float32Array(A * H).fill(0.5), vals = new Float32Array(A * H).fill(1);
        const act = new Uint8Array(H).fill(1), out = new Float32Array(H).fill(7);
        const reg = new Float32Array(A * H).fill(2), strat = new Float32Array(A * H).fill(3);
        vals[at] = bad;
        assert.equal(
          k.traverserDcfr(sig, vals, act, out, 0, reg, strat, 0, A, H, 0.9, 0.5, 0.8),
          false,
          `${bad} at ${at}`,
        );
        assert.deepEqual([...reg, ...strat, ...out], [
          ...new Array(A * H).fill(2),
          ...new Array(A * H).fill(3),
          ...new Array(H).fill(7),
        ]);
      }
      const sig = new Float32Array(A * H).fill(0.5), vals = new Float32Array(A * H).fill(1);
      const reg = new Float32Array(A * H).fill(2), strat = new Float32Array(A * H).fill(3);
      const ok = k.traverserDcfr(
        sig,
        vals,
        new Uint8Array(H).fill(1),
        new Float32Array(H),
        0,
        reg,
        strat,
        0,
        A,
        H,
        0.9,
        0.5,
        0.8,
      );
      assert.equal(ok, true, "finite values pass");
    }
  },
});
