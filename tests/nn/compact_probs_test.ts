// The compact readback (src/nn/compact_probs.ts, shaders/nn/compact.wgsl): the kernel packs each
// row's legal probabilities in move order (rows past 65,535 included), the host puts them back,
// and a GpuNet reading back compact gives the bits of one reading back every move, in both kernel
// families, for fully connected and cells heads, falling back where a row has too many legal moves.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  COMPACT_MIN_BATCH,
  COMPACT_WIDTH,
  compactWidthSetting,
  defaultCompactWidth,
  maxLegal,
  scatterCompact,
} from "../../src/nn/compact_probs.ts";
import { maskWords, packMask, randomMask } from "../../src/nn/mask_bits.ts";
import { syntheticCellsBatch } from "../../src/nn/cells_batch.ts";
import { HIVE_MOVES, NET_PRESETS, type NetConfig } from "../../src/nn/config.ts";
import {
  CpuNet,
  GpuNet,
  type NetBatch,
  type NetOutputs,
  type PolicyValueNet,
} from "../../src/nn/net.ts";
import { BENCH_LEGAL, benchBatch } from "../../src/nn/bench_latency.ts";
import { compactReadbackParity } from "../../src/nn/compact_check.ts";
import { initWeights } from "../../src/nn/params.ts";
import { rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { maxDiff } from "./helpers.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

/** A [rows, moves] mask with `legal(r)` legal moves in row r at random places (seeded). */
function maskOf(rows: number, moves: number, legal: (r: number) => number, seed: number) {
  return randomMask(rows, moves, legal, rng(seed));
}

Deno.test("compact readback helpers: width, most legal moves, scatter", () => {
  assert.equal(defaultCompactWidth(HIVE_MOVES), COMPACT_WIDTH);
  assert.equal(defaultCompactWidth(4 * COMPACT_WIDTH - 1), 0);
  // KIBITZ_NN_COMPACT's values (passed in: tests share the process environment).
  assert.equal(compactWidthSetting(HIVE_MOVES, undefined), COMPACT_WIDTH);
  assert.equal(compactWidthSetting(HIVE_MOVES, "off"), 0);
  assert.equal(compactWidthSetting(HIVE_MOVES, "0"), 0);
  assert.equal(compactWidthSetting(40, "6"), 6);
  for (const bad of ["-1", "1.5", "many"]) {
    assert.throws(() => compactWidthSetting(40, bad), /KIBITZ_NN_COMPACT must be off, 0 or/);
  }
  const moves = 70, mask = maskOf(3, moves, (r) => [5, 0, 70][r], 1);
  const bits = packMask(mask, 3, moves);
  assert.equal(maxLegal(bits, 3, moves), 70);
  assert.equal(maxLegal(bits, 2, moves), 5, "the rows asked for only");
  // Row r's legal moves get 100 r + 1, 100 r + 2, ... in move order.
  const width = 70, packed = new Float32Array(3 * width);
  for (let r = 0; r < 3; r++) {
    for (let k = 0; k < width; k++) packed[r * width + k] = 100 * r + k + 1;
  }
  const out = scatterCompact(packed, bits, 3, moves, width);
  for (let r = 0; r < 3; r++) {
    let k = 0;
    for (let m = 0; m < moves; m++) {
      const want = mask[r * moves + m] ? 100 * r + ++k : 0;
      assert.equal(out[r * moves + m], want, `row ${r} move ${m}`);
    }
  }
});

Deno.test(
  "compactProbs kernel: legal probabilities in move order, rows past 65,535",
  opts,
  async () => {
    for (
      const [rows, moves, width, legal] of [
        [5, 5489, 16, (r: number) => [16, 3, 0, 9, 12][r]],
        // More words a row than threads (200 words, 64 threads), and a row too full to fit.
        [3, 6400, 40, (r: number) => [40, 39, 60][r]],
        // The second dimension of the dispatch.
        [65_537, 32, 2, (r: number) => r % 3],
      ] as const
    ) {
      const mask = rows > 1000 ? new Float32Array(rows * moves) : maskOf(rows, moves, legal, rows);
      if (rows > 1000) {
        for (let r = 0; r < rows; r++) {
          for (let k = 0; k < legal(r); k++) mask[r * moves + ((r + 7 * k) % moves)] = 1;
        }
      }
      const probs = Float32Array.from({ length: rows * moves }, (_, i) => i % 9973 + 0.5);
      const bits = packMask(mask, rows, moves);
      const pool = new TensorPool(ctx!);
      const kernels = await loadKernels(ctx!, TEST_TILES, "direct");
      const rec = new GpuRecorder(ctx!, kernels, pool, false);
      const p = uploadTensor(ctx!, [rows, moves], probs, "probs");
      const m = uploadTensor(
        ctx!,
        [rows, maskWords(moves)],
        new Float32Array(bits.buffer),
        "mask",
      );
      const y = rec.compactProbs(p, m, width);
      rec.submit();
      const [got] = await readTensors(ctx!, [y]);
      for (let r = 0; r < rows; r++) {
        let k = 0;
        for (let i = 0; i < moves && k < width; i++) {
          if (!mask[r * moves + i]) continue;
          const at = r * width + k++;
          if (got[at] !== probs[r * moves + i]) {
            assert.fail(`${rows} rows: row ${r} slot ${k - 1}: ${got[at]}, want move ${i}'s`);
          }
        }
      }
      rec.destroy();
      pool.destroy();
      for (const t of [p, m]) t.buffer.destroy();
    }
  },
);

/** Inference on `net` against the same net reading back every move (the same bits). */
async function sameAsFull(net: GpuNet, batches: NetBatch[]): Promise<NetOutputs[]> {
  const got = [];
  for (const b of batches) got.push(await net.infer(b));
  net.compactReadback = false;
  for (let i = 0; i < batches.length; i++) {
    const full = await net.infer(batches[i]);
    assert.deepEqual(got[i].probs, full.probs, `batch ${i}: probs`);
    assert.deepEqual(got[i].value, full.value, `batch ${i}: value`);
  }
  net.compactReadback = true;
  return got;
}

Deno.test(
  "GpuNet: the compact readback gives the bits of the full one, and falls back where a row has too many legal moves",
  opts,
  async () => {
    const cfg: NetConfig = { ...NET_PRESETS.tiny, moves: 40 };
    const w = initWeights(cfg, 2);
    const cpu = new CpuNet(w);
    const batch = (legal: (r: number) => number, seed: number): NetBatch => ({
      ...syntheticBatch(cfg, 4, seed),
      mask: maskOf(4, 40, legal, seed),
    });
    // Fits (at most 6 of 40), too many in one row, no mask (all legal), fits again.
    const batches = [
      batch(() => 6, 3),
      batch((r) => r === 2 ? 7 : 3, 4),
      { ...syntheticBatch(cfg, 4, 5), mask: undefined },
      batch((r) => r, 6),
    ];
    for (const tiled of [false, true]) {
      const net = await GpuNet.create(ctx!, w, { tiled, tiles: TEST_TILES, precision: "f32" });
      assert.equal(net.compactWidth, 0, "40 moves: no compaction by default");
      net.compactWidth = 6;
      net.compactMinBatch = 1;
      const got = await sameAsFull(net, batches);
      assert.equal(net.compactCalls, 2, "batches 0 and 3 read back compact");
      for (let i = 0; i < batches.length; i++) {
        const want = await cpu.infer(batches[i]);
        assert.ok(maxDiff(got[i].probs, want.probs) < 1e-5, `tiled ${tiled} batch ${i}`);
      }
      // In flight: each call keeps its own mask for the scatter.
      const flight = await Promise.all([...batches, ...batches].map((b) => net.infer(b)));
      flight.forEach((o, i) => assert.deepEqual(o.probs, got[i % 4].probs, `in flight ${i}`));
      net.dispose();
    }
  },
);

Deno.test("GpuNet: the compact readback of a cells-head net, uploaded ahead", opts, async () => {
  const cfg: NetConfig = {
    ...NET_PRESETS.tiny,
    moves: 40,
    cells: { hidden: 4, planes: 3, biases: 5 },
  };
  const w = initWeights(cfg, 3);
  const net = await GpuNet.create(ctx!, w, { precision: "f32" });
  net.compactWidth = 6;
  net.compactMinBatch = 1;
  net.uploadAhead = true;
  // Tables of 6 entries: at most 6 legal moves a row.
  const batches = [1, 2].map((s) => syntheticCellsBatch(cfg, 3, 6, s));
  await sameAsFull(net, batches);
  assert.equal(net.compactCalls, 2);
  net.dispose();
});

Deno.test("benchBatch: Hive's legal-move counts where the net reads back compact", () => {
  const cfg = NET_PRESETS.small;
  const fake = (compactWidth: number) =>
    ({ config: cfg, halfPlanes: false, compactWidth }) as unknown as PolicyValueNet;
  const counts = (b: NetBatch) =>
    [0, 1, 2, 3].map((r) =>
      maxLegal(packMask(b.mask!, 4, cfg.moves).subarray(r * 172), 1, cfg.moves)
    );
  for (const n of counts(benchBatch(fake(COMPACT_WIDTH), 4))) {
    assert.ok(n >= BENCH_LEGAL[0] && n <= BENCH_LEGAL[1], `${n} legal moves`);
  }
  // The synthetic mask's 70 % where the net reads back every move, or asked for.
  for (const b of [benchBatch(fake(0), 4), benchBatch(fake(COMPACT_WIDTH), 4, { full: true })]) {
    for (const n of counts(b)) assert.ok(n > 3000, `${n} legal moves`);
  }
});

Deno.test(
  "compactReadbackParity (what the browser check runs): nothing differs",
  opts,
  async () => {
    assert.deepEqual(await compactReadbackParity(ctx!), []);
  },
);

Deno.test("GpuNet: plans below COMPACT_MIN_BATCH have no compaction", opts, async () => {
  const cfg: NetConfig = { ...NET_PRESETS.tiny, moves: 40 };
  const net = await GpuNet.create(ctx!, initWeights(cfg, 5), { precision: "f32" });
  net.compactWidth = 6;
  const small = { ...syntheticBatch(cfg, 4, 1), mask: maskOf(4, 40, () => 2, 1) };
  await net.infer(small);
  assert.equal(net.compactCalls, 0);
  const labels = (size: number) => net.planFor(size, false).then((r) => r.ops.map((o) => o.label));
  assert.ok(!(await labels(4)).includes("compactProbs"));
  assert.ok((await labels(COMPACT_MIN_BATCH)).includes("compactProbs"));
  net.dispose();
});
