// End-to-end check of the browser bundle in headless Chromium: the bundle is served with the
// cross-origin isolation headers that SharedArrayBuffer needs, a page runs a few exact checks
// (Kuhn value, Hive perft, game id, TOML config, a two-thread solve on the page and inside a Web
// Worker against the one-thread solve, the WebGPU self-test) and posts what it saw back.
import { KibitzError } from "../errors.ts";
import type { RootSummary } from "../poker/results.ts";
import { BUNDLE_FILES, bundleBrowser } from "./bundle.ts";
import { buildDemo, serveIsolated } from "./serve.ts";

/** What the page reports. */
export interface BrowserCheckResult {
  userAgent: string;
  crossOriginIsolated: boolean;
  kuhnEv: number;
  perftBase3: number;
  gameId: string;
  defaultThreads: number;
  /** Exploitability (chips) of T1 after 5 iterations: one thread, two on the page, two in a worker. */
  oneThreadChips: number;
  pageTwoThreadChips: number;
  workerTwoThreadChips: number;
  oneThreadMs: number;
  pageTwoThreadMs: number;
  adapter: string | null;
  gpuSelfTest: boolean | null;
  /** Quantized-store GPU updates (every op x format) that were not bit-identical to the CPU. */
  quantMismatches: string[] | null;
  /**
   * Tiny ResNet on the GPU against the CPU reference, per kernel family: largest difference of the
   * policy, of the value, and of the loss after one training step.
   */
  nn: Record<string, { probs: number; value: number; loss: number }> | null;
  /** The Winograd bridge's cases that differ from the separate transforms (winogradBridgeParity). */
  winogradBridge: string[] | null;
  /**
   * The column-staged bridge's cases further from the separate transforms than rounding allows
   * (winogradBridgeParity with contractionTolerance).
   */
  winogradBridgeStaged: string[] | null;
  /** The thin 1x1 conv's cases that differ from the direct fused conv (thinConvParity). */
  thinConv: string[] | null;
  /**
   * The column-staged Winograd transforms' cases that differ from the one-thread-a-tile ones
   * (winogradStagedParity).
   */
  winogradStaged: string[] | null;
  /**
   * What the compact readback and f16 planes change against the full readback and f32 planes
   * (compactReadbackParity).
   */
  compactReadback: string[] | null;
  /** The fully connected cases where fcNt differs from the tiled matmul (fcParity). */
  fc: string[] | null;
  /**
   * The mixed F(7x7)/F(6x6) Winograd tiles' cases further from the direct conv than f32 allows
   * (winogradMixedParity).
   */
  winogradMixed: string[] | null;
  error?: string;
}

const SOLVE =
  `const cfg = k.parseSolveConfig(k.T1_SPOT + "[solver]\\nregret_bits = 8\\nstrategy_bits = 8\\n");
const spot = k.prepareSpot(cfg), tree = k.expandSpot(spot);
const opts = { regretBits: 8, strategyBits: 8, seed: 3 };`;

// Runs on the page: GPU quantized updates against the CPU, bit for bit (as tests/quant does).
const QUANT_PARITY = `async function quantParity(k, ctx) {
  const cases = [["set", k.QUANT_FORMATS, 0, 0], ["dcfr", ["f32", "i16", "i8", "i4"], 0.91, 0.5],
    ["plus", ["f32", "i16", "u16", "i8", "u8", "i4", "u4"], 0.97, 0],
    ["strategy", ["f32", "u16", "u8", "u4"], 0.83, 0.37]];
  let seed = 99;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  const bad = [];
  for (const [op, formats, a, c] of cases) {
    for (const format of formats) {
      const sizes = [1, 3, 8, 31, 0, 700, 257, 5000];
      const signed = op !== "strategy" && (format.startsWith("i") || format === "f32");
      const values = (n, scale) => Float32Array.from({ length: n }, () =>
        (signed ? rand() * 2 - 1 : rand()) * scale);
      const cpu = k.createQuantStore(format, sizes);
      k.encodeAll(cpu, values(cpu.n, 40), { seed: 7, iteration: 1 });
      const g = k.uploadQuantStore(ctx, cpu);
      for (let it = 2; it <= 3; it++) {
        const input = values(cpu.n, 3 * it);
        const key = { seed: 12345, iteration: it };
        k.updateAll(cpu, op, input, a, c, key);
        const buf = k.storageBuffer(ctx, input);
        await k.gpuUpdate(g, op, buf, a, c, key);
        buf.destroy();
      }
      const got = await k.downloadQuantStore(g, k.createQuantStore(format, sizes));
      const same = got.scales.every((x, i) => Object.is(x, cpu.scales[i])) &&
        got.words.every((x, i) => x === cpu.words[i]);
      if (!same) bad.push(op + "/" + format);
    }
  }
  return bad;
}`;

