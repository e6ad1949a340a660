// The cells policy head on WebGPU (llvmpipe in CI): cellLogits and cellLogitsBackward against
// the CPU twin and a plain TypeScript loop of the spec, on random tables with padding rows and -1
// terms, in both kernel families (buffers reused from the pool hold garbage first, so the
// zero-fills are tested); then a tiny cells net on GpuNet against CpuNet: inference (fused,
// unfused, f16-emulated, chunked), move tables whose width changes between calls, training steps.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS, type NetConfig } from "../../src/nn/config.ts";
import { cellLogits, cellLogitsBackward } from "../../src/nn/cpu/cell_logits.ts";
import { type GpuTensor, readTensors, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { syntheticCellsBatch } from "../../src/nn/cells_batch.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
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

/** A random move table [b, w, 4]: distinct move indices, padding rows, -1 terms, a == b once. */
export function randomTable(
  b: number,
  w: number,
  moves: number,
  qper: number,
  nbias: number,
  seed: number,
): CpuTensor {
  const next = rng(seed), pick = (n: number) => Math.floor(next() * n);
  const t = cpuTensor([b, w, 4]);
  for (let n = 0; n < b; n++) {
    const ids = [...Array(moves).keys()];
    for (let i = ids.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    for (let j = 0; j < w; j++) {
      const e = (n * w + j) * 4;
      // Position 1 is all padding; elsewhere a quarter of the rows are.
      const pad = n === 1 || next() < 0.25;
      t.data[e] = pad ? -1 : ids[j];
      t.data[e + 1] = next() < 0.2 ? -1 : pick(qper);
      t.data[e + 2] = next() < 0.4 ? -1 : pick(qper);
      t.data[e + 3] = next() < 0.15 ? -1 : pick(nbias);
      if (pad && next() < 0.5) t.data.fill(-1, e, e + 4);
    }
    // One entry with a == b: its gradient reaches that cell twice.
    const e = n * w * 4;
    if (t.data[e] >= 0) t.data[e + 2] = t.data[e + 1];
  }
  return t;
}

/** The spec's formula as a loop: logits, and for dlogits the gradients of q and bias. */
export function naiveCells(
  q: CpuTensor,
  table: CpuTensor,
  bias: Float32Array,
  moves: number,
  dlogits: Float32Array,
): { logits: Float32Array; dq: Float32Array; dbias: Float32Array } {
  const b = q.shape[0], w = table.shape[1], qper = q.data.length / b;
  const logits = new Float32Array(b * moves), dq = new Float32Array(q.data.length);
  const dbias = new Float32Array(bias.length);
  for (let n = 0; n < b; n++) {
    for (let j = 0; j < w; j++) {
      const [m, a, c, s] = table.data.subarray((n * w + j) * 4, (n * w + j) * 4 + 4);
      if (m < 0) continue;
      let v = 0;
      const g = dlogits[n * moves + m];
      if (a >= 0) v += q.data[n * qper + a], dq[n * qper + a] += g;
      if (c >= 0) v += q.data[n * qper + c], dq[n * qper + c] += g;
      if (s >= 0) v += bias[s], dbias[s] += g;
      logits[n * moves + m] = v;
    }
  }
  return { logits, dq, dbias };
}

function close(name: string, got: Float32Array, want: Float32Array): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = maxDiff(got, want), tol = 1e-5 * Math.max(1, maxAbs(want));
  assert.ok(err <= tol, `${name}: max difference ${err} > ${tol}`);
}

/** Runs both ops on the GPU, the logits and dq outputs landing in garbage-filled pool buffers. */
async function cellsOnGpu(
  tiled: boolean,
  q: CpuTensor,
  table: CpuTensor,
  bias: CpuTensor,
  moves: number,
  dlogits: CpuTensor,
) {
  const { r, pool } = await recorderOverGarbage(ctx!, tiled, [[q.shape[0], moves], q.shape]);
  const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
  const gq = up(q), gt = up(table), gb = up(bias), gd = up(dlogits);
  const gdb = up(cpuTensor(bias.shape, new Float32Array(bias.data.length).fill(-7)));
  const logits = r.cellLogits(gq, gt, gb, moves);
  const dq = r.cellLogitsBackward(gq, gt, gd, gdb);
  r.submit();
  const [l, d, db] = await readTensors(ctx!, [logits, dq, gdb] as GpuTensor[]);
  r.destroy();
  pool.destroy();
  for (const t of [gq, gt, gb, gd, gdb]) t.buffer.destroy();
  return { logits: l, dq: d, dbias: db };
}

// [batch, table width, moves, planes, H, W, biases]: the second crosses the 64-wide workgroups
// (5 x 30 entries) and gives each slot entries from several positions.
const CASES = [
  [3, 9, 37, 3, 4, 5, 5],
  [5, 30, 100, 3, 4, 5, 5],
];
for (const tiled of [false, true]) {
  Deno.test(
    `GPU cellLogits and cellLogitsBackward match the spec's loop (${
      tiled ? "tiled" : "direct"
    } kernels)`,
    opts,
    async () => {
      for (const [b, w, moves, planes, h, wd, nbias] of CASES) {
        const q = randTensor([b, planes, h, wd], 11);
        const table = randomTable(b, w, moves, planes * h * wd, nbias, 12);
        const bias = randTensor([nbias], 13);
        const dlogits = randTensor([b, moves], 14);
        const got = await cellsOnGpu(tiled, q, table, bias, moves, dlogits);
        const want = naiveCells(q, table, bias.data, moves, dlogits.data);
        close("logits", got.logits, want.logits);
        close("dq", got.dq, want.dq);
        close("dbias", got.dbias, want.dbias);
        // The CPU twin agrees too.
        const dbias = cpuTensor(bias.shape);
        close("twin logits", got.logits, cellLogits(q, table, bias, moves).data);
        close("twin dq", got.dq, cellLogitsBackward(q, table, dlogits, dbias).data);
        close("twin dbias", got.dbias, dbias.data);
        // The padded position's logits and planes' gradient are all zero.
        assert.ok(got.logits.subarray(moves, 2 * moves).every((v) => v === 0));
      }
    },
  );
}

/** The tiny preset with a cells head of 4 hidden channels, 3 score planes and 5 biases. */
const CELLS_CFG: NetConfig = { ...NET_PRESETS.tiny, cells: { hidden: 4, planes: 3, biases: 5 } };

for (const family of GPU_FAMILIES) {
  Deno.test(
    `GPU cells net matches CpuNet: inference at changing table widths, 3 training steps (${family.name})`,
    opts,
    async () => {
      const w = initWeights(CELLS_CFG, 7);
      const trained = await assertGpuNetTracksCpu(
        ctx!,
        w,
        family,
        // Widths 14, 20 (the plan grows from 16 to 32 entries) and 13 (padded to 32).
        [[4, 14, 3], [3, 20, 4], [4, 13, 5]].map(([size, width, seed]) => ({
          label: `width ${width}`,
          batch: syntheticCellsBatch(CELLS_CFG, size, width, seed),
        })),
        [0, 1, 2].map((s) => syntheticCellsBatch(CELLS_CFG, 4, 12 + 3 * s, 10 + s)),
        syntheticCellsBatch(CELLS_CFG, 2, 12, 20),
      );
      // The trained policy.cells.b moved: the bias gradient reached it.
      assert.ok(maxAbs(trained.gpu.tensors.get("policy.cells.b")!.data) > 0);
    },
  );
}

Deno.test(
  "GPU cells net: chunked inference slices the table; f16-emulated plan matches the CPU fused graph",
  opts,
  async () => {
    const w = initWeights(CELLS_CFG, 9);
    const whole = await GpuNet.create(ctx!, w),
      split = await GpuNet.create(ctx!, w, { maxBatch: 2 });
    const batch = syntheticCellsBatch(CELLS_CFG, 5, 15, 6);
    const a = await whole.infer(batch), b = await split.infer(batch);
    near("chunked probs", b.probs, a.probs, 1e-6);
    near("chunked value", b.value, a.value, 1e-6);
    whole.dispose();
    split.dispose();
    const f16 = await assertF16EmulatedMatches(ctx!, w, batch);
    f16.dispose();
  },
);

Deno.test("GPU cells net rejects a batch without its move table", opts, async () => {
  const net = await GpuNet.create(ctx!, initWeights(CELLS_CFG, 3));
  const b = syntheticBatch(CELLS_CFG, 2, 1);
  await assert.rejects(net.infer(b), /move table/);
  net.dispose();
});

Deno.test(
  "bench nn-cells: one row per (batch, head), the policy heads' parameter counts",
  opts,
  async () => {
    const { suite } = await import("../../src/nn/cells_bench.ts");
    const r = await suite.run({
      full: false,
      backend: "auto",
      args: ["model=tiny", "batch=2", "width=16"],
      log: () => {},
    });
    const rows = r.tables[0].rows;
    assert.deepEqual(rows.map((x) => [x[0], x[1]]), [["fc", 2], ["cells", 2]]);
    // tiny: FC head 2 x 8 conv + 4 x 2 BN values + 12 x 72 + 12; cells head 16 x 8 + 4 x 16 + 16 x 16 + 17.
    assert.deepEqual(rows.map((x) => x[7]), [16 + 8 + 864 + 12, 128 + 64 + 256 + 17]);
    for (const x of rows) {
      for (const v of x.slice(2, 6)) assert.ok(typeof v === "number" && v > 0, String(x));
    }
    assert.equal(rows[0][6], null);
    assert.ok(typeof rows[1][6] === "number" && rows[1][6] > 0);
    await assert.rejects(
      suite.run({ full: false, backend: "auto", args: ["size=3"], log: () => {} }),
      /unknown argument "size="/,
    );
  },
);
