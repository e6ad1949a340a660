// The sparse plane upload (src/nn/sparse_planes.ts, src/nn/gpu/sparse_planes.ts): the packing and
// its CPU twin keep every value's bits, a batch too dense for the layout falls back, the GPU's
// expansion equals the twin (positions past 65,535 included), and a GpuNet uploading sparse gives
// the bits of one uploading dense: f32 and f16 plans, f16 and f32 planes, uploaded ahead, in flight.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { readBuffer, storageBuffer, writeBuffer } from "../../src/gpu/buffers.ts";
import { deviceHasF16, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { SparseUpload } from "../../src/nn/gpu/sparse_planes.ts";
import { GpuNet, type NetBatch, type NetOutputs } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { planesF32 } from "../../src/nn/planes.ts";
import {
  expandSparsePlanes,
  packSparsePlanes,
  SPARSE_MIN_BATCH,
  sparseLayout,
  sparseUploadSetting,
} from "../../src/nn/sparse_planes.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { HIVE_BOARD, HIVE_PLANES } from "../../src/hive/encoding.ts";
import { rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const f16opts = { ...opts, ignore: !ctx || !deviceHasF16(ctx) };
const cfg = NET_PRESETS.tiny;
const AREA = cfg.height * cfg.width;

/**
 * Planes of `n` positions as Hive's look: plane 2 constant (k/8), the others 0 but for a few cells
 * of multiples of 1/8 (exact in f16), one of them -0; `dense`: every cell a random value.
 */
function planesOf(n: number, seed: number, dense = false): Float32Array {
  const next = rng(seed), per = cfg.planes * AREA, x = new Float32Array(n * per);
  for (let p = 0; p < n; p++) {
    if (dense) {
      for (let i = 0; i < per; i++) x[p * per + i] = Math.floor(next() * 17 - 8) / 8;
      continue;
    }
    x.fill(Math.floor(next() * 9) / 8, p * per + 2 * AREA, p * per + 3 * AREA);
    for (let k = next() * 7; k > 0; k--) {
      x[p * per + Math.floor(next() * per)] = Math.floor(next() * 17 - 8) / 8 || 1;
    }
    x[p * per + 3 * AREA + 5] = -0;
  }
  return x;
}

/** The values' bits (-0 and 0 differ). */
function bitsOf(x: Float32Array): Uint32Array {
  return new Uint32Array(x.buffer, x.byteOffset, x.length);
}

function same(got: NetOutputs, want: NetOutputs, what: string): void {
  assert.deepEqual(got.probs, want.probs, `${what}: probs`);
  assert.deepEqual(got.value, want.value, `${what}: value`);
}

Deno.test("sparse planes: packing and its twin keep the bits; too dense falls back", () => {
  const n = 5, L = sparseLayout(n, cfg.planes, AREA);
  assert.deepEqual(L, {
    bases: n * cfg.planes,
    first: n * cfg.planes + n + 1,
    entries: Math.floor(n * cfg.planes * AREA / 16),
    words: n * cfg.planes + n + 1 + 2 * Math.floor(n * cfg.planes * AREA / 16),
  });
  const x = planesOf(n, 1);
  for (const src of [x, new Float16Array(x)]) {
    const out = new Uint32Array(L.words + 3).fill(0xdeadbeef);
    const used = packSparsePlanes(src, n, cfg.planes, AREA, out);
    assert.ok(used > L.first && used <= L.words);
    // The constant plane and the zero planes need no entries: a few per position.
    const entries = out[L.bases + n];
    assert.equal(used, L.first + 2 * entries);
    assert.ok(entries >= n && entries <= 8 * n, `${entries} entries`);
    const back = expandSparsePlanes(out.subarray(0, used), n, cfg.planes, AREA);
    assert.deepEqual(bitsOf(back), bitsOf(planesF32(src)), src.constructor.name);
  }
  // f16 planes compared a word (two halves) at a time where they can be: an odd area, and planes
  // that start off a word, take the one-half loop; both give the same form.
  const halves = (len: number, at: [number, number][]) => {
    const x = new Float16Array(len + 1);
    for (const [k, v] of at) x[1 + k] = v;
    return x.subarray(1); // off a word
  };
  for (
    const [src, area] of [
      [halves(8 * 2 * 7, [[2, 0.5], [6, -0], [20, 2], [50, 0.25]]), 7],
      [halves(8 * 2 * 10, [[1, 1], [3, -0], [19, 0.5], [77, 2], [158, 3]]), 10],
    ] as const
  ) {
    const planes = 2, m = 8;
    const out = new Uint32Array(sparseLayout(m, planes, area).words + 8);
    const used = packSparsePlanes(src, m, planes, area, out);
    assert.ok(used > 0, `area ${area}`);
    const back = expandSparsePlanes(out.subarray(0, used), m, planes, area);
    assert.deepEqual(bitsOf(back), bitsOf(planesF32(src)), `area ${area}`);
    const aligned = new Float16Array(src);
    const again = new Uint32Array(out.length);
    assert.equal(packSparsePlanes(aligned, m, planes, area, again), used);
    assert.deepEqual(again, out, `area ${area}: the word loop's form`);
  }
  // A batch with every cell different: more entries than the layout holds.
  const dense = planesOf(n, 2, true);
  assert.equal(packSparsePlanes(dense, n, cfg.planes, AREA, new Uint32Array(L.words)), -1);
  assert.throws(
    () => packSparsePlanes(x, n, cfg.planes, AREA, new Uint32Array(L.words - 1)),
    /words, \d+ needed/,
  );
  assert.throws(
    () => packSparsePlanes(x.subarray(1), n, cfg.planes, AREA, new Uint32Array(L.words)),
    /values, \d+ needed/,
  );
  // Hive at batch 256: the layout holds 1,014 entries a position on average (real games have
  // about 200, at most 601), at most a quarter of the f16 planes' 8.3 MB.
  const hive = sparseLayout(256, HIVE_PLANES, HIVE_BOARD * HIVE_BOARD);
  assert.equal(Math.floor(hive.entries / 256), 1014);
  assert.ok(hive.words * 4 <= 256 * HIVE_PLANES * HIVE_BOARD * HIVE_BOARD * 2 / 4 + 1e5);
  // Unset: dense on hardware adapters (sessions 41 and 43's A/B), sparse on software ones.
  assert.equal(sparseUploadSetting(true, undefined), false);
  assert.equal(sparseUploadSetting(false, undefined), true);
  assert.equal(sparseUploadSetting(false, ""), true);
  for (const hardware of [true, false]) {
    assert.equal(sparseUploadSetting(hardware, "on"), true);
    assert.equal(sparseUploadSetting(hardware, "off"), false);
  }
  assert.throws(
    () => sparseUploadSetting(true, "1"),
    /KIBITZ_NN_SPARSE must be on or off, got "1"/,
  );
});

Deno.test(
  "the expansion kernel equals its twin, f32 and emulated f16, past 65,535 positions",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "direct");
    const half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
    for (const [n, planes, area] of [[3, 3, 300], [65_537, 2, 3]] as const) {
      const next = rng(n), x = new Float32Array(n * planes * area);
      // A few cells a position off their plane's base; bases vary by plane.
      for (let p = 0; p < n; p++) {
        for (let c = 0; c < planes; c++) {
          x.fill((p + c) % 3 - 1, (p * planes + c) * area, (p * planes + c + 1) * area);
        }
        if (p % 4 === 0) x[p * planes * area + Math.floor(next() * planes * area)] = 0.375;
      }
      if (n === 3) { for (let i = 0; i < 40; i++) x[planes * area + 7 * i] = i / 8; // > 256 threads' worth
       }
      const sp = new SparseUpload(ctx!, n, planes, area);
      const words = sp.pack(x);
      assert.ok(words, `${n} positions fit`);
      writeBuffer(ctx!, sp.buffer, words);
      const want = bitsOf(expandSparsePlanes(words, n, planes, area));
      assert.deepEqual(bitsOf(planesF32(x)), want, "the twin");
      for (const pipeline of [kernels.expandPlanes, half.expandPlanesH]) {
        const target = storageBuffer(ctx!, x.byteLength + 16, "target");
        writeBuffer(ctx!, target, new Float32Array(x.length + 4).fill(9));
        const enc = ctx!.device.createCommandEncoder();
        sp.encode(enc, pipeline, target);
        ctx!.device.queue.submit([enc.finish()]);
        const got = new Uint32Array(await readBuffer(ctx!, target));
        for (let i = 0; i < want.length; i++) {
          if (got[i] !== want[i]) {
            assert.fail(
              `${n} positions: value ${i}: ${got[i]}, want ${want[i]}`,
            );
          }
        }
        assert.deepEqual([...new Float32Array(got.buffer, want.length * 4)], [9, 9, 9, 9]);
        target.destroy();
      }
      sp.destroy();
    }
  },
);

