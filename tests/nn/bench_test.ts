// `bench nn` (software adapter: the tiny model in quick mode): large batches also with 2 calls in
// flight, the latency section once per requested storage, and the tuning cache left alone.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { bridgeAb, modelBytes, planBridges, suite, uploadAb } from "../../src/nn/bench.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { unfusedWinogradBytes, winogradTraffic } from "../../src/nn/gpu/winograd_fused.ts";
import { MIXED_SHAPE } from "../../src/nn/gpu/winograd_mixed_tune.ts";
import { tuneResult } from "./helpers.ts";
import { setTuneCacheEnabled, tuneCachePath } from "../../src/nn/gpu/tune_cache.ts";

const ctx = await getGpu();

Deno.test({
  name:
    "bench nn quick: 2 calls in flight at 64 and 256, the GPU-time ceiling; latency per storage; no cache",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    try {
      const r = await suite.run({
        full: false,
        backend: "gpu",
        args: ["quick=1", "only=infer,latency", "precision=f32,f16"],
        log: () => {},
      });
      const infer = r.tables.find((t) => /^Inference/i.test(t.title))!;
      const piped = infer.rows.filter((x) => String(x[3]).endsWith(", 2 calls in flight"));
      // The default at 64 and 256; the A/Bs without bridges and without F(6x6) at 256.
      assert.deepEqual(piped.map((x) => x[4]), [64, 256, 256, 256]);
      for (const x of piped) assert(Number(x[5]) > 0, String(x));
      // Batch 256 also by the plan's GPU time alone (the pipelining ceiling).
      const alone = infer.rows.filter((x) =>
        /GPU time alone \([\d.]+ ms a call\)$/.test(String(x[3]))
      );
      assert.deepEqual(alone.map((x) => x[4]), [256, 256, 256]);
      for (const x of alone) assert(Number(x[5]) > 0, String(x));
      const lat = r.tables.find((t) => /^Latency/.test(t.title))!;
      // No shader-f16 here: the f16 pass is skipped, and the f32 one names its storage.
      const labels = new Set(lat.rows.map((x) => x[0]));
      assert.deepEqual(
        [...labels],
        ctx!.report.features.includes("shader-f16") ? ["tiny f32", "tiny f16"] : ["tiny f32"],
      );
      assert.equal(lat.rows.filter((x) => x[2] === "floor").length, 1);
      // Batch 1 beyond the floor both ways: the plan's GPU time from calls alone, and warm.
      const summary = r.tables.find((t) => /^Issue 15 summary/.test(t.title))!;
      const beyond = summary.rows.filter((x) => /^batch 1: GPU \+ encoding/.test(String(x[0])));
      assert.deepEqual(beyond.map((x) => String(x[0]).replace(/^.*time /, "")), [
        "from calls alone (the GPU idles through each floor and its clocks drop)",
        "warm (back to back)",
      ]);
      const f32Lat = lat.rows.filter((x) => x[0] === "tiny f32");
      const encode = Number(f32Lat.find((x) => x[2] === "one call" && x[3] === 1)![6]);
      const warm = Number(f32Lat.find((x) => x[2] === "GPU only, warm" && x[3] === 1)![5]);
      assert.ok(encode > 0 && warm > 0, `${encode} ${warm}`);
      if (labels.size === 1) assert.equal(Number(beyond[1][1]), warm + encode);
      // bench nn times the tuner itself: the disk cache is off for the process.
      assert.equal(tuneCachePath(), null);
      await assert.rejects(
        suite.run({ full: false, backend: "gpu", args: ["precision=f8"], log: () => {} }),
        /precision= takes f32, f16 or auto, got "f8"/,
      );
    } finally {
      setTuneCacheEnabled(true);
    }
  },
});

Deno.test({
  name: "bench nn modes=: the inference rows of the named graphs only; an unknown one is an error",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    try {
      const r = await suite.run({
        full: false,
        backend: "gpu",
        args: ["quick=1", "only=infer", "tune=", "modes=gpu-fused-nobridge"],
        log: () => {},
      });
      const infer = r.tables.find((t) => /^Inference/i.test(t.title))!;
      assert.ok(infer.rows.length > 0);
      for (const x of infer.rows) assert.match(String(x[3]), /^fused-nobridge/, String(x));
      await assert.rejects(
        suite.run({
          full: false,
          backend: "gpu",
          args: ["quick=1", "only=infer", "modes=gpu-fused-f8"],
          log: () => {},
        }),
        /modes= takes gpu-fused, .*gpu-fused-f16 in quick mode/,
      );
    } finally {
      setTuneCacheEnabled(true);
    }
  },
});

