// The latency measurements of `bench nn` (readback floor, one call, calls in flight) run by the
// same code in headless Chromium's WebGPU: the browser bundle serves a page that measures and posts
// its figures back, so the Deno and browser floors can be compared on one machine (`browser=1`).
import { bundleBrowser } from "../build/bundle.ts";
import { findChromium, runPage } from "../build/browser_check.ts";
import { KibitzError } from "../errors.ts";

/** What the latency page reports. */
export interface BrowserLatency {
  userAgent: string;
  adapter: string | null;
  /** Median ms of a 4-byte readback round trip. */
  floor: number;
  /** Per batch size: median ms per call, GPU and encode ms of the plan, calls/s with 16 in flight. */
  calls: { size: number; ms: number; gpuMs: number; encodeMs: number; rate: number }[];
  error?: string;
}

function pageHtml(preset: string, budgetMs: number): string {
  return `<!doctype html><meta charset="utf-8"><title>kibitz nn latency</title>
<script type="module">
const out = { userAgent: navigator.userAgent, adapter: null, calls: [] };
const stage = (name) => fetch("/progress", { method: "POST", body: name });
try {
  const k = await import("./kibitz.js");
  const ctx = await k.getGpu();
  if (!ctx) throw new Error("no WebGPU adapter in this Chromium");
  out.adapter = k.describeAdapter(ctx.report);
  await stage("readback floor on " + out.adapter);
  out.floor = await k.nnLatency.readbackFloorMs(ctx);
  await stage("network " + ${JSON.stringify(preset)});
  const net = await k.GpuNet.create(ctx, k.initWeights(k.netPreset(${JSON.stringify(preset)}), 1));
  for (const size of [1, 8]) {
    await stage("batch " + size);
    const b = k.nnLatency.benchBatch(net, size);
    await net.infer(b);
    const ms = await k.nnLatency.callMs(net, b, ${budgetMs});
    const cost = await k.nnLatency.planCost(ctx, net, size);
    const { rate } = await k.nnLatency.pipelinedCallsPerS(net, b, 16, ${budgetMs});
    out.calls.push({ size, ms, gpuMs: cost.gpuMs, encodeMs: cost.encodeMs, rate });
  }
  net.dispose();
} catch (e) {
  out.error = String((e && e.stack) || e);
}
await fetch("/result", { method: "POST", body: JSON.stringify(out) });
</script>`;
}

/**
 * Builds the bundle and measures the readback floor and the `preset` network's batch 1 and 8
 * calls in headless Chromium (extra Chromium flags from KIBITZ_CHROMIUM_FLAGS, space-separated).
 */
export async function browserLatency(
  preset: string,
  budgetMs: number,
  timeoutMs = 600_000,
): Promise<BrowserLatency> {
  const chromium = await findChromium();
  if (!chromium) {
    throw new KibitzError("no_browser", "chromium: not found on PATH (browser=1 needs it)");
  }
  const flags = (Deno.env.get("KIBITZ_CHROMIUM_FLAGS") ?? "").split(" ").filter((x) => x);
  const dir = await Deno.makeTempDir({ prefix: "kibitz_nn_browser_" });
  try {
    await bundleBrowser({ outDir: dir });
    await Deno.writeTextFile(`${dir}/index.html`, pageHtml(preset, budgetMs));
    const r = await runPage(chromium, dir, "/", timeoutMs, flags) as BrowserLatency;
    if (r.error) throw new KibitzError("browser_check_failed", `latency page: ${r.error}`);
    return r;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The Chromium rows of the latency table (runtime "chromium", the adapter in the note) and their
 * summary figures (browser:floor, browser:call:N).
 */
export async function browserLatencyRows(
  preset: string,
  full: boolean,
  log: (line: string) => void,
  rows: (string | number | null)[][],
  summary: Map<string, number>,
): Promise<void> {
  const r = await browserLatency(preset, full ? 1000 : 500);
  const note = `adapter: ${r.adapter}`;
  log(`chromium (${r.adapter}): readback floor ${r.floor.toFixed(2)} ms`);
  rows.push([preset, "chromium", "floor", null, r.floor, null, null, null, null, note]);
  summary.set("browser:floor", r.floor);
  for (const c of r.calls) {
    rows.push([
      preset,
      "chromium",
      "one call",
      c.size,
      c.ms,
      c.gpuMs,
      c.encodeMs,
      null,
      1000 / c.ms * r.floor / 1000,
      note,
    ]);
    rows.push([
      preset,
      "chromium",
      "16 in flight",
      c.size,
      1000 / c.rate,
      null,
      null,
      null,
      c.rate * r.floor / 1000,
      `${(c.rate * c.size).toFixed(0)} positions/s; ${note}`,
    ]);
    summary.set(`browser:call:${c.size}`, c.ms);
    log(
      `chromium batch ${c.size}: ${c.ms.toFixed(2)} ms/call, 16 in flight ${
        c.rate.toFixed(1)
      } calls/s`,
    );
  }
}
