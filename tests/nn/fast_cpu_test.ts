// The fast CPU ops (src/nn/cpu/fast.ts), the fast backend and the one-position inference path
// against the reference ops they replace: same values up to f32 rounding, on random tensors with
// odd sizes (1x1 and 3x3 kernels, batches that are not a multiple of the unrolling) and on whole
// training steps of a small Hive-shaped network.
import assert from "node:assert/strict";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { linear, linearBackward } from "../../src/nn/cpu/linear.ts";
import {
  conv2dBackwardInputFast,
  conv2dBackwardWeightFast,
  conv2dFast,
  linearBackwardFast,
  linearFast,
} from "../../src/nn/cpu/fast.ts";
import { dot, dotPair, FastInference } from "../../src/nn/cpu/fast_infer.ts";
import {
  conv2dBackwardInputSimd,
  conv2dBackwardWeightSimd,
  conv2dSimd,
  convSimdEnabled,
  type ResidualBlockWeights,
  residualTowerSimd,
} from "../../src/nn/cpu/conv_simd.ts";
import { NN_KERNELS } from "../../src/nn/cpu/wasm_build.ts";
import { kernelSource, sourceHash } from "../../src/cfr/wasm/build.ts";
import * as convWasm from "../../src/nn/cpu/conv_wasm.ts";
import * as denseWasm from "../../src/nn/cpu/dense_wasm.ts";
import { DenseRows } from "../../src/nn/cpu/dense_simd.ts";
import { FastCpuBackend } from "../../src/nn/cpu_backend.ts";
import { CpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import type { NetConfig } from "../../src/nn/config.ts";

const next = rng(7);
const rand = (shape: number[], scale = 1): CpuTensor => {
  const t = cpuTensor(shape);
  for (let i = 0; i < t.data.length; i++) t.data[i] = (next() * 2 - 1) * scale;
  return t;
};

function close(got: ArrayLike<number>, want: ArrayLike<number>, what: string, tol = 1e-4): void {
  assert.equal(got.length, want.length, `${what}: length`);
  let scale = 1e-6;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  for (let i = 0; i < want.length; i++) {
    assert.ok(
      Math.abs(got[i] - want[i]) <= tol * scale,
      `${what}[${i}]: ${got[i]}, want ${want[i]} (scale ${scale})`,
    );
  }
}

Deno.test("conv2dFast and its backward match the reference ops (3x3 and 1x1, batch 3)", () => {
  for (const k of [3, 1]) {
    const x = rand([3, 5, 7, 6]), w = rand([4, 5, k, k]), dy = rand([3, 4, 7, 6]);
    close(conv2dFast(x, w).data, conv2d(x, w).data, `conv k${k}`);
    close(conv2dBackwardInputFast(dy, w).data, conv2dBackwardInput(dy, w).data, `dx k${k}`);
    const dw = rand([4, 5, k, k]); // overwritten, not accumulated into
    conv2dBackwardWeightFast(x, dy, dw);
    close(dw.data, conv2dBackwardWeight(x, dy, k).data, `dw k${k}`);
    const bias = rand([4]), res = rand([3, 4, 7, 6]);
    close(
      conv2dFast(x, w, bias.data, res.data, true).data,
      convFused(x, w, bias, res, true).data,
      `fused k${k}`,
    );
  }
});

Deno.test("conv2dSimd and its backward match the reference ops (3x3, 1x1, 5x5; odd widths)", () => {
  // Runs the TypeScript twins where WebAssembly SIMD is missing; both must match the reference.
  for (const [k, h, w] of [[3, 7, 6], [1, 5, 9], [5, 6, 5], [3, 26, 26]]) {
    const x = rand([2, 3, h, w]), wt = rand([5, 3, k, k]), dy = rand([2, 5, h, w]);
    close(conv2dSimd(x, wt).data, conv2d(x, wt).data, `simd conv k${k}`);
    close(conv2dBackwardInputSimd(dy, wt).data, conv2dBackwardInput(dy, wt).data, `simd dx k${k}`);
    const dw = rand([5, 3, k, k]);
    conv2dBackwardWeightSimd(x, dy, dw);
    close(dw.data, conv2dBackwardWeight(x, dy, k).data, `simd dw k${k}`);
    const bias = rand([5]), res = rand([2, 5, h, w]);
    close(
      conv2dSimd(x, wt, bias.data, res.data, true).data,
      convFused(x, wt, bias, res, true).data,
      `simd fused k${k}`,
    );
  }
});

Deno.test("conv2dSimd epilogues (bias or none, residual, ReLU) match the reference, batch 3", () => {
  // The Wasm epilogue (convFinish) and the Wasm padding/unpadding of planes on odd shapes.
  for (const [k, ci, co, h, w] of [[3, 7, 5, 6, 9], [1, 4, 6, 5, 3], [3, 16, 16, 26, 26]]) {
    const x = rand([3, ci, h, w]), wt = rand([co, ci, k, k]), res = rand([3, co, h, w]);
    for (const bias of [null, rand([co])]) {
      for (const [r, relu] of [[false, true], [true, false], [true, true]]) {
        close(
          conv2dSimd(x, wt, bias?.data ?? null, r ? res.data : null, relu).data,
          convFused(x, wt, bias ?? cpuTensor([co]), r ? res : null, relu).data,
          `k${k} ${ci}->${co} ${h}x${w} bias ${!!bias} res ${r} relu ${relu}`,
        );
      }
    }
  }
});

Deno.test("residualTowerSimd matches the reference tower and the conv2dSimd calls it replaces", () => {
  // Channel counts on and off a multiple of 4, batches > 1, odd sizes; 1 x 1 blocks take the
  // conv2dSimd fallback. Any error in the padded layout (a scratch column or pad row left
  // non-zero, an output written one cell off, the residual read from the wrong plane) changes
  // the border or every output.
  // [batch, channels, height, width, blocks, kernel size]
  const shapes = [[1, 16, 26, 26, 2, 3], [3, 5, 7, 6, 2, 3], [2, 8, 4, 9, 1, 3]];
  shapes.push([2, 3, 5, 5, 2, 1]);
  for (const [n, c, h, w, nb, k] of shapes) {
    const x = rand([n, c, h, w]);
    const blocks: ResidualBlockWeights[] = [];
    for (let i = 0; i < nb; i++) {
      const s = 1 / Math.sqrt(c * k * k);
      blocks.push({
        w1: rand([c, c, k, k], s),
        b1: rand([c], 0.2).data,
        w2: rand([c, c, k, k], s),
        b2: rand([c], 0.2).data,
      });
    }
    let want = x, chain = x;
    for (const b of blocks) {
      const b1 = cpuTensor([c], b.b1), b2 = cpuTensor([c], b.b2);
      want = convFused(convFused(want, b.w1, b1, null, true), b.w2, b2, want, true);
      chain = conv2dSimd(conv2dSimd(chain, b.w1, b.b1, null, true), b.w2, b.b2, chain.data, true);
    }
    const got = residualTowerSimd(x, blocks);
    assert.deepEqual(got.shape, [n, c, h, w]);
    const what = `tower n${n} c${c} ${h}x${w} blocks ${nb} k${k}`;
    close(got.data, want.data, what);
    // The same sums in the same order as the per-layer calls: equal to the bit.
    assert.deepEqual(got.data, chain.data, `${what}: vs conv2dSimd calls`);
    let zeros = 0;
    for (const v of got.data) if (v === 0) zeros++;
    assert.ok(zeros > 0 && zeros < got.data.length, `${what}: ReLU clipped some outputs`);
  }
});

Deno.test("nn Wasm kernels (conv, dense): the committed modules were built from the current sources", async () => {
  assert.ok(convSimdEnabled(), "Deno 2 has WebAssembly SIMD: the kernel should run here");
  const built: Record<string, string> = {
    conv: convWasm.SOURCE_SHA256,
    dense: denseWasm.SOURCE_SHA256,
  };
  for (const k of NN_KERNELS) {
    const text = await Deno.readTextFile(kernelSource(k));
    assert.equal(built[k.name], await sourceHash(text), `${k.name}: deno task build-wasm`);
  }
});

Deno.test("linearFast (all and masked outputs) and its backward match the reference", () => {
  const x = rand([6, 2, 3, 3]), w = rand([11, 18]), b = rand([11]);
  const want = linear(x, w, b);
  close(linearFast(x, w, b).data, want.data, "linear");
  const only = new Float32Array(6 * 11).map(() => next() < 0.3 ? 1 : 0);
  const got = linearFast(x, w, b, only);
  for (let i = 0; i < only.length; i++) {
    assert.ok(only[i] > 0 ? Math.abs(got.data[i] - want.data[i]) < 1e-4 : got.data[i] === 0);
  }
  const dy = rand([6, 11]);
  for (let i = 0; i < dy.data.length; i += 3) dy.data[i] = 0; // skipped rows must still be right
  const r = linearBackward(x, w, dy);
  const dw = rand([11, 18]), db = rand([11]);
  const dx = linearBackwardFast(x, w, dy, dw, db, true)!;
  close(dx.data, r.dx.data, "dx");
  close(dw.data, r.dw.data, "dw");
  close(db.data, r.db.data, "db");
  assert.deepEqual(dx.shape, x.shape);
});

const SMALL: NetConfig = {
  blocks: 2,
  filters: 6,
  planes: 5,
  height: 7,
  width: 7,
  moves: 40,
  valueHidden: 8,
};

function batch(n: number, cfg: NetConfig) {
  const planes = rand([n * cfg.planes * cfg.height * cfg.width]).data.map((v) => v > 0.6 ? 1 : 0);
  const mask = new Float32Array(n * cfg.moves), policy = new Float32Array(n * cfg.moves);
  const value = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    for (let m = 0; m < cfg.moves; m++) if (next() < 0.3 || m === r) mask[r * cfg.moves + m] = 1;
    policy[r * cfg.moves + r] = 1;
    value[r] = r % 3 - 1;
  }
  return { size: n, planes, mask, policy, value };
}

