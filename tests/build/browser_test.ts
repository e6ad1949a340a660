// The browser bundle in headless Chromium (when installed: Debian's `chromium` package; .ci/run
// installs it where apt-get works). Exact checks run on the page; see src/build/browser_check.ts.
// Not installed: the tests are reported as ignored by name. Installed but unable to start: a
// warning locally, a failure when CI=true.
import assert from "node:assert/strict";
import { findChromium, runBrowserCheck, runDemoPage } from "../../src/build/browser_check.ts";
import { gameId } from "../../src/sgf/store.ts";
import { isKibitzError } from "../../src/errors.ts";

const chromium = await findChromium();

/** True in CI (CI=true): there a Chromium that is installed but cannot start is a failure. */
const IN_CI = Deno.env.get("CI") === "true";

/**
 * Runs a browser check. A Chromium that cannot start here skips the checks with a warning, except
 * in CI, where the error is thrown so that the test fails instead of passing without running.
 */
async function orSkip<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (e) {
    if (!isKibitzError(e, "browser_unavailable") || IN_CI) throw e;
    console.warn(`skipped: ${(e as Error).message}`);
    return null;
  }
}

Deno.test({
  name: "browser: the bundle solves, counts, hashes, quantizes and trains in headless Chromium",
  ignore: !chromium,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const r = await orSkip(() => runBrowserCheck(chromium!));
    if (!r) return;
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.crossOriginIsolated, true);
    assert.ok(Math.abs(r.kuhnEv + 1 / 18) < 5e-5, `Kuhn value ${r.kuhnEv}`);
    assert.equal(r.perftBase3, 1440);
    assert.equal(r.gameId, gameId("g1", "Base", ["wS1", "bG1 -wS1"]));
    assert.ok(r.defaultThreads >= 1);
    // Worker threads on the page and inside a Web Worker give the one-thread solve bit for bit.
    assert.equal(r.pageTwoThreadChips, r.oneThreadChips);
    assert.equal(r.workerTwoThreadChips, r.oneThreadChips);
    if (r.adapter !== null) {
      // A second WebGPU implementation (Dawn + Tint): bit-exact quantized updates, and the network
      // within the per-op tolerance of the GPU tests.
      assert.equal(r.gpuSelfTest, true, `self-test on ${r.adapter}`);
      assert.deepEqual(r.quantMismatches, [], `quantized updates on ${r.adapter}`);
      for (const [family, d] of Object.entries(r.nn!)) {
        assert.ok(d.probs < 1e-5 && d.value < 1e-5, `${family}: ${JSON.stringify(d)}`);
        assert.ok(d.loss < 1e-4, `${family}: loss differs by ${d.loss}`);
      }
      // The Winograd bridge equals the separate transforms bit for bit there too.
      assert.deepEqual(r.winogradBridge, [], `Winograd bridge on ${r.adapter}`);
      // The column-staged bridge within rounding of them (bit for bit where no compiler contracts).
      assert.deepEqual(r.winogradBridgeStaged, [], `column-staged bridge on ${r.adapter}`);
      // The thin 1x1 conv equals the tiled one bit for bit there too.
      assert.deepEqual(r.thinConv, [], `thin 1x1 conv on ${r.adapter}`);
      // The column-staged Winograd transforms equal the one-thread-a-tile ones there too.
      assert.deepEqual(r.winogradStaged, [], `column-staged Winograd transforms on ${r.adapter}`);
      // The compact readback and f16 planes change no bit there either.
      assert.deepEqual(r.compactReadback, [], `compact readback on ${r.adapter}`);
      // fcNt equals the tiled matmul bit for bit there too (Tint's compiler, not Naga's).
      assert.deepEqual(r.fc, [], `fcNt on ${r.adapter}`);
      // The mixed Winograd tiles' transforms give the direct conv there too.
      assert.deepEqual(r.winogradMixed, [], `mixed Winograd tiles on ${r.adapter}`);
    }
  },
});

Deno.test({
  name: "browser: the solver page (deno task serve) solves the default spot in a worker",
  ignore: !chromium,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const r = await orSkip(() => runDemoPage(chromium!, 20));
    if (!r) return;
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.iteration, 20);
    assert.ok(r.percent > 0 && r.percent < 100, `exploitability ${r.percent}%`);
    const s = r.summary;
    assert.equal(s.player, "oop");
    assert.deepEqual(s.actions.slice(0, 2), ["Check", "Bet 120"]);
    assert.ok(Math.abs(s.frequencies.reduce((a, b) => a + b, 0) - 1) < 1e-6);
    assert.equal(s.grid.length, 13);
    // EVs share the pot (no rake in the default spot).
    assert.ok(Math.abs(s.ev[0] + s.ev[1] - 200) < 1e-3, `EVs ${s.ev}`);
  },
});

Deno.test({
  name: "browser: the solver page solves on WebGPU (?backend=gpu) with the CPU page's results",
  ignore: !chromium,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const r = await orSkip(() => runDemoPage(chromium!, 2, 300_000, "gpu"));
    if (!r) return;
    if (r.error?.includes("no WebGPU")) {
      console.warn(`skipped: ${r.error}`);
      return;
    }
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.iteration, 2);
    const cpu = await orSkip(() => runDemoPage(chromium!, 2, 180_000, "cpu"));
    if (!cpu) return;
    // Same spot, 2 iterations: equal but for f32 summation order (see tests/cfr/gpu_solver_test.ts).
    assert.ok(
      Math.abs(r.percent - cpu.percent) <= 1e-3 * cpu.percent,
      `GPU ${r.percent}% vs CPU ${cpu.percent}%`,
    );
    assert.deepEqual(r.summary.actions, cpu.summary.actions);
    assert.ok(Math.abs(r.summary.ev[0] + r.summary.ev[1] - 200) < 1e-3, `EVs ${r.summary.ev}`);
  },
});
