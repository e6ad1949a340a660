// Winograd F(2x2,3x3), F(4x4,3x3), F(6x6,3x3) and F(7x7,3x3): the CPU twin against the direct
// convolution, the GPU transforms + batched GEMM (tiled kernels; test tiles on a software adapter)
// against the CPU direct convolution with the fused epilogue, the fused network with Winograd
// forced against the CPU reference, the Toom-Cook matrices, and the selection table.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { ensureWinogradTile } from "../../src/nn/gpu/f16.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import {
  chooseWinograd,
  type Matrices,
  parseWinograd,
  toomCook,
  winogradConv2d,
  winogradMatrices,
  type WinogradTile,
  winogradTile,
} from "../../src/nn/winograd.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { maxDiff, randTensor, relErr, TINY_TOWER } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const software = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const tiles = software ? TEST_TILES : HARDWARE_TILES;

Deno.test("CPU Winograd F(2x2), F(4x4), F(6x6), F(7x7) equal the direct convolution (odd sizes too)", () => {
  for (const [n, ci, co, h, w] of [[2, 3, 4, 6, 6], [1, 5, 2, 7, 5], [1, 4, 3, 9, 10]]) {
    const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, 3, 3], 2);
    const want = conv2d(x, wt).data;
    for (const m of [2, 4, 6, 7] as const) {
      const e = relErr(winogradConv2d(x, wt, m).data, want);
      assert.ok(e < 1e-6, `F(${m}x${m}) ${[n, ci, co, h, w]}: ${e}`);
    }
  }
});

/** GPU Winograd conv with the fused epilogue; returns y = relu(conv + bias + res). */
async function gpuWinograd(
  m: WinogradTile,
  x: CpuTensor,
  w: CpuTensor,
  bias: CpuTensor,
  res: CpuTensor,
): Promise<Float32Array> {
  const pool = new TensorPool(ctx!);
  const kernels = await loadKernels(ctx!, tiles, "tiled");
  await ensureWinogradTile(ctx!, kernels, null, m);
  const r = new GpuRecorder(ctx!, kernels, pool, true);
  r.winograd = m;
  const [gx, gw, gb, gr] = [x, w, bias, res].map((t) => uploadTensor(ctx!, t.shape, t.data));
  const [co, ci] = w.shape;
  const u = pool.acquire([(m + 2) * (m + 2), co, ci]);
  r.winogradFilter(gw, u, m);
  const before = r.ops.length;
  const y = r.convFused(gx, gw, gb, gr, true, u);
  assert.ok(
    r.ops.slice(before).some((o) => o.label === `winogradOutput${m}`),
    "Winograd path taken",
  );
  r.submit();
  const [got] = await readTensors(ctx!, [y]);
  r.destroy();
  pool.destroy();
  for (const t of [gx, gw, gb, gr]) t.buffer.destroy();
  return got;
}

const CASES = [[2, 6, 70, 6, 6], [1, 5, 3, 7, 5], [2, 16, 20, 9, 11]];
for (const m of [2, 4, 6, 7] as const) {
  Deno.test(
    `GPU Winograd F(${m}x${m},3x3) (transforms, batched GEMM, fused epilogue) matches CPU`,
    opts,
    async () => {
      for (const [n, ci, co, h, w] of CASES) {
        const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, 3, 3], 2);
        const bias = randTensor([co], 3), res = randTensor([n, co, h, w], 4);
        const got = await gpuWinograd(m, x, wt, bias, res);
        const e = relErr(got, convFused(x, wt, bias, res, true).data);
        assert.ok(e < 1e-4, `F(${m}x${m}) ${[n, ci, co, h, w]}: relative error ${e}`);
      }
    },
  );
}

Deno.test(
  "GPU Winograd error against the direct convolution at 128 channels, 26 x 26 (logged)",
  opts,
  async () => {
    const x = randTensor([1, 128, 26, 26], 5), wt = randTensor([128, 128, 3, 3], 6, -0.1, 0.1);
    const bias = randTensor([128], 7, 0, 0), res = randTensor([1, 128, 26, 26], 8, 0, 0);
    const want = convFused(x, wt, bias, null, true).data;
    for (const m of [2, 4, 6, 7] as const) {
      const e = relErr(await gpuWinograd(m, x, wt, bias, res), want);
      console.log(
        `F(${m}x${m},3x3) max |winograd - direct| / max(1, max |direct|) = ${e.toExponential(2)}`,
      );
      // F(7x7): 6.4e-5 with its points, 4.9e-4 with F(6x6)'s and -1/4.
      assert.ok(e < (m === 2 ? 1e-5 : m === 7 ? 2e-4 : 1e-4), `F(${m}x${m}): ${e}`);
    }
  },
);

