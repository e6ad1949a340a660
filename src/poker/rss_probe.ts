// A solve in a process of its own that reports its peak RSS (VmHWM) beside the memory estimate:
// run as `deno run -A src/poker/rss_probe.ts <config.toml> <out dir>` by the RSS test and the
// bench. It does what `deno task solve` does (prepare, expand, solve, write both files), quietly.
import { parseSolveConfig } from "./config.ts";
import { eachFirstStreetNode, rootSummary, writeSolveOutputs } from "./results.ts";
import { prepareSpot, runSolve } from "./solve.ts";
import { SOLVE_V8_FLAGS } from "./memory.ts";

/** Peak resident set size of this process (VmHWM of /proc/self/status), in bytes; 0 elsewhere. */
export function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync("/proc/self/status"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** A field of /proc/self/status in bytes (0 where there is none). */
export function procStatus(field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(Deno.readTextFileSync("/proc/self/status"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** What a probe prints: the estimate and the measured peak, in bytes, and the solve's figures. */
export interface ProbeResult {
  estimateBytes: number;
  baselineBytes: number;
  peakRssBytes: number;
  /** Resident file-backed pages at the end (mostly the runtime's own code). */
  rssFileBytes: number;
  iterations: number;
  seconds: number;
  /** Of `seconds`, those of the exploitability checks (SolveOutcome.checkSeconds). */
  checkSeconds: number;
  exploitabilityPct: number;
  reached: Record<string, number>;
  secondsTo: Record<string, number>;
}

/**
 * Runs this probe on the solve config file `path` in a process of its own, with the V8 flags
 * `deno task solve` uses, writing the outputs into `outDir`: the RSS test's and the bench's solve.
 */
export async function runRssProbe(path: string, outDir: string): Promise<ProbeResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=${SOLVE_V8_FLAGS}`,
      new URL(import.meta.url).pathname,
      path,
      outDir,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (out.code !== 0) {
    throw new Error(
      `the RSS probe of ${path} exited with ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}

if (import.meta.main && Deno.args[0] === "--baseline") {
  // The runtime with the solver's modules loaded and nothing solved: the estimate's baseline.
  console.log(JSON.stringify({ peakRssBytes: peakRss() }));
} else if (import.meta.main) {
  const [path, outDir] = Deno.args;
  const text = await Deno.readTextFile(path);
  const spot = prepareSpot(parseSolveConfig(text, path));
  const seconds: Record<string, number> = {};
  const t0 = performance.now();
  const outcome = await runSolve(spot, {
    milestones: [0.5, 0.3, 0.1],
    onProgress: (p) => {
      for (const m of [0.5, 0.3, 0.1]) {
        if (p.exploitabilityPct <= m && seconds[m] === undefined) {
          seconds[m] = (performance.now() - t0) / 1000;
        }
      }
    },
  });
  const tree = spot.tree!, policy = outcome.solver.averagePolicy();
  const meta = {
    iterations: outcome.iterations,
    exploitability_pct: outcome.exploitability.percent,
  };
  await writeSolveOutputs(outDir, {
    result: { meta, root: rootSummary(tree, spot.game, policy) },
    nodes: eachFirstStreetNode(tree, spot.game, policy),
    save: { header: { config: text, meta }, tree, policy },
  });
  const out: ProbeResult = {
    estimateBytes: spot.memory.total,
    baselineBytes: spot.memory.baselineBytes,
    peakRssBytes: peakRss(),
    rssFileBytes: procStatus("RssFile"),
    iterations: outcome.iterations,
    seconds: outcome.seconds,
    checkSeconds: outcome.checkSeconds ?? 0,
    exploitabilityPct: outcome.exploitability.percent,
    reached: outcome.reached,
    secondsTo: seconds,
  };
  console.log(JSON.stringify(out));
}
