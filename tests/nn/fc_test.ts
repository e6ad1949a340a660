// The fully connected layers' K-major forward GEMM (shaders/nn/fc.wgsl, fcNt): the bits of the
// tiled matmul on shapes that cut every tile short, at test and hardware workgroup sizes, inside a
// GpuNet, and the tuner's code path that picks between the two.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { FC_THIN, fcNtFits, fcShapeKey } from "../../src/nn/gpu/fc.ts";
import { FC_KERNELS, fcKernelPolicy, tuneFc } from "../../src/nn/gpu/fc_tune.ts";
import {
  fcSource,
  HARDWARE_TILES,
  type KernelTiles,
  loadKernels,
  matmulSource,
  type NnKernels,
  TEST_TILES,
} from "../../src/nn/gpu/kernels.ts";
import { computePipeline } from "../../src/gpu/pipeline.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("fcNtFits: the forward layout, K a multiple of 4, past the thin sizes", () => {
  const k = 68;
  assert.ok(fcNtFits(9, 5, k, [k, 1, 1, k]));
  assert.ok(!fcNtFits(9, 5, 70, [70, 1, 1, 70]), "K not a multiple of 4");
  assert.ok(!fcNtFits(FC_THIN, 5, k, [k, 1, 1, k]), "thin rows");
  assert.ok(!fcNtFits(9, 5, FC_THIN, [FC_THIN, 1, 1, FC_THIN]), "thin K");
  assert.ok(!fcNtFits(9, 5, k, [1, 9, k, 1]), "a backward layout");
  assert.equal(fcShapeKey(256, 5489, 1352), "fc:256x1352->5489");
  assert.equal(fcKernelPolicy(undefined), "tuned");
  assert.equal(fcKernelPolicy("nt"), "nt");
  assert.throws(() => fcKernelPolicy("fast"), /KIBITZ_NN_FC must be tuned, nt or tiled/);
});

/**
 * The test tiles' kernels with the two a linear layer records compiled at `tiles`' size (the
 * hardware family would take llvmpipe about 20 s to compile whole).
 */
async function fcKernels(tiles: KernelTiles): Promise<NnKernels> {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  if (tiles === TEST_TILES) return kernels;
  const tw = tiles.matmul;
  return {
    ...kernels,
    tiles,
    fcNt: await computePipeline(ctx!, fcSource(tw), "fc_nt", {}, "fc.test"),
    matmulBias: await computePipeline(ctx!, matmulSource(tw), "with_bias", {}, "fc.test"),
  };
}

/** linear(x, w, bias) through the tiled matmul and through fcNt: [tiled, nt] outputs. */
async function bothWays(tiles: KernelTiles, m: number, n: number, k: number, seed: number) {
  const kernels = await fcKernels(tiles);
  const pool = new TensorPool(ctx!);
  const next = rng(seed);
  const rand = (len: number) => Float32Array.from({ length: len }, () => next() * 2 - 1);
  const x = uploadTensor(ctx!, [m, k], rand(m * k), "fc.x");
  const w = uploadTensor(ctx!, [n, k], rand(n * k), "fc.w");
  const bias = uploadTensor(ctx!, [n], rand(n), "fc.bias");
  const out = [];
  for (const nt of [false, true]) {
    const rec = new GpuRecorder(ctx!, kernels, pool, true);
    if (nt) rec.fcNt.add(fcShapeKey(m, n, k));
    const y = rec.linear(x, w, bias);
    assert.deepEqual(rec.ops.map((o) => o.label), [nt ? "fcNt" : "matmulBias"]);
    rec.submit();
    out.push((await readTensors(ctx!, [y]))[0]);
    rec.destroy();
  }
  pool.destroy();
  for (const t of [x, w, bias]) t.buffer.destroy();
  return out;
}

Deno.test(
  "fcNt gives the tiled matmul's bits (tiles cut short along M, N and K)",
  opts,
  async () => {
    for (
      const [tiles, m, n, k] of [
        [TEST_TILES, 37, 101, 68],
        [TEST_TILES, 9, 5, 12],
        [TEST_TILES, 16, 32, 16],
        // The hardware workgroup (64 x 128 tiles, 256 threads): 70 rows, 130 columns, 84 K steps.
        [HARDWARE_TILES, 70, 130, 84],
      ] as const
    ) {
      const [tiled, nt] = await bothWays(tiles, m, n, k, m + n + k);
      assert.equal(nt.length, m * n);
      for (let i = 0; i < tiled.length; i++) {
        if (!Object.is(nt[i], tiled[i])) {
          assert.fail(`${m}x${k}->${n}, tw ${tiles.matmul}: [${i}] ${nt[i]} against ${tiled[i]}`);
        }
      }
    }
  },
);

Deno.test("GpuNet: fcNt for the fully connected layers changes no bit", opts, async () => {
  const cfg = NET_PRESETS.tiny, w = initWeights(cfg, 4);
  const batch = syntheticBatch(cfg, 12, 3);
  const got = [];
  for (const fcKernel of ["tiled", "nt"] as const) {
    const net = await GpuNet.create(ctx!, w, { tiled: true, tiles: TEST_TILES, precision: "f32" });
    net.fcKernel = fcKernel;
    got.push(await net.infer(batch));
    const labels = (await net.planFor(12, false)).ops.map((o) => o.label);
    // The policy layer (72 -> 12) and the value head's first (36 -> 16) fit; its last (16 -> 1)
    // does too: three.
    assert.equal(labels.filter((l) => l === "fcNt").length, fcKernel === "nt" ? 3 : 0);
    net.dispose();
  }
  assert.deepEqual(got[1].probs, got[0].probs);
  assert.deepEqual(got[1].value, got[0].value);
});

Deno.test("tuneFc times both kernels and names the faster", opts, async () => {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  const r = await tuneFc(ctx!, kernels, 16, 40, 32);
  assert.deepEqual(r.timings.map((t) => t.name), [FC_KERNELS.tiled, FC_KERNELS.nt]);
  for (const t of r.timings) assert.ok(t.ms !== null && t.ms > 0, JSON.stringify(t));
  const fastest = r.timings.reduce((a, b) => (b.ms! < a.ms! ? b : a));
  assert.equal(r.winner, fastest.name);
  assert.equal(r.shape, "fc 16x32->40");
});