const cfg: NetConfig = TINY_TOWER;
Deno.test(
  "fused GPU network with Winograd forced (F(2x2), F(4x4), F(6x6), F(7x7)) matches the CPU reference, also after a training step",
  opts,
  async () => {
    const w = initWeights(cfg, 9);
    const cpu = new CpuNet(w);
    const nets = await Promise.all(
      ([2, 4, 6, 7] as const).map((m) =>
        GpuNet.create(ctx!, w, { tiled: true, tiles, fused: true, winograd: m })
      ),
    );
    const batch = syntheticBatch(cfg, 3, 6), h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    for (let round = 0; round < 2; round++) {
      const want = await cpu.infer(batch);
      for (const net of nets) {
        const got = await net.infer(batch);
        assert.ok(maxDiff(got.probs, want.probs) < 1e-5, `round ${round} ${net.winograd} probs`);
        assert.ok(maxDiff(got.value, want.value) < 1e-5, `round ${round} ${net.winograd} value`);
        await net.trainStep(syntheticBatch(cfg, 2, 30), h);
      }
      await cpu.trainStep(syntheticBatch(cfg, 2, 30), h);
    }
    for (const net of nets) net.dispose();
  },
);

Deno.test("Winograd selection table and settings", () => {
  assert.equal(chooseWinograd("auto", 256, 26, 26, 256, 256), 4);
  assert.equal(chooseWinograd("auto", 64, 26, 26, 256, 256), 4);
  assert.equal(chooseWinograd("auto", 8, 26, 26, 256, 256), 0);
  assert.equal(chooseWinograd("auto", 256, 26, 26, 24, 256), 0);
  assert.equal(chooseWinograd("off", 256, 26, 26, 256, 256), 0);
  assert.equal(chooseWinograd(2, 1, 26, 26, 8, 8), 2);
  assert.equal(parseWinograd("auto"), "auto");
  assert.equal(parseWinograd("0"), "off");
  assert.equal(parseWinograd("4"), 4);
  assert.equal(parseWinograd("6"), 6);
  assert.equal(parseWinograd("7"), 7);
  assert.throws(() => parseWinograd("3"), /off, auto, 2, 4, 6 or 7/);
  assert.throws(() => winogradTile(8), /2, 4, 6 or 7/);
});

Deno.test("Toom-Cook matrices: F(4x4)'s table, F(6x6)'s up to row scales, F(7x7) exact on polynomials", () => {
  const same = (a: number[][], b: readonly number[][]) =>
    a.every((r, i) => r.every((v, j) => Math.abs(v - b[i][j]) < 1e-12));
  const f4 = toomCook([0, 1, -1, 2, -2], 4), t4 = winogradMatrices(4);
  assert.ok(same(f4.at, t4.at) && same(f4.g, t4.g) && same(f4.bt, t4.bt), "F(4x4)");
  // F(6x6): A^T equal, and each G row times its B^T row (what a product of U and V sees) equal.
  const f6 = toomCook([0, 1, -1, 2, -2, 1 / 2, -1 / 2], 6), t6 = winogradMatrices(6);
  assert.ok(same(f6.at, t6.at), "F(6x6) A^T");
  const outer = (m: Matrices) => m.g.map((g, i) => g.flatMap((x) => m.bt[i].map((y) => x * y)));
  assert.ok(same(outer(f6), outer(t6)), "F(6x6) G row x B^T row");
  assert.throws(() => toomCook([0, 1], 4), /needs 5 finite points/);
  // F(7x7) in exact arithmetic: the 1-D correlation of 9 inputs with 3 taps, y = A^T (G g . B^T d).
  const { at, g, bt } = winogradMatrices(7);
  const d = [0.5, -1, 2, 0.25, 3, -2, 1, 0.75, -0.5], k = [0.3, -0.7, 1.1];
  const u = g.map((r) => r.reduce((s, v, j) => s + v * k[j], 0));
  const v = bt.map((r) => r.reduce((s, x, j) => s + x * d[j], 0));
  const y = at.map((r) => r.reduce((s, x, j) => s + x * u[j] * v[j], 0));
  const want = Array.from({ length: 7 }, (_, i) => d[i] * k[0] + d[i + 1] * k[1] + d[i + 2] * k[2]);
  assert.ok(y.every((x, i) => Math.abs(x - want[i]) < 1e-12), `${y} against ${want}`);
});
