// The fully connected layers' K-major forward GEMM (shaders/nn/fc.wgsl, fcNt): the bits of the
// tiled matmul on shapes that cut every tile short, at test and hardware workgroup sizes, inside a
// GpuNet, and the tuner's code path that picks between the two.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { FC_THIN, fcNtFits, fcShapeKey } from "../../src/nn/gpu/fc.ts";
import { FC_KERNELS, fcKernelPolicy, tuneFc } from "../../src/nn/gpu/fc_tune.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { fcBothWays, fcParity } from "../../src/nn/gpu/fc_check.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";

// Tuning here must not write the user's tune cache.
setTuneCacheEnabled(false);
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

Deno.test(
  "fcNt gives the tiled matmul's bits (tiles cut short along M, N and K)",
  opts,
  async () => {
    assert.deepEqual(await fcParity(ctx!), []);
    // The hardware workgroup (64 x 128 tiles, 256 threads): 70 rows, 130 columns, 84 K steps.
    const { out: [tiled, nt], labels } = await fcBothWays(ctx!, HARDWARE_TILES, [70, 130, 84], 9);
    assert.deepEqual(labels, [["matmulBias"], ["fcNt"]]);
    assert.equal(nt.length, 70 * 130);
    for (let i = 0; i < tiled.length; i++) {
      if (!Object.is(nt[i], tiled[i])) assert.fail(`[${i}] ${nt[i]} against ${tiled[i]}`);
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
  const r = await tuneFc(ctx!, kernels, [16, 40, 32]);
  assert.deepEqual(r.timings.map((t) => t.name), [FC_KERNELS.tiled, FC_KERNELS.nt]);
  for (const t of r.timings) assert.ok(t.ms !== null && t.ms > 0, JSON.stringify(t));
  const fastest = r.timings.reduce((a, b) => (b.ms! < a.ms! ? b : a));
  assert.equal(r.winner, fastest.name);
  assert.equal(r.shape, "fc 16x32->40");
});
