// The whole ResNet: GPU vs CPU reference, training on a learnable task, batches of any size.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { forwardMacs, NET_PRESETS, netPreset } from "../../src/nn/config.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { HARDWARE_TILES, type KernelTiles, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { countParams, initWeights, paramSpecs } from "../../src/nn/params.ts";
import { syntheticBatch, Trainer } from "../../src/nn/train.ts";
import { cosineLr, defaultSgd } from "../../src/nn/optimizer.ts";
import { maxDiff, rejectsWith } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const gpuOpts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;

Deno.test("default model follows seed 003: 24x26x26 in, 19x256 tower, 5489 moves, ~30M parameters", () => {
  const cfg = netPreset("default");
  assert.equal(cfg.moves, 7 * 28 * 28 + 1);
  const specs = paramSpecs(cfg);
  const trainable = specs.filter((s) => s.trainable).reduce(
    (a, s) => a + s.shape.reduce((x, y) => x * y),
    0,
  );
  // 3x3 convs: 24*256*9 + 38*256*256*9; heads: 2*256 + 5489*(1352+1) + 256 + 256*677 + 257; BN: 2 per channel.
  const want = 24 * 256 * 9 + 38 * 256 * 256 * 9 + 2 * 256 + 5489 * 1353 + 256 + 256 * 677 + 257 +
    39 * 2 * 256 + 2 * 2 + 2 * 1;
  assert.equal(trainable, want);
  assert.equal(countParams(cfg), want);
  // Seed 003 says "~15-25M depending on width"; the 5489 x 1352 policy layer brings it to ~30M.
  assert.ok(trainable > 15e6 && trainable < 35e6);
  assert.ok(forwardMacs(cfg) > 1e10);
  assert.throws(() => netPreset("huge"), /unknown model preset/);
});

Deno.test("cosine schedule runs 0.01 -> 0.0001", () => {
  const s = defaultSgd(100);
  assert.equal(cosineLr(s, 0), 0.01);
  assert.ok(Math.abs(cosineLr(s, 50) - 0.00505) < 1e-12);
  assert.ok(Math.abs(cosineLr(s, 100) - 0.0001) < 1e-12);
  assert.ok(Math.abs(cosineLr(s, 500) - 0.0001) < 1e-12);
});

// Both kernel families: the adapter's default, and the tiled GEMMs (at test tile sizes on a
// software adapter, where the hardware sizes take minutes to compile).
const FAMILIES = [
  { name: "default kernels", opts: {} },
  {
    name: "tiled kernels",
    opts: { tiled: true, tiles: ctx?.report.isFallback ? TEST_TILES : HARDWARE_TILES },
  },
];
for (const family of FAMILIES) {
  Deno.test(
    `GPU network matches the CPU reference: inference, 3 training steps, weights (${family.name})`,
    gpuOpts,
    () => matchesCpu(family.opts),
  );
}

async function matchesCpu(opts: { tiled?: boolean; tiles?: KernelTiles }): Promise<void> {
  const w = initWeights(tiny, 7);
  const cpu = new CpuNet(w), gpu = await GpuNet.create(ctx!, w, opts);
  const batch = syntheticBatch(tiny, 4, 3);
  const a = await cpu.infer(batch), g = await gpu.infer(batch);
  assert.ok(maxDiff(a.probs, g.probs) < 1e-5, "probs");
  assert.ok(maxDiff(a.value, g.value) < 1e-5, "value");
  const h = { lr: 0.02, momentum: 0.9, weightDecay: 1e-4 };
  for (let s = 0; s < 3; s++) {
    const b = syntheticBatch(tiny, 4, 10 + s);
    const ta = await cpu.trainStep(b, h), tg = await gpu.trainStep(b, h);
    assert.ok(Math.abs(ta.loss - tg.loss) < 1e-4 * Math.max(1, ta.loss), `step ${s} loss`);
    assert.ok(Math.abs(ta.l2 - tg.l2) < 1e-6, `step ${s} l2`);
  }
  const wa = await cpu.weights(), wg = await gpu.weights();
  for (const s of wa.specs) {
    const d = maxDiff(wa.tensors.get(s.name)!.data, wg.tensors.get(s.name)!.data);
    assert.ok(d < 1e-4, `${s.name} differs by ${d}`);
  }
  gpu.dispose();
}

