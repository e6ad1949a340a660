// `bench nn` (software adapter: the tiny model in quick mode): large batches also with 2 calls in
// flight, the latency section once per requested storage, and the tuning cache left alone.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { suite } from "../../src/nn/bench.ts";
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
    await assert.rejects(
      quickNn(["only=infer", "batches=0"]),
      /batches= takes batch sizes like 8,256, got "0"/,
    );
  },
});
