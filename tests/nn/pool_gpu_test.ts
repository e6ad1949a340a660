// The pooled value head on WebGPU (llvmpipe in CI): meanPool and meanPoolBackward against the CPU
// reference (src/nn/cpu/pool.ts) in both kernel families, on Hive's 26 x 26 board and on rows that
// cross the 64-wide workgroups (buffers reused from the pool hold garbage first, so every output
// value must be written); the forward repeated gives the same bits (fixed summation order). Then
// tiny valuePool nets (one with the cells head too) on GpuNet against CpuNet: inference (fused,
// unfused, f16-emulated) and three training steps.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS, type NetConfig } from "../../src/nn/config.ts";
import { meanPool, meanPoolBackward } from "../../src/nn/cpu/pool.ts";
import { cpuFusedInfer } from "../../src/nn/f16.ts";
import { deviceHasF16 } from "../../src/nn/gpu/f16.ts";
import { type GpuTensor, readTensors, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { CpuNet, GpuNet, type NetBatch } from "../../src/nn/net.ts";
import { syntheticCellsBatch } from "../../src/nn/cells_batch.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";
import {
  assertF16EmulatedMatches,
  assertGpuNetTracksCpu,
  GPU_FAMILIES,
  near,
  recorderOverGarbage,
} from "./gpu_net_parity.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const f16opts = { ...opts, ignore: !ctx || !deviceHasF16(ctx) };

/**
 * Tolerance relative to the largest |x| (forward) or |dx| (backward). The forward sums up to 676
 * values in f32 (the CPU reference in f64): on llvmpipe, 2048 rows of 676 values in [0.5, 2.5)
 * differed by at most 1.4e-7 of max |x| (direct kernel) and 1e-7 (tiled), about 2 units in the
 * last place of the mean. The backward is one division, exact on llvmpipe; WGSL allows 2.5 units.
 */
const POOL_TOL = 4e-7;

/** Runs meanPool twice and meanPoolBackward once on the GPU into garbage-filled pool buffers. */
async function poolOnGpu(tiled: boolean, x: CpuTensor, dy: CpuTensor) {
  const { r, pool } = await recorderOverGarbage(ctx!, tiled, [dy.shape, dy.shape, x.shape]);
  const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
  const gx = up(x), gdy = up(dy);
  const y1 = r.meanPool(gx), y2 = r.meanPool(gx);
  const dx = r.meanPoolBackward(gx, gdy);
  assert.deepEqual(y1.shape, [x.shape[0], x.shape[1]]);
  assert.deepEqual(dx.shape, x.shape);
  r.submit();
  const [a, b, d] = await readTensors(ctx!, [y1, y2, dx] as GpuTensor[]);
  r.destroy();
  pool.destroy();
  gx.buffer.destroy();
  gdy.buffer.destroy();
  return { y: a, again: b, dx: d };
}

// [B, C, H, W]: Hive's board (676 values a row, 10 per invocation in the tiled family), the tiny
// net's 6 x 6, and 72 rows of 20 (rows cross the direct family's 64-wide workgroups; most of a
// tiled workgroup's invocations have no value).
const SHAPES = [[3, 5, 26, 26], [2, 3, 6, 6], [9, 8, 4, 5]];
for (const tiled of [false, true]) {
  Deno.test(
    `GPU meanPool and meanPoolBackward match the CPU reference (${
      tiled ? "tiled" : "direct"
    } kernels)`,
    opts,
    async () => {
      for (const [i, shape] of SHAPES.entries()) {
        // Values in [0.5, 2.5): means away from 0, so a relative error shows.
        const x = randTensor(shape, 40 + i, 0.5, 2.5);
        const dy = randTensor([shape[0], shape[1]], 50 + i);
        const got = await poolOnGpu(tiled, x, dy);
        const want = meanPool(x).data;
        const err = maxDiff(got.y, want), tol = POOL_TOL * Math.max(1, maxAbs(x.data));
        assert.ok(err <= tol, `${shape} forward: max difference ${err} > ${tol}`);
        assert.deepEqual(got.again, got.y, `${shape}: the forward is not deterministic`);
        const wantDx = meanPoolBackward(x.shape, dy).data;
        const errDx = maxDiff(got.dx, wantDx);
        assert.ok(errDx <= POOL_TOL * maxAbs(wantDx), `${shape} backward: max difference ${errDx}`);
      }
    },
  );
}

/** The tiny preset with a pooled value head of 3 channels. */
const POOL_CFG: NetConfig = { ...NET_PRESETS.tiny, valuePool: 3 };
/** The same with the cells policy head (4 hidden channels, 3 score planes, 5 biases). */
const POOL_CELLS_CFG: NetConfig = { ...POOL_CFG, cells: { hidden: 4, planes: 3, biases: 5 } };

/** A batch for either config (a move table of `width` entries for a cells net). */
function batchFor(cfg: NetConfig, size: number, width: number, seed: number): NetBatch {
  return cfg.cells ? syntheticCellsBatch(cfg, size, width, seed) : syntheticBatch(cfg, size, seed);
}

const NETS: [string, NetConfig][] = [["pooled value", POOL_CFG], [
  "pooled value + cells",
  POOL_CELLS_CFG,
]];
for (const family of GPU_FAMILIES) {
  for (const [what, cfg] of NETS) {
    Deno.test(
      `GPU ${what} net matches CpuNet: inference fused and unfused, 3 training steps (${family.name})`,
      opts,
      async () => {
        const w = initWeights(cfg, 7);
        const trained = await assertGpuNetTracksCpu(
          ctx!,
          w,
          family,
          [[4, 3], [3, 4]].map(([size, seed]) => ({
            label: `batch ${size}`,
            batch: batchFor(cfg, size, 14, seed),
          })),
          [0, 1, 2].map((s) => batchFor(cfg, 4, 12, 10 + s)),
          batchFor(cfg, 2, 12, 20),
        );
        // The value conv's weights moved: the gradient came back through meanPoolBackward.
        assert.ok(
          maxDiff(trained.gpu.tensors.get("value.conv")!.data, w.tensors.get("value.conv")!.data) >
            0,
        );
      },
    );
  }
}

Deno.test(
  "GPU pooled value net: the f16-emulated plan (meanPool of an f16-storage plane) matches the CPU fused graph",
  opts,
  async () => {
    const w = initWeights(POOL_CFG, 9);
    const batch = syntheticBatch(POOL_CFG, 5, 6);
    const f16 = await assertF16EmulatedMatches(ctx!, w, batch);
    // The plan casts the value plane to f32 and pools it.
    const labels = (await f16.planFor(5, false)).ops.map((o) => o.label);
    assert.ok(labels.includes("meanPool"), labels.join(" "));
    f16.dispose();
  },
);

Deno.test(
  "f16 GPU pooled value net (with and without cells) matches the CPU f16 twin (hardware adapters with shader-f16)",
  f16opts,
  async () => {
    // Tolerance as tests/nn/f16_test.ts's f16 network test: f32 sums in another order may straddle
    // an f16 rounding step of a stored activation (the value plane included), compounding over
    // the layers.
    for (const cfg of [POOL_CFG, POOL_CELLS_CFG]) {
      const w = initWeights(cfg, 9);
      const gpu = await GpuNet.create(ctx!, w, { tiled: true, fused: true, precision: "f16" });
      assert.equal(gpu.precision, "f16");
      for (const size of [1, 8]) {
        const batch = batchFor(cfg, size, 12, 11 + size);
        const want = cpuFusedInfer(w, batch, true), got = await gpu.infer(batch);
        near(`batch ${size} probs`, got.probs, want.probs, 2e-3);
        near(`batch ${size} value`, got.value, want.value, 5e-3);
      }
      gpu.dispose();
    }
  },
);

Deno.test("CPU fused graph with a pooled value head equals the reference pass (and its f16 twin is near)", async () => {
  for (const cfg of [POOL_CFG, POOL_CELLS_CFG]) {
    const w = initWeights(cfg, 5);
    const batch = batchFor(cfg, 3, 10, 8);
    const want = await new CpuNet(w).infer(batch);
    const got = cpuFusedInfer(w, batch, false);
    near("fused probs", got.probs, want.probs, 1e-5);
    near("fused value", got.value, want.value, 1e-5);
    const half = cpuFusedInfer(w, batch, true);
    near("f16 twin value", half.value, want.value, 1e-2);
  }
});