Deno.test("CpuNet on FastCpuBackend: training steps and inference track the reference net", async () => {
  const w = initWeights(SMALL, 3);
  const ref = new CpuNet(w), fast = new CpuNet(w, new FastCpuBackend());
  const hyper = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
  for (let s = 0; s < 3; s++) {
    const b = batch(5, SMALL);
    const a = await ref.trainStep(b, hyper), f = await fast.trainStep(b, hyper);
    close([f.policyLoss, f.valueLoss, f.l2], [a.policyLoss, a.valueLoss, a.l2], `step ${s}`, 1e-4);
  }
  const b = batch(4, SMALL);
  const a = await ref.infer(b), f = await fast.infer(b);
  close(f.probs, a.probs, "probs");
  close(f.value, a.value, "value");
  const wa = await ref.weights(), wf = await fast.weights();
  for (const [name, t] of wa.tensors) close(wf.tensors.get(name)!.data, t.data, name, 1e-3);
});

Deno.test("FastInference: priors over the asked moves and value equal the reference pass", async () => {
  const w = initWeights(SMALL, 5);
  // Give the batch norms non-trivial running statistics so that folding is exercised.
  const net = new CpuNet(w, new FastCpuBackend());
  for (let s = 0; s < 2; s++) {
    await net.trainStep(batch(4, SMALL), { lr: 0.05, momentum: 0.9, weightDecay: 0 });
  }
  const trained = await net.weights();
  const fast = new FastInference(trained), ref = new CpuNet(trained);
  const b = batch(3, SMALL);
  const out = await ref.infer(b);
  const per = SMALL.planes * SMALL.height * SMALL.width;
  for (let r = 0; r < 3; r++) {
    const moves: number[] = [];
    for (let m = 0; m < SMALL.moves; m++) if (b.mask[r * SMALL.moves + m] > 0) moves.push(m);
    const priors = new Float32Array(moves.length);
    const v = fast.evaluate(b.planes, r * per, moves, priors);
    close([v], [out.value[r]], `value ${r}`);
    close(priors, moves.map((m) => out.probs[r * SMALL.moves + m]), `priors ${r}`);
  }
  assert.throws(() => fast.evaluate(b.planes, 0, [SMALL.moves], new Float32Array(1)), /outside/);
});