/** Inference of `batches` uploading sparse, against the same net uploading dense: the same bits. */
async function sameAsDense(net: GpuNet, batches: NetBatch[], what: string): Promise<void> {
  net.sparseUpload = false;
  const want: NetOutputs[] = [];
  for (const b of batches) want.push(await net.infer(b));
  net.sparseUpload = true;
  const calls = net.sparseCalls;
  for (let i = 0; i < batches.length; i++) {
    same(await net.infer(batches[i]), want[i], `${what} ${i}`);
  }
  assert.equal(net.sparseCalls, calls + batches.length, `${what}: every call sparse`);
  // In flight, sparse and dense calls mixed.
  const got = await Promise.all(
    [...batches, ...batches].map((b, i) => {
      net.sparseUpload = i % 3 !== 1;
      return net.infer(b);
    }),
  );
  net.sparseUpload = true;
  got.forEach((o, i) => same(o, want[i % batches.length], `${what} in flight ${i}`));
}

Deno.test(
  "GpuNet: sparse uploads give the bits of dense ones (f32 and emulated f16 plans, f16 and f32 planes, ahead)",
  opts,
  async () => {
    const w = initWeights(cfg, 3);
    const n = 4;
    const mask = syntheticBatch(cfg, n, 1).mask;
    const a = planesOf(n, 3), b = planesOf(n, 4);
    for (
      const [what, options] of [
        ["f32 direct", { tiled: false, precision: "f32" }],
        ["f32 tiled", { tiled: true, tiles: TEST_TILES, precision: "f32" }],
        ["f16 emulated", { tiled: true, tiles: TEST_TILES, fused: true, f16Emulate: true }],
      ] as const
    ) {
      const net = await GpuNet.create(ctx!, w, options);
      net.sparseMinBatch = 1;
      for (const ahead of [false, true]) {
        net.uploadAhead = ahead;
        const batches: NetBatch[] = [a, b, new Float16Array(b), new Float16Array(a)]
          .map((planes) => ({ size: n, planes, mask }));
        await sameAsDense(net, batches, `${what}${ahead ? " ahead" : ""}`);
      }
      // Too dense for the layout: dense, the same bits.
      net.uploadAhead = false;
      const dense = { size: n, planes: planesOf(n, 5, true), mask };
      const calls = net.sparseCalls;
      const got = await net.infer(dense);
      assert.equal(net.sparseCalls, calls, `${what}: a dense batch goes up dense`);
      net.sparseUpload = false;
      same(got, await net.infer(dense), `${what}: dense batch`);
      net.dispose();
    }
  },
);