/**
 * Runs `bench nn` quick on the GPU with `args`, then turns the tuning cache back on (the bench
 * turns it off for its process: module state, not the environment, which the test modules running
 * beside this one share).
 */
async function quickNn(args: string[]) {
  try {
    return await suite.run({
      full: false,
      backend: "gpu",
      args: ["quick=1", ...args],
      log: () => {},
    });
  } finally {
    setTuneCacheEnabled(true);
  }
}

Deno.test({
  name: "bench nn only=train: the step one at a time and 2 in flight (steady state), a row each",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const r = await quickNn(["only=train"]);
    const train = r.tables.find((t) => /^Training step/.test(t.title))!;
    const timers = train.rows.map((x) => String(x[6]));
    assert.ok(timers.some((t) => /^wall, mean of \d+/.test(t)), timers.join(" | "));
    const piped = train.rows.filter((x) => String(x[6]).includes("2 steps in flight, steady"));
    assert.equal(piped.length, 1, timers.join(" | "));
    assert.ok(Number(piped[0][4]) > 0 && Number(piped[0][5]) > 0, String(piped[0]));
  },
});

Deno.test({
  name:
    "bench nn batches=256: batch-256 rows only, the dense A/B and 8 calls in flight, the plan's kernel profile",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const r = await quickNn(["only=infer", "tune=", "modes=gpu-fused", "batches=256"]);
    const infer = r.tables.find((t) => /^Inference/i.test(t.title))!;
    const graphs = infer.rows.map((x) => String(x[3]));
    for (const x of infer.rows) assert.equal(x[4], 256, String(x));
    assert.ok(graphs.some((g) => g.endsWith(", 2 calls in flight")), graphs.join(" | "));
    for (
      const end of [
        ", 2 calls in flight, planes uploaded dense (A/B)",
        ", 8 calls in flight",
        ", 8 calls in flight, map requests in groups of 4",
        ", 8 calls in flight, inputs uploaded ahead",
      ]
    ) {
      const row = infer.rows.filter((x) => String(x[3]).endsWith(end));
      assert.equal(row.length, 1, `${end}: ${graphs.join(" | ")}`);
      assert.ok(Number(row[0][5]) > 0, String(row[0]));
    }
    const prof = r.tables.find((t) => /^Where a plan's GPU time goes/.test(t.title))!;
    const plans = new Set(prof.rows.map((x) => String(x[0])));
    assert.deepEqual([...plans], ["inference, batch 256"]);
    assert.ok(prof.rows.some((x) => x[1] === "stem and tower" && x[2] !== "(all)"));
    // The queue's copies of such a call: the upload and the readback copy, timed.
    const copies = prof.rows.filter((x) => x[1] === "queue copies");
    // The bench's planes go up sparse (session 34): both uploads are timed.
    assert.deepEqual(copies.map((x) => String(x[2]).replace(/, [\d.]+ MB$/, "")), [
      "upload (writeBuffer), dense planes",
      "upload (writeBuffer), sparse planes",
      "readback copy",
    ]);
    for (const x of copies) assert.ok(Number(x[4]) >= 0, String(x));
    // What separates two runs of the plan (session 41): a pass boundary, a submit, a map request.
    const gaps = prof.rows.filter((x) => x[1] === "between calls");
    assert.deepEqual(gaps.map((x) => String(x[2]).replace(/,.*$/, "")), [
      "two passes in one command buffer",
      "two submits",
      "two submits",
    ]);
    for (const x of gaps) assert.ok(Number.isFinite(Number(x[4])), String(x));
    // The summary's rows of them, per storage (its figures are the issue model's: empty here).
    const summary = r.tables.find((t) => /^Issue 15 summary/.test(t.title))!;
    const gapRows = summary.rows.filter((x) =>
      /GPU ms from one run of the plan/.test(String(x[0]))
    );
    assert.equal(gapRows.length, 2);
    await assert.rejects(
      quickNn(["only=infer", "batches=0"]),
      /batches= takes batch sizes like 8,256, got "0"/,
    );
  },
});