// Runs on the page: the tiny ResNet on the GPU against the CPU reference, inference and one training
// step, with the direct kernels (what software adapters run: SwiftShader needs 40-70 s to compile
// the tiled conv forward kernel even at test tile sizes, so the tiled family is left to the tests
// on wgpu and to real GPUs).
const NN_PARITY = `async function nnParity(k, ctx, stage) {
  const cfg = k.NET_PRESETS.tiny, w = k.initWeights(cfg, 7);
  const batch = k.syntheticBatch(cfg, 4, 3), step = k.syntheticBatch(cfg, 4, 10);
  const h = { lr: 0.02, momentum: 0.9, weightDecay: 1e-4 };
  const diff = (x, y) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);
  const cpu = await new k.CpuNet(w).infer(batch);
  const cpuLoss = (await new k.CpuNet(w).trainStep(step, h)).loss;
  const out = {};
  for (const [name, opts] of [["direct", { tiled: false }]]) {
    await stage("network parity: " + name);
    const net = await k.GpuNet.create(ctx, w, opts);
    await stage("network parity: " + name + ": inference");
    const got = await net.infer(batch);
    await stage("network parity: " + name + ": training step");
    const loss = (await net.trainStep(step, h)).loss;
    out[name] = { probs: diff(got.probs, cpu.probs), value: diff(got.value, cpu.value),
      loss: Math.abs(loss - cpuLoss) };
    net.dispose();
  }
  return out;
}`;

function pageHtml(): string {
  return `<!doctype html><meta charset="utf-8"><title>kibitz check</title>
<script>
addEventListener("error", (e) => fetch("/result", { method: "POST",
  body: JSON.stringify({ error: "page error: " + e.message + " at " + e.filename + ":" + e.lineno }) }));
</script>
<script type="module">
${QUANT_PARITY}
${NN_PARITY}
const out = { userAgent: navigator.userAgent };
const stage = (name) => fetch("/progress", { method: "POST", body: name });
try {
  const k = await import("./${BUNDLE_FILES.main}");
  out.crossOriginIsolated = crossOriginIsolated;
  const kuhn = k.kuhnGame();
  const s = new k.CfrSolver(k.buildTree(kuhn), kuhn, {});
  s.run(1000);
  out.kuhnEv = s.exploitability().ev[0];
  out.perftBase3 = k.hivePerft(new k.HiveGame("Base"), 3);
  out.gameId = k.gameId("g1", "Base", ["wS1", "bG1 -wS1"]);
  ${SOLVE}
  out.defaultThreads = cfg.solver.threads;
  let t = performance.now();
  const one = new k.CfrSolver(tree, spot.game, opts);
  one.run(5);
  out.oneThreadMs = performance.now() - t;
  out.oneThreadChips = one.exploitability().chips;
  t = performance.now();
  const two = new k.CfrSolver(tree, spot.game, { ...opts, threads: 2 });
  await two.startThreads();
  two.run(5);
  out.pageTwoThreadMs = performance.now() - t;
  out.pageTwoThreadChips = two.exploitability().chips;
  two.close();
  const w = new Worker("./check-worker.js", { type: "module" });
  const got = await new Promise((res) => {
    w.onmessage = (e) => res(e.data);
    w.onerror = (e) => res({ error: String(e.message) });
  });
  if (got.error) throw new Error("in the worker: " + got.error);
  out.workerTwoThreadChips = got.chips;
  const ctx = await k.getGpu();
  out.adapter = ctx ? k.describeAdapter(ctx.report) : null;
  out.gpuSelfTest = ctx ? (await k.gpuSelfTest(ctx)).ok : null;
  await stage("quantized-store parity");
  out.quantMismatches = ctx ? await quantParity(k, ctx) : null;
  await stage("network parity (quantized stores: " + JSON.stringify(out.quantMismatches) + ")");
  out.nn = ctx ? await nnParity(k, ctx, stage) : null;
  await stage("Winograd bridge parity");
  out.winogradBridge = ctx
    ? await k.winogradBridgeParity(ctx, null, k.WINOGRAD_BRIDGE_CASES_QUICK)
    : null;
  await stage("column-staged Winograd bridge parity");
  out.winogradBridgeStaged = ctx
    ? await k.winogradBridgeParity(ctx, null, k.WINOGRAD_BRIDGE_CASES_QUICK, {
      tolerance: k.contractionTolerance(null),
    })
    : null;
  await stage("thin 1x1 conv parity");
  out.thinConv = ctx ? await k.thinConvParity(ctx) : null;
  await stage("column-staged Winograd transforms parity");
  out.winogradStaged = ctx
    ? await k.winogradStagedParity(ctx, null, k.WINOGRAD_STAGED_CASES_QUICK)
    : null;
  await stage("compact readback and f16 planes");
  out.compactReadback = ctx ? await k.compactReadbackParity(ctx) : null;
  await stage("fully connected fcNt parity");
  out.fc = ctx ? await k.fcParity(ctx) : null;
  await stage("mixed F(7x7)/F(6x6) Winograd tiles");
  out.winogradMixed = ctx ? await k.winogradMixedParity(ctx) : null;
} catch (e) {
  out.error = String((e && e.stack) || e);
}
await fetch("/result", { method: "POST", body: JSON.stringify(out) });
</script>`;
}

