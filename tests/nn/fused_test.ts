// Inference fusion: batch norm folded into the conv, bias + residual + ReLU in the conv epilogue.
// Kernels against their CPU twins (src/nn/cpu/fused.ts), the CPU fused graph against the unfused
// reference, and the fused GPU network against the CPU reference, also after training steps
// (which must refresh the folded weights). Tolerance as in gpu_ops_test.ts.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { CpuBackend } from "../../src/nn/cpu_backend.ts";
import { convFused, foldBn } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { foldedLayers, runFusedInference } from "../../src/nn/graph_fused.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights, type NetWeights } from "../../src/nn/params.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const software = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const tiles = software ? TEST_TILES : HARDWARE_TILES;
const cfg: NetConfig = {
  blocks: 2,
  filters: 8,
  planes: 4,
  height: 6,
  width: 6,
  moves: 12,
  valueHidden: 16,
};

function close(name: string, got: Float32Array, want: Float32Array, rel = 1e-4): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = maxDiff(got, want), tol = rel * Math.max(1, maxAbs(want));
  assert.ok(err <= tol, `${name}: max difference ${err} > ${tol}`);
}

/** Weights whose batch norms are far from identity (random gamma, beta, running mean and var). */
function unevenWeights(seed: number): NetWeights {
  const w = initWeights(cfg, seed);
  const next = rng(seed + 100);
  for (const s of w.specs) {
    const d = w.tensors.get(s.name)!.data;
    for (let i = 0; i < d.length; i++) {
      if (s.role === "gamma") d[i] = 0.5 + next();
      else if (s.role === "beta" || s.role === "mean") d[i] = next() - 0.5;
      else if (s.role === "var") d[i] = 0.2 + 2 * next();
    }
  }
  return w;
}

Deno.test("CPU fused inference (folded batch norm, fused epilogues) equals the reference", async () => {
  const w = unevenWeights(3);
  const batch = syntheticBatch(cfg, 3, 4);
  const want = await new CpuNet(w).infer(batch);
  const T = (n: string) => w.tensors.get(n)!;
  const folded = new Map(
    foldedLayers(cfg).map(([conv, bn]) => [
      conv,
      foldBn(T(conv), T(`${bn}.gamma`), T(`${bn}.beta`), T(`${bn}.mean`), T(`${bn}.var`)),
    ]),
  );
  const x = cpuTensor([3, cfg.planes, cfg.height, cfg.width], batch.planes);
  const mask = cpuTensor([3, cfg.moves], batch.mask);
  const got = runFusedInference(new CpuBackend(), cfg, w.tensors, folded, x, mask);
  close("probs", got.probs.data, want.probs, 1e-5);
  close("value", got.value.data, want.value, 1e-5);
});

// [k, n, ci, co, h, w]: plain, the 128-wide tiles, and batch-1 deep-K cases that split K (the
// epilogue then runs in the split sum).
const CASES = [
  [3, 2, 6, 70, 6, 6],
  [1, 2, 5, 3, 5, 4],
  [3, 2, 15, 130, 8, 9],
  [3, 1, 50, 20, 5, 5],
  [1, 1, 300, 8, 4, 4],
];
for (const tiled of [false, true]) {
  for (const [k, n, ci, co, h, wd] of CASES) {
    Deno.test(
      `GPU fold + fused conv ${k}x${k} ${n}x${ci}x${h}x${wd} -> ${co} (${
        tiled ? "tiled" : "direct"
      }): bias, residual, ReLU match CPU`,
      opts,
      async () => {
        const x = randTensor([n, ci, h, wd], 1), w = randTensor([co, ci, k, k], 2);
        const res = randTensor([n, co, h, wd], 3);
        const gamma = randTensor([co], 4, 0.5, 1.5), beta = randTensor([co], 5);
        const mean = randTensor([co], 6), variance = randTensor([co], 7, 0.2, 2);
        const f = foldBn(w, gamma, beta, mean, variance);
        const pool = new TensorPool(ctx!);
        const r = new GpuRecorder(ctx!, await loadKernels(ctx!, tiles), pool, tiled);
        const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
        const [gx, gw, gres, gg, gb, gm, gv] = [x, w, res, gamma, beta, mean, variance].map(up);
        const wf = pool.acquire(w.shape), bf = pool.acquire([co]);
        r.foldBn(gw, { gamma: gg, beta: gb, runMean: gm, runVar: gv }, wf, bf);
        const y1 = r.convFused(gx, wf, bf, gres, true);
        const y2 = r.convFused(gx, wf, bf, null, false);
        r.submit();
        const [gwf, gbf, a, b] = await readTensors(ctx!, [wf, bf, y1, y2]);
        close("folded weight", gwf, f.w.data, 1e-6);
        close("folded bias", gbf, f.b.data, 1e-6);
        close("conv + bias + residual + ReLU", a, convFused(x, f.w, f.b, res, true).data);
        close("conv + bias", b, convFused(x, f.w, f.b, null, false).data);
        r.destroy();
        pool.destroy();
      },
    );
  }
}

for (const tiled of [false, true]) {
  Deno.test(
    `fused GPU network matches the CPU reference, before and after training (${
      tiled ? "tiled" : "direct"
    })`,
    opts,
    async () => {
      const w = unevenWeights(5);
      const cpu = new CpuNet(w);
      const gpu = await GpuNet.create(ctx!, w, { tiled, tiles, fused: true });
      const plain = await GpuNet.create(ctx!, w, { tiled, tiles, fused: false });
      assert.ok(gpu.fused && !plain.fused);
      const batch = syntheticBatch(cfg, 3, 6);
      const h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
      for (let round = 0; round < 2; round++) {
        const want = await cpu.infer(batch);
        const [got, unfused] = await Promise.all([gpu.infer(batch), plain.infer(batch)]);
        close(`round ${round} probs`, got.probs, want.probs, 1e-5);
        close(`round ${round} value`, got.value, want.value, 1e-5);
        close(`round ${round} unfused probs`, unfused.probs, want.probs, 1e-5);
        const tb = syntheticBatch(cfg, 4, 20 + round);
        await cpu.trainStep(tb, h);
        await gpu.trainStep(tb, h);
        await plain.trainStep(tb, h);
      }
      gpu.dispose();
      plain.dispose();
    },
  );
}

Deno.test(
  "fused inference plan: two dispatches per residual block, no batch-norm or elementwise ops in the tower",
  opts,
  async () => {
    const w = initWeights(cfg, 1);
    const fused = await GpuNet.create(ctx!, w, { tiled: false, fused: true });
    const plain = await GpuNet.create(ctx!, w, { tiled: false, fused: false });
    const f = (await fused.planFor(2, false)).ops.map((o) => o.label);
    const p = (await plain.planFor(2, false)).ops.map((o) => o.label);
    // stem + 2 per block + policy conv, FC, softmax + value conv, FC, ReLU, FC, tanh.
    assert.equal(f.length, 1 + 2 * cfg.blocks + 3 + 5, f.join(" "));
    assert.equal(f.filter((l) => l === "convForwardFusedDirect").length, 2 * cfg.blocks + 3);
    assert.ok(!f.some((l) => l.startsWith("bn") || l === "add"), f.join(" "));
    assert.ok(p.length >= 2 * f.length, `unfused ${p.length} vs fused ${f.length}`);
    fused.dispose();
    plain.dispose();
  },
);