Deno.test("the tuner table's traffic model: each row at its own tile, mixed tiles by their slices", () => {
  const dims = { n: 256, ci: 256, co: 256, h: 26, w: 26 };
  const row = (shape: string, storage = "f16") => tuneResult({ shape, dims, storage });
  const cand = "128x128k8t256ruvp";
  const f7 = winogradTraffic(7, dims, 2)[1].dramBytes;
  // F(7x7)'s rows were modelled as F(4x4)'s until session 35.
  assert.equal(modelBytes(row("F7:256x256x26x26->256"), cand), f7);
  assert.notEqual(f7, winogradTraffic(4, dims, 2)[1].dramBytes);
  assert.equal(
    modelBytes(row("F4:256x256x26x26->256", "f32"), cand),
    winogradTraffic(4, dims, 4)[1].dramBytes,
  );
  // The mixed tiles: 289 slices of 4 columns an image, 10.8 % fewer than F(7x7)'s 81 of 16.
  const mixed = modelBytes(row(`${MIXED_SHAPE}256x256x26x26->256`), `mixed ${cand}`)!;
  assert.equal(mixed, unfusedWinogradBytes(289, 1024, dims, 2, 128));
  assert.ok(mixed < f7, `${mixed} < ${f7}`);
  assert.equal(modelBytes(row(`${MIXED_SHAPE}256x256x26x26->256`), `F7 ${cand}`), f7);
  // Bridged residual blocks (several convs a row), direct convs and weight gradients have no row
  // model.
  assert.equal(
    modelBytes(row(`F7:256x256x26x26->256 ${cand}, a bridged residual block`), "one conv"),
    null,
  );
  assert.equal(modelBytes(row("K3h:256x24x26x26->256"), "splits=1"), null);
  assert.equal(modelBytes(row("wgrad F4:256x256x26x26->256"), "vpu"), null);
});

Deno.test("planBridges: how a plan's tower is joined, from its labels", () => {
  assert.equal(planBridges(["winogradInput4", "wino.x.gemm", "winogradOutput4"]), "unbridged");
  assert.equal(planBridges(["wino.bridge.F4.26x26.f32.f32-f32", "x"]), "plain");
  assert.equal(
    planBridges(["wino.bridge.F7.26x26.f16.f32-f32", "wino.bridge.F7.26x26.f16.f32-f32.y.c"]),
    "staged",
  );
});

/** The A/B tests' network: two residual blocks of 8 filters on 7 x 7 (F(4x4) bridges fit). */
const AB_CONFIG = {
  planes: 4,
  moves: 12,
  valueHidden: 16,
  filters: 8,
  blocks: 2,
  height: 7,
  width: 7,
};

Deno.test({
  name: "bridgeAb: the plan's GPU time with its tower joined each other way",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const w = initWeights(AB_CONFIG, 1);
    const opts = { tiled: true, tiles: TEST_TILES, fused: true, winograd: 4 as const };
    const rows: [string, number][] = [];
    const logged: string[] = [];
    for (const style of ["plain", "staged"] as const) {
      const net = await GpuNet.create(ctx!, w, { ...opts, bridgeStyle: style });
      try {
        await bridgeAb(ctx!, net, 3, w, opts, (how, ms) => rows.push([how, ms]), (l) => {
          logged.push(l);
        });
      } finally {
        net.dispose();
      }
    }
    assert.deepEqual(logged, []);
    assert.deepEqual(rows.map(([how]) => how), [
      "tower without bridges (the tuner's: plain)",
      "tower column-staged bridges (the tuner's: plain)",
      "tower without bridges (the tuner's: staged)",
      "tower one-thread-a-tile bridges (the tuner's: staged)",
    ]);
    for (const [how, ms] of rows) assert.ok(ms > 0, how);
  },
});

Deno.test({
  name: "the upload A/B flips the net's way both ways and restores it",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const net = await GpuNet.create(ctx!, initWeights(AB_CONFIG, 1));
    try {
      for (
        const [start, how, key] of [[true, "planes uploaded dense", "dense"], [
          false,
          "planes uploaded sparse",
          "sparse",
        ]] as const
      ) {
        net.sparseUpload = start;
        const ab = uploadAb(net);
        assert.deepEqual([ab.how, ab.key], [how, key]);
        const restore = ab.set();
        assert.equal(net.sparseUpload, !start);
        restore();
        assert.equal(net.sparseUpload, start);
      }
    } finally {
      net.dispose();
    }
  },
});
