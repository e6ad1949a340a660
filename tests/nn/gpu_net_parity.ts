// What the head tests (cells, pooled value) share on the GPU: a recorder whose pool hands out
// garbage-filled buffers (so every output value must be written), and the GpuNet-against-CpuNet
// check: inference on the fused and unfused plans, three training steps, the trained weights, and
// inference after training (the folds refreshed), in one kernel family.
import assert from "node:assert/strict";
import type { GpuContext } from "../../src/gpu/device.ts";
import { writeBuffer } from "../../src/gpu/buffers.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { type KernelTiles, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { TensorPool } from "../../src/nn/gpu/tensor.ts";
import { CpuNet, GpuNet, type NetBatch } from "../../src/nn/net.ts";
import { cpuFusedInfer } from "../../src/nn/f16.ts";
import type { NetWeights } from "../../src/nn/params.ts";
import { maxDiff } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

/** Asserts that two arrays have the same length and differ by less than `tol` everywhere. */
export function near(name: string, got: Float32Array, want: Float32Array, tol: number): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const d = maxDiff(got, want);
  assert.ok(d < tol, `${name} differs by ${d}`);
}

/**
 * A recorder on the test tiles of one kernel family whose pool holds a buffer of each of `shapes`
 * filled with 123.5, so ops that take those shapes must write every value. The caller destroys both.
 */
export async function recorderOverGarbage(
  ctx: GpuContext,
  tiled: boolean,
  shapes: readonly (readonly number[])[],
): Promise<{ r: GpuRecorder; pool: TensorPool }> {
  const kernels = await loadKernels(ctx, TEST_TILES, tiled ? "tiled" : "direct");
  const pool = new TensorPool(ctx);
  const r = new GpuRecorder(ctx, kernels, pool, tiled);
  for (const shape of shapes) {
    const junk = pool.acquire([...shape]);
    writeBuffer(ctx, junk.buffer, new Float32Array(junk.size).fill(123.5));
    pool.release(junk);
  }
  return { r, pool };
}

/**
 * Both kernel families: the adapter's default (direct on a software adapter) and the tiled one
 * (at test tile sizes on a software adapter).
 */
export const GPU_FAMILIES: { name: string; opts: { tiled?: boolean; tiles?: KernelTiles } }[] = [
  { name: "default kernels", opts: {} },
  { name: "tiled kernels", opts: { tiled: true, tiles: TEST_TILES } },
];

/**
 * Runs `w` on CpuNet and on GpuNet (fused and unfused) and asserts they agree: each of `infer`
 * (probs and value within 1e-5), a training step per `train` batch (loss, value loss, L2), every
 * trained weight (1e-4), and `after` on the trained nets. Returns both nets' trained weights.
 */
export async function assertGpuNetTracksCpu(
  ctx: GpuContext,
  w: NetWeights,
  family: { opts: { tiled?: boolean; tiles?: KernelTiles } },
  infer: { label: string; batch: NetBatch }[],
  train: NetBatch[],
  after: NetBatch,
): Promise<{ cpu: NetWeights; gpu: NetWeights }> {
  const cpu = new CpuNet(w);
  const fused = await GpuNet.create(ctx, w, family.opts);
  const plain = await GpuNet.create(ctx, w, { ...family.opts, fused: false });
  try {
    for (const { label, batch } of infer) {
      const a = await cpu.infer(batch);
      for (const [name, net] of [["fused", fused], ["unfused", plain]] as const) {
        const g = await net.infer(batch);
        near(`${name} ${label} probs`, g.probs, a.probs, 1e-5);
        near(`${name} ${label} value`, g.value, a.value, 1e-5);
      }
    }
    const h = { lr: 0.02, momentum: 0.9, weightDecay: 1e-4 };
    for (const [s, b] of train.entries()) {
      const ta = await cpu.trainStep(b, h), tg = await fused.trainStep(b, h);
      assert.ok(Math.abs(ta.loss - tg.loss) < 1e-4 * Math.max(1, ta.loss), `step ${s} loss`);
      assert.ok(Math.abs(ta.valueLoss - tg.valueLoss) < 1e-5, `step ${s} value loss`);
      assert.ok(Math.abs(ta.l2 - tg.l2) < 1e-6, `step ${s} l2`);
    }
    const wa = await cpu.weights(), wg = await fused.weights();
    for (const s of wa.specs) {
      near(s.name, wg.tensors.get(s.name)!.data, wa.tensors.get(s.name)!.data, 1e-4);
    }
    const [ga, ca] = [await fused.infer(after), await cpu.infer(after)];
    near("post-training probs", ga.probs, ca.probs, 1e-5);
    near("post-training value", ga.value, ca.value, 1e-5);
    return { cpu: wa, gpu: wg };
  } finally {
    fused.dispose();
    plain.dispose();
  }
}

/**
 * Runs `w` on an f16-emulated fused GpuNet (tiled test kernels) and asserts it matches the CPU
 * fused graph's f16 twin within 1e-5; returns the net (for plan checks; the caller disposes it).
 */
export async function assertF16EmulatedMatches(
  ctx: GpuContext,
  w: NetWeights,
  batch: NetBatch,
): Promise<GpuNet> {
  const f16 = await GpuNet.create(ctx, w, {
    tiled: true,
    tiles: TEST_TILES,
    fused: true,
    f16Emulate: true,
  });
  const want = cpuFusedInfer(w, batch, false), got = await f16.infer(batch);
  near("f16-emulated probs", got.probs, want.probs, 1e-5);
  near("f16-emulated value", got.value, want.value, 1e-5);
  return f16;
}
