// End-to-end check of the browser bundle in headless Chromium: the bundle is served with the
// cross-origin isolation headers that SharedArrayBuffer needs, a page runs a few exact checks
// (Kuhn value, Hive perft, game id, TOML config, a two-thread solve on the page and inside a Web
// Worker against the one-thread solve, the WebGPU self-test) and posts what it saw back.
import { KibitzError } from "../cli/error.ts";
import { BUNDLE_FILES, bundleBrowser } from "./bundle.ts";

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
  error?: string;
}

const SOLVE =
  `const cfg = k.parseSolveConfig(k.T1_SPOT + "[solver]\\nregret_bits = 8\\nstrategy_bits = 8\\n");
const spot = k.prepareSpot(cfg), tree = k.expandSpot(spot);
const opts = { regretBits: 8, strategyBits: 8, seed: 3 };`;

function pageHtml(): string {
  return `<!doctype html><meta charset="utf-8"><title>kibitz check</title><script type="module">
const out = { userAgent: navigator.userAgent };
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

/** Builds the bundle, runs the check page in headless Chromium and returns what it reported. */
export async function runBrowserCheck(
  chromium: string,
  timeoutMs = 180_000,
): Promise<BrowserCheckResult> {
  const dir = await Deno.makeTempDir({ prefix: "kibitz_browser_" });
  const profile = await Deno.makeTempDir({ prefix: "kibitz_chromium_" });
  await bundleBrowser({ outDir: dir });
  await Deno.writeTextFile(`${dir}/index.html`, pageHtml());
  await Deno.writeTextFile(`${dir}/check-worker.js`, workerJs());
  let report: (text: string) => void = () => {};
  const reported = new Promise<string>((resolve) => (report = resolve));
  const isolation = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/result" && req.method === "POST") {
      report(await req.text());
      return new Response("ok");
    }
    const file = path === "/" ? "index.html" : path.slice(1);
    if (!/^[\w.-]+$/.test(file)) return new Response("not found", { status: 404 });
    try {
      const body = await Deno.readFile(`${dir}/${file}`);
      const type = file.endsWith(".html") ? "text/html" : "text/javascript";
      return new Response(body, { headers: { ...isolation, "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  const port = (server.addr as Deno.NetAddr).port;
  const browser = new Deno.Command(chromium, {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--enable-unsafe-webgpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      `http://127.0.0.1:${port}/`,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new KibitzError("browser_timeout", `no report from Chromium in ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    return JSON.parse(await Promise.race([reported, timeout])) as BrowserCheckResult;
  } finally {
    clearTimeout(timer);
    try {
      browser.kill();
    } catch {
      // already gone
    }
    await browser.status;
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}