Deno.test("DenseRows (Wasm): every row's sum has dot's bits", () => {
  const r = rng(23);
  const value = () => (r() * 2 - 1) * 2 ** Math.floor(r() * 40 - 20);
  for (const [rows, n] of [[64, 676], [3, 7], [5, 1], [2, 8]]) {
    const w = new Float32Array(rows * n).map(value), x = new Float32Array(n + 3).map(value);
    const d = DenseRows.create(w, rows, n);
    assert.ok(d, "Deno 2 has WebAssembly SIMD: the kernel should run here");
    const out = new Float64Array(rows);
    for (const xo of [0, 3]) {
      d.run(x, xo, out);
      for (let o = 0; o < rows; o++) {
        assert.equal(out[o], dot(w, o * n, x, xo, n), `${rows}x${n} row ${o}`);
      }
    }
  }
});

Deno.test("dotPair: both rows' sums have dot's bits", () => {
  const r = rng(17);
  // Magnitudes from 2^-20 to 2^20, so that any other order of the adds rounds differently.
  const value = () => (r() * 2 - 1) * 2 ** Math.floor(r() * 40 - 20);
  for (const n of [1, 3, 4, 7, 676, 677]) {
    const a = new Float32Array(2 * n + 5).map(value);
    const b = new Float32Array(n + 2).map(value);
    const out = new Float64Array(2), bo = 2 - (n % 2);
    dotPair(a, 1, n + 3, b, bo, n, out);
    assert.equal(out[0], dot(a, 1, b, bo, n), `row 1, n ${n}`);
    assert.equal(out[1], dot(a, n + 3, b, bo, n), `row 2, n ${n}`);
  }
});