Deno.test("GpuNet: batches below SPARSE_MIN_BATCH, and training, upload dense", opts, async () => {
  const w = initWeights(cfg, 4);
  const net = await GpuNet.create(ctx!, w, { precision: "f32" });
  assert.equal(net.sparseMinBatch, SPARSE_MIN_BATCH);
  assert.equal(net.sparseUpload, sparseUploadSetting(!ctx!.report.isFallback));
  net.sparseUpload = true;
  const small = { ...syntheticBatch(cfg, 4, 1), planes: planesOf(4, 6) };
  await net.infer(small);
  await net.trainStep(small, { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 }, true);
  assert.equal(net.sparseCalls, 0);
  const big = { size: SPARSE_MIN_BATCH, planes: planesOf(SPARSE_MIN_BATCH, 7) };
  const out = await net.infer(big);
  assert.equal(net.sparseCalls, 1);
  net.sparseUpload = false;
  same(out, await net.infer(big), "batch 32");
  net.dispose();
});

Deno.test(
  "GpuNet on shader-f16: sparse f16 planes give the bits of dense ones",
  f16opts,
  async () => {
    const net = await GpuNet.create(ctx!, initWeights(cfg, 6), { fused: true, precision: "f16" });
    net.sparseMinBatch = 1;
    const mask = syntheticBatch(cfg, 4, 2).mask;
    // Seeds whose batches fit the layout (seed 8's did not: it went up dense, and the test failed
    // on the H200 in session 41 for that reason alone).
    const batches = [7, 9].flatMap((s) => {
      const x = planesOf(4, s);
      return [{ size: 4, planes: x, mask }, { size: 4, planes: new Float16Array(x), mask }];
    });
    const words = new Uint32Array(sparseLayout(4, cfg.planes, AREA).words);
    for (const b of batches) {
      assert.ok(packSparsePlanes(b.planes, 4, cfg.planes, AREA, words) > 0, "a batch too dense");
    }
    for (const ahead of [false, true]) {
      net.uploadAhead = ahead;
      await sameAsDense(net, batches, `real f16${ahead ? " ahead" : ""}`);
    }
    net.dispose();
  },
);
