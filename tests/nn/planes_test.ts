// f16 input planes (src/nn/planes.ts): an f16 inference plan takes them where it would cast its f32
// input, skipping the cast, and gives the bits f32 planes of the same values give; every other
// network (f32 plans, training, the CPU) widens them first. The evaluator encodes into them for a
// network that says it takes them.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { deviceHasF16 } from "../../src/nn/gpu/f16.ts";
import { TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { CpuNet, GpuNet, type NetBatch, type NetOutputs } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import {
  allocPlanes,
  halfBits,
  hasFloat16Array,
  isHalfPlanes,
  planesF32,
} from "../../src/nn/planes.ts";
import { rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { BatchEvaluator, type BatchInfer } from "../../src/alphazero/evaluator.ts";
import { TICTACTOE, TicTacToe } from "../../src/alphazero/games/tictactoe.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const f16opts = { ...opts, ignore: !ctx || !deviceHasF16(ctx) };
const cfg = NET_PRESETS.tiny;

/** A batch whose planes are multiples of 1/8 in [-1, 1] (exact in f16), as f32 and as f16. */
function exactBatch(size: number, seed: number): { f32: NetBatch; f16: NetBatch } {
  const b = syntheticBatch(cfg, size, seed), next = rng(seed + 7);
  const planes = b.planes.map(() => Math.floor(next() * 17 - 8) / 8);
  return {
    f32: { size, planes, mask: b.mask },
    f16: { size, planes: new Float16Array(planes), mask: b.mask },
  };
}

function same(got: NetOutputs, want: NetOutputs, what: string): void {
  assert.deepEqual(got.probs, want.probs, `${what}: probs`);
  assert.deepEqual(got.value, want.value, `${what}: value`);
}

Deno.test("planes helpers: kinds, widening, bits, allocation", () => {
  assert.ok(hasFloat16Array());
  const h = new Float16Array([1, -0.5, 1 / 6, 65504]);
  assert.ok(isHalfPlanes(h));
  assert.ok(!isHalfPlanes(new Float32Array(2)));
  const w = planesF32(h);
  assert.ok(w instanceof Float32Array);
  assert.deepEqual([...w], [1, -0.5, 0.1666259765625, 65504]);
  const f = new Float32Array([3]);
  assert.equal(planesF32(f), f, "f32 planes are not copied");
  // A view: 1 = 0x3c00, -0.5 = 0xb800.
  const bits = halfBits(h.subarray(1, 3));
  assert.deepEqual([...bits], [0xb800, 0x3155]);
  h[1] = 2;
  assert.equal(bits[0], 0x4000, "halfBits views the planes' buffer");
  assert.ok(allocPlanes(5, true) instanceof Float16Array);
  const f32 = allocPlanes(5, false);
  assert.ok(f32 instanceof Float32Array && f32.length === 5 && f32.every((v) => v === 0));
});

Deno.test(
  "f16 plan (emulated): f16 planes skip the input cast and give the bits of f32 planes, directly and uploaded ahead",
  opts,
  async () => {
    const w = initWeights(cfg, 3);
    for (const ahead of [false, true]) {
      const net = await GpuNet.create(ctx!, w, {
        tiled: true,
        tiles: TEST_TILES,
        fused: true,
        f16Emulate: true,
      });
      net.uploadAhead = ahead;
      // Emulated f16 storage: halves go in widened, so callers are not told to encode them.
      assert.equal(net.halfPlanes, false);
      const rec = await net.planFor(3, false);
      const half = rec.halfInput;
      assert.ok(half, "the f16 plan's input cast is found");
      assert.equal(rec.ops[half.op].label, "toHalf");
      const a = exactBatch(3, 1), b = exactBatch(3, 2);
      const wantA = await net.infer(a.f32), wantB = await net.infer(b.f32);
      // Alternating kinds: a half call after an f32 one must not read the f32 input left in the
      // plan (the cast skipped), and an f32 call after a half one must cast again.
      const what = ahead ? "ahead" : "direct";
      same(await net.infer(b.f16), wantB, `${what}: f16 after f32`);
      same(await net.infer(a.f32), wantA, `${what}: f32 after f16`);
      same(await net.infer(a.f16), wantA, `${what}: f16 again`);
      same(await net.infer(b.f16), wantB, `${what}: f16 after f16`);
      // In flight together.
      const got = await Promise.all([a.f16, b.f32, b.f16, a.f32].map((x) => net.infer(x)));
      [wantA, wantB, wantB, wantA].forEach((want, i) => same(got[i], want, `${what}: ${i}`));
      net.dispose();
    }
  },
);

Deno.test(
  "f32 plans, training and the CPU take f16 planes widened: the results of f32 planes",
  opts,
  async () => {
    const w = initWeights(cfg, 4);
    const { f32, f16 } = exactBatch(2, 5);
    const gpu = await GpuNet.create(ctx!, w, { precision: "f32" });
    assert.equal(gpu.halfPlanes, false);
    assert.equal((await gpu.planFor(2, false)).halfInput, null, "an f32 plan casts nothing");
    same(await gpu.infer(f16), await gpu.infer(f32), "f32 plan");
    const cpu = new CpuNet(w);
    assert.equal(cpu.halfPlanes, false);
    same(await cpu.infer(f16), await cpu.infer(f32), "CPU");
    // One training step each from the same weights: the same losses.
    const t = syntheticBatch(cfg, 2, 5);
    const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
    const s32 = await new CpuNet(w).trainStep({ ...t, planes: f32.planes }, hyper);
    const s16 = await new CpuNet(w).trainStep({ ...t, planes: f16.planes }, hyper);
    assert.deepEqual(s16, s32);
    const g32 = await GpuNet.create(ctx!, w, { precision: "f32" });
    const g16 = await GpuNet.create(ctx!, w, { precision: "f32" });
    assert.deepEqual(
      await g16.trainStep({ ...t, planes: f16.planes }, hyper, true),
      await g32.trainStep({ ...t, planes: f32.planes }, hyper, true),
    );
    for (const n of [gpu, g32, g16]) n.dispose();
  },
);

Deno.test(
  "f16 plan on shader-f16: f16 planes are uploaded as they are, with the bits of f32 planes",
  f16opts,
  async () => {
    const w = initWeights(cfg, 6);
    const net = await GpuNet.create(ctx!, w, { fused: true, precision: "f16" });
    assert.equal(net.halfPlanes, true);
    const a = exactBatch(3, 8), b = exactBatch(3, 9);
    const wantA = await net.infer(a.f32), wantB = await net.infer(b.f32);
    for (const ahead of [false, true]) {
      net.uploadAhead = ahead;
      same(await net.infer(b.f16), wantB, `real f16${ahead ? ", ahead" : ""}: b`);
      same(await net.infer(a.f16), wantA, `real f16${ahead ? ", ahead" : ""}: a`);
    }
    net.dispose();
  },
);

Deno.test("the evaluator encodes into f16 planes for a network that takes them", async () => {
  const seen: NetBatch[] = [];
  const fake = (halfPlanes: boolean): BatchInfer => ({
    backend: "gpu",
    halfPlanes,
    infer(batch: NetBatch): Promise<NetOutputs> {
      seen.push(batch);
      return Promise.resolve({
        probs: new Float32Array(batch.size * TICTACTOE.moves).fill(1 / 9),
        value: new Float32Array(batch.size),
      });
    },
  });
  const planesOf = async (halfPlanes: boolean) => {
    const ev = new BatchEvaluator(fake(halfPlanes), TICTACTOE, 16);
    const g = new TicTacToe();
    g.play(g.legalMoves()[4]);
    // Three positions: padded to a GPU batch of 8.
    await Promise.all([0, 1, 2].map(() => ev.evaluate(g, g.legalMoves())));
    ev.close();
    return seen.pop()!.planes;
  };
  const half = await planesOf(true), full = await planesOf(false);
  assert.ok(isHalfPlanes(half), "f16 planes, padding included");
  assert.ok(full instanceof Float32Array);
  assert.equal(half.length, 8 * 27);
  assert.deepEqual([...half], [...full]);
  assert.ok(full.some((v) => v !== 0));
});