function workerJs(): string {
  return `import * as k from "./${BUNDLE_FILES.main}";
try {
  ${SOLVE}
  const two = new k.CfrSolver(tree, spot.game, { ...opts, threads: 2 });
  await two.startThreads();
  two.run(5);
  postMessage({ chips: two.exploitability().chips });
  two.close();
} catch (e) {
  postMessage({ error: String((e && e.stack) || e) });
}
`;
}

/** Finds a Chromium executable on PATH (or null). */
export async function findChromium(): Promise<string | null> {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      const out = await new Deno.Command("which", { args: [name], stdout: "piped", stderr: "null" })
        .output();
      if (out.success) return new TextDecoder().decode(out.stdout).trim();
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Opens `path` of `dir` (served cross-origin isolated) in headless Chromium and returns the JSON
 * the page posts to /result; /progress posts name the stage a timeout reports. `extraArgs` are
 * added to Chromium's flags (e.g. the GPU flags of a hardware run).
 */
export async function runPage(
  chromium: string,
  dir: string,
  path: string,
  timeoutMs: number,
  extraArgs: string[] = [],
) {
  const profile = await Deno.makeTempDir({ prefix: "kibitz_chromium_" });
  let report: (text: string) => void = () => {};
  let lastStage = "loading the page";
  const reported = new Promise<string>((resolve) => (report = resolve));
  const server = serveIsolated(dir, {
    port: 0,
    onGet: () => requests++,
    onPost: (p, body) => {
      requests++;
      if (p === "/progress") lastStage = body;
      else if (p === "/result") report(body);
    },
  });
  let requests = 0;
  const browser = new Deno.Command(chromium, {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--enable-unsafe-webgpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      ...extraArgs,
      `http://127.0.0.1:${server.addr.port}${path}`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new KibitzError(
              "browser_timeout",
              `no report from Chromium in ${timeoutMs} ms (last stage: ${lastStage})`,
            ),
          ),
        timeoutMs,
      );
    });
    // A browser that exits or never asks for the page cannot run here: that is not a failure of
    // the page (callers may skip), unlike a page that loads and reports wrong results or nothing.
    const exited = browser.status.then((st) => {
      throw new KibitzError(
        requests === 0 ? "browser_unavailable" : "browser_exited",
        `Chromium exited with code ${st.code} ${
          requests === 0 ? "before loading the page" : `(last stage: ${lastStage})`
        }`,
      );
    });
    try {
      return JSON.parse(await Promise.race([reported, timeout, exited]));
    } catch (e) {
      if (requests === 0 && e instanceof KibitzError && e.code === "browser_timeout") {
        throw new KibitzError(
          "browser_unavailable",
          `Chromium never loaded the page: ${e.message}`,
        );
      }
      throw e;
    }
  } finally {
    clearTimeout(timer);
    try {
      browser.kill();
    } catch {
      // already gone
    }
    await browser.status;
    await server.shutdown();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

/** Builds the bundle, runs the check page in headless Chromium and returns what it reported. */
export async function runBrowserCheck(
  chromium: string,
  timeoutMs = 180_000,
): Promise<BrowserCheckResult> {
  const dir = await Deno.makeTempDir({ prefix: "kibitz_browser_" });
  try {
    await bundleBrowser({ outDir: dir });
    await Deno.writeTextFile(`${dir}/index.html`, pageHtml());
    await Deno.writeTextFile(`${dir}/check-worker.js`, workerJs());
    return await runPage(chromium, dir, "/", timeoutMs) as BrowserCheckResult;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What the solver page (examples/browser) posts when it is opened with `?auto&report`. */
export interface DemoPageResult {
  iteration: number;
  percent: number;
  seconds: number;
  summary: RootSummary;
  error?: string;
}

/**
 * Serves the solver page like `deno task serve` and lets it solve the default spot by itself
 * (`backend`: the page's ?backend= override of solver.backend).
 */
export async function runDemoPage(
  chromium: string,
  iterations: number,
  timeoutMs = 180_000,
  backend?: "cpu" | "gpu" | "auto",
): Promise<DemoPageResult> {
  const dir = await Deno.makeTempDir({ prefix: "kibitz_demo_" });
  try {
    await buildDemo(dir);
    const path = `/index.html?auto&report&iterations=${iterations}${
      backend ? `&backend=${backend}` : ""
    }`;
    return await runPage(chromium, dir, path, timeoutMs) as DemoPageResult;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