Deno.test(
  "GPU inference is per position: a batch of 5 equals 5 batches of 1",
  gpuOpts,
  async () => {
    const gpu = await GpuNet.create(ctx!, initWeights(tiny, 8));
    const batch = syntheticBatch(tiny, 5, 4);
    const all = await gpu.infer(batch);
    const per = tiny.planes * tiny.height * tiny.width;
    for (let i = 0; i < 5; i++) {
      const one = await gpu.infer({
        size: 1,
        planes: batch.planes.subarray(i * per, (i + 1) * per),
        mask: batch.mask.subarray(i * tiny.moves, (i + 1) * tiny.moves),
      });
      assert.ok(
        maxDiff(one.probs, all.probs.subarray(i * tiny.moves, (i + 1) * tiny.moves)) < 1e-6,
      );
      assert.ok(Math.abs(one.value[0] - all.value[i]) < 1e-6);
    }
    gpu.dispose();
  },
);

Deno.test(
  "GPU inference splits batches above its cap and gives the same outputs",
  gpuOpts,
  async () => {
    const w = initWeights(tiny, 9);
    const whole = await GpuNet.create(ctx!, w),
      split = await GpuNet.create(ctx!, w, { maxBatch: 2 });
    assert.equal(split.maxBatch(), 2);
    const batch = syntheticBatch(tiny, 5, 6);
    const a = await whole.infer(batch), b = await split.infer(batch);
    assert.equal(b.probs.length, 5 * tiny.moves);
    assert.ok(maxDiff(a.probs, b.probs) < 1e-6);
    assert.ok(maxDiff(a.value, b.value) < 1e-6);
    await rejectsWith(
      split.trainStep(syntheticBatch(tiny, 3, 1), { lr: 0, momentum: 0, weightDecay: 0 }),
      /training batch 3 exceeds 2/,
    );
    whole.dispose();
    split.dispose();
  },
);

async function learns(backend: "cpu" | "gpu") {
  const w = initWeights(tiny, 11);
  const net = backend === "cpu" ? new CpuNet(w) : await GpuNet.create(ctx!, w);
  const trainer = new Trainer(net, { ...defaultSgd(40), lrMax: 0.1, lrMin: 0.001 });
  const eval0 = syntheticBatch(tiny, 32, 999);
  const before = await evalLoss(net, eval0);
  for (let s = 0; s < 40; s++) await trainer.train(syntheticBatch(tiny, 16, s % 8));
  const after = await evalLoss(net, eval0);
  net.dispose();
  return { before, after };
}

// Cross-entropy + squared error of inference outputs on a held-out batch.
async function evalLoss(
  net: CpuNet | GpuNet,
  b: ReturnType<typeof syntheticBatch>,
): Promise<number> {
  const out = await net.infer(b);
  let l = 0;
  for (let i = 0; i < b.policy.length; i++) {
    if (b.policy[i] > 0) l -= b.policy[i] * Math.log(Math.max(out.probs[i], 1e-12));
  }
  for (let i = 0; i < b.size; i++) l += (out.value[i] - b.value[i]) ** 2;
  return l / b.size;
}

Deno.test("tiny model's held-out loss falls on the synthetic task (CPU reference)", async () => {
  const { before, after } = await learns("cpu");
  assert.ok(after < 0.7 * before, `loss ${before} -> ${after}`);
});

Deno.test("tiny model's held-out loss falls on the synthetic task (GPU)", gpuOpts, async () => {
  const { before, after } = await learns("gpu");
  assert.ok(after < 0.7 * before, `loss ${before} -> ${after}`);
});

Deno.test("bad batches are clear errors", async () => {
  const net = new CpuNet(initWeights(tiny, 1));
  await rejectsWith(net.infer({ size: 2, planes: new Float32Array(3) }), /planes has 3 values/);
  await rejectsWith(
    net.trainStep({ size: 1, planes: new Float32Array(144) }, {
      lr: 0,
      momentum: 0,
      weightDecay: 0,
    }),
    /need policy and value targets/,
  );
});
