// The browser bundle is self-contained and works: built into a temporary folder, imported by URL,
// it solves Kuhn, counts Hive perft, hashes game ids and parses TOML like the sources, runs the
// GPU self-test from its inlined WGSL, and solves with worker threads from the worker bundle.
import assert from "node:assert/strict";
import { BUNDLE_FILES, bundleBrowser } from "../../src/build/bundle.ts";
import { gameId } from "../../src/sgf/store.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { SMALL_TURN_SPOT } from "../helpers/spots.ts";

const gpu = await getGpu();

Deno.test({
  name: "bundle: one self-contained module (and its worker) that solves, counts and hashes",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "kibitz_bundle_" });
    try {
      const r = await bundleBrowser({ outDir: dir });
      assert.deepEqual(r.files.map((f) => f.path), [
        `${dir}/${BUNDLE_FILES.main}`,
        `${dir}/${BUNDLE_FILES.worker}`,
      ]);
      const text = await Deno.readTextFile(`${dir}/${BUNDLE_FILES.main}`);
      // Nothing left to resolve at load time: no static imports, no npm:/node: specifiers.
      assert.doesNotMatch(text, /\bimport\s*[\w{}*\s,$]*\s*from\s*["']/);
      assert.doesNotMatch(text, /["'](npm|node|jsr):/);
      assert.match(text, /@compute/, "WGSL inlined");

      const k = await import(new URL(`file://${dir}/${BUNDLE_FILES.main}`).href);
      const kuhn = k.kuhnGame();
      const s = new k.CfrSolver(k.buildTree(kuhn), kuhn, {});
      s.run(1000);
      assert.ok(Math.abs(s.exploitability().ev[0] - k.KUHN_VALUE) < 5e-5);
      assert.equal(k.hivePerft(new k.HiveGame("Base"), 3), 1440);
      assert.equal(
        k.gameId("g1", "Base", ["wS1", "bG1 -wS1"]),
        gameId("g1", "Base", ["wS1", "bG1 -wS1"]),
      );
      const config = k.parseSolveConfig(
        SMALL_TURN_SPOT + "[solver]\nthreads = 2\nregret_bits = 8\n",
      );
      assert.equal(config.solver.threads, 2);

      // Two threads through the worker bundle give the one-thread solve, bit for bit.
      const spot = k.prepareSpot(config), tree = k.expandSpot(spot);
      const opts = { regretBits: 8, strategyBits: 8, seed: 3 };
      const one = new k.CfrSolver(tree, spot.game, opts);
      const two = new k.CfrSolver(tree, spot.game, { ...opts, threads: 2 });
      try {
        one.run(10);
        two.run(10);
        assert.equal(two.threads, 2);
        assert.equal(two.exploitability().chips, one.exploitability().chips);
      } finally {
        two.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "bundle: finds the adapter the sources find and passes the GPU self-test",
  ignore: gpu === null,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "kibitz_bundle_gpu_" });
    try {
      await bundleBrowser({ outDir: dir });
      const k = await import(new URL(`file://${dir}/${BUNDLE_FILES.main}`).href);
      const ctx = await k.getGpu();
      assert.ok(ctx, "the bundle finds the adapter the sources find");
      assert.equal((await k.gpuSelfTest(ctx)).ok, true);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
