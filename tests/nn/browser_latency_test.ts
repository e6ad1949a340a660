// The nn latency page (bench nn browser=1) in headless Chromium: the bundle measures the readback
// floor and the tiny network's batch 1 and 8 calls with the same code as the Deno bench. Skipped by
// name without Chromium; a Chromium that cannot start or has no WebGPU adapter warns and skips
// (fails in CI when it cannot start).
import assert from "node:assert/strict";
import { findChromium } from "../../src/build/browser_check.ts";
import { isKibitzError } from "../../src/errors.ts";
import { browserLatency } from "../../src/nn/bench_browser.ts";

const chromium = await findChromium();

Deno.test({
  name: "browser: the nn latency page measures the floor and batch 1 / 8 calls in Chromium",
  ignore: !chromium,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    let r;
    try {
      r = await browserLatency("tiny", 100, 180_000);
    } catch (e) {
      const msg = (e as Error).message;
      const noAdapter = isKibitzError(e, "browser_check_failed") && msg.includes("no WebGPU");
      const cannotStart = isKibitzError(e, "browser_unavailable") && Deno.env.get("CI") !== "true";
      if (!noAdapter && !cannotStart) throw e;
      console.warn(`skipped: ${msg}`);
      return;
    }
    console.log(`Chromium on ${r.adapter}: floor ${r.floor} ms, calls ${JSON.stringify(r.calls)}`);
    assert.ok(r.adapter, "adapter named");
    assert.ok(Number.isFinite(r.floor) && r.floor >= 0, `floor ${r.floor}`);
    assert.deepEqual(r.calls.map((c) => c.size), [1, 8]);
    for (const c of r.calls) {
      assert.ok(c.ms > 0 && c.rate > 0 && c.gpuMs >= 0 && c.encodeMs >= 0, JSON.stringify(c));
    }
  },
});
