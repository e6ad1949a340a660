// Training that keeps each layer's Winograd V from the forward pass for its weight gradient
// (GpuNet's trainKeepV, GpuRecorder.keepV): the same bits as computing V again, one input
// transform fewer a Winograd layer, and nothing kept where it cannot be used.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { TINY_TOWER } from "./helpers.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";

Deno.env.set("KIBITZ_NN_F16", "0");
// The disk cache off for this module (module state: the environment is shared with the test
// modules running beside this one, tune_cache_test among them).
setTuneCacheEnabled(false);
const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

const cfg: NetConfig = TINY_TOWER;
const hyper = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };

/** Losses, weights and training-plan labels after three steps. */
async function train(trainKeepV: boolean, winograd: 4 | 6 | 7) {
  const net = await GpuNet.create(ctx!, initWeights(cfg, 5), {
    tiled: true,
    tiles: TEST_TILES,
    winograd,
    winogradGemm: "legacy",
    trainKeepV,
  });
  try {
    const losses: number[] = [];
    for (let s = 0; s < 3; s++) {
      losses.push((await net.trainStep(syntheticBatch(cfg, 3, 40 + s), hyper)).loss);
    }
    const labels = (await net.planFor(3, true)).ops.map((o) => o.label);
    return { losses, weights: await net.weights(), labels };
  } finally {
    net.dispose();
  }
}

Deno.test("kept V: the same training bits, one input transform fewer a layer", opts, async () => {
  for (const m of [4, 6, 7] as const) {
    const a = await train(false, m), b = await train(true, m);
    assert.deepEqual(b.losses, a.losses, `F(${m}) losses`);
    for (const [name, t] of a.weights.tensors) {
      assert.deepEqual(b.weights.tensors.get(name)!.data, t.data, `F(${m}) ${name}`);
    }
    // Every 3x3 conv is Winograd (forced): the stem and 2 x 2 tower convs. Each runs an input
    // transform in its forward, its input gradient (of dY) and, without kept V, its weight
    // gradient; the stem's input gradient is not needed.
    const inputs = (l: string[]) => l.filter((x) => x === `winogradInput${m}`).length;
    const convs = 1 + 2 * cfg.blocks;
    assert.equal(inputs(a.labels), 3 * convs - 1, `F(${m}) without kept V`);
    assert.equal(inputs(b.labels), 2 * convs - 1, `F(${m}) with kept V`);
  }
});

Deno.test("kept V is off by default and in inference plans", opts, async () => {
  const net = await GpuNet.create(ctx!, initWeights(cfg, 5), {
    tiled: true,
    tiles: TEST_TILES,
    winograd: 4,
    trainKeepV: true,
  });
  assert.equal((await net.planFor(3, false)).keepV, false);
  assert.equal((await net.planFor(3, true)).keepV, true);
  net.dispose();
  const plain = await GpuNet.create(ctx!, initWeights(cfg, 5), { tiled: true, tiles: TEST_TILES });
  assert.equal(plain.trainKeepV, false);
  plain.dispose();
});
