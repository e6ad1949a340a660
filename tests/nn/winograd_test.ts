// Winograd F(2x2,3x3), F(4x4,3x3) and F(6x6,3x3): the CPU twin against the direct convolution, the GPU
// transforms + batched GEMM (tiled kernels; test tiles on a software adapter) against the CPU
// direct convolution with the fused epilogue, the fused network with Winograd forced against the
// CPU reference, and the selection table.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { ensureWinograd6 } from "../../src/nn/gpu/f16.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import {
  chooseWinograd,
  parseWinograd,
  winogradConv2d,
  type WinogradTile,
} from "../../src/nn/winograd.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { maxDiff, randTensor, relErr, TINY_TOWER } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const software = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const tiles = software ? TEST_TILES : HARDWARE_TILES;

Deno.test("CPU Winograd F(2x2), F(4x4), F(6x6) equal the direct convolution (odd sizes too)", () => {
  for (const [n, ci, co, h, w] of [[2, 3, 4, 6, 6], [1, 5, 2, 7, 5], [1, 4, 3, 9, 10]]) {
    const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, 3, 3], 2);
    const want = conv2d(x, wt).data;
    for (const m of [2, 4, 6] as const) {
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
  if (m === 6) await ensureWinograd6(ctx!, kernels, null);
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
for (const m of [2, 4, 6] as const) {
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
    for (const m of [2, 4, 6] as const) {
      const e = relErr(await gpuWinograd(m, x, wt, bias, res), want);
      console.log(
        `F(${m}x${m},3x3) max |winograd - direct| / max(1, max |direct|) = ${e.toExponential(2)}`,
      );
      assert.ok(e < (m === 2 ? 1e-5 : 1e-4), `F(${m}x${m}): ${e}`);
    }
  },
);

const cfg: NetConfig = TINY_TOWER;
Deno.test(
  "fused GPU network with Winograd forced (F(2x2), F(4x4), F(6x6)) matches the CPU reference, also after a training step",
  opts,
  async () => {
    const w = initWeights(cfg, 9);
    const cpu = new CpuNet(w);
    const nets = await Promise.all(
      ([2, 4, 6] as const).map((m) =>
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
  assert.throws(() => parseWinograd("3"), /off, auto, 2, 4 or 6/);
});
