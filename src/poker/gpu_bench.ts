import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { GpuCfrSolver } from "../cfr/gpu/solver.ts";
import { buildTree } from "../cfr/tree.ts";
import { KibitzError } from "../cli/error.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { F1 } from "./bench.ts";
import { parseSolveConfig, T1_SPOT } from "./config.ts";
import { prepareSpot } from "./solve.ts";
import { T2_SIZES, t2Config } from "./warmstart_bench.ts";

const TARGETS = [0.5, 0.3, 0.1];
const MB = 1e6;

interface GpuRun {
  spot: string;
  hands: string;
  nodes: number;
  treeSeconds: number;
  uploadSeconds: number;
  iterations: number;
  exploitabilityPct: number;
  msPerIteration: number;
  msPerCheck: number;
  solveSeconds: number;
  seconds: (number | null)[];
  its: (number | null)[];
  deviceBytes: number;
}

/** Solves one spot on the GPU (f32), checking exploitability every 10 iterations. */
async function gpuRun(
  ctx: GpuContext,
  name: string,
  text: string,
  maxIterations: number,
  stopPct: number,
  log: (s: string) => void,
): Promise<GpuRun> {
  const t0 = performance.now();
  const spot = prepareSpot(parseSolveConfig(text, name));
  const tree = buildTree(spot.game);
  const t1 = performance.now();
  const gpu = await GpuCfrSolver.create(ctx, tree, spot.game, {});
  await ctx.device.queue.onSubmittedWorkDone();
  const t2 = performance.now();
  const seconds: (number | null)[] = TARGETS.map(() => null);
  const its: (number | null)[] = TARGETS.map(() => null);
  let iterMs = 0, checkMs = 0, checks = 0, pct = Infinity;
  const start = performance.now();
  try {
    while (gpu.iteration < maxIterations) {
      const a = performance.now();
      gpu.run(Math.min(10, maxIterations - gpu.iteration));
      await ctx.device.queue.onSubmittedWorkDone();
      const b = performance.now();
      pct = (await gpu.exploitability()).percent;
      const c = performance.now();
      iterMs += b - a, checkMs += c - b, checks++;
      const el = (c - start) / 1000;
      TARGETS.forEach((t, i) => {
        if (pct <= t && seconds[i] === null) seconds[i] = el, its[i] = gpu.iteration;
      });
      log(`${name}: it ${gpu.iteration} ${pct.toFixed(3)}% ${el.toFixed(2)} s`);
      if (pct <= stopPct) break;
    }
  } finally {
    gpu.destroy();
  }
  return {
    spot: name,
    hands: `${spot.game.numHands[0]} / ${spot.game.numHands[1]}`,
    nodes: tree.size,
    treeSeconds: (t1 - t0) / 1000,
    uploadSeconds: (t2 - t1) / 1000,
    iterations: gpu.iteration,
    exploitabilityPct: pct,
    msPerIteration: iterMs / gpu.iteration,
    msPerCheck: checkMs / Math.max(1, checks),
    solveSeconds: (performance.now() - start) / 1000,
    seconds,
    its,
    deviceBytes: gpu.deviceBytes,
  };
}

interface RefRun {
  spot: string;
  threads: number;
  iterations: number;
  exploitabilityPct: number;
  solveSeconds: number;
  wallSeconds: number;
  secondsTo: (number | null)[];
  memoryBytes: number;
}

/** Runs the reference solver binary on this machine's CPU cores (see its README). */
async function refRun(bin: string, spot: string, maxIt: number, threads: number): Promise<RefRun> {
  const t0 = performance.now();
  const out = await new Deno.Command(bin, {
    args: [spot, "f32", String(maxIt), "0.1", "10"],
    env: { RAYON_NUM_THREADS: String(threads) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const wall = (performance.now() - t0) / 1000;
  if (!out.success) {
    throw new KibitzError(
      "refsolve_failed",
      `${bin} ${spot}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  const j = JSON.parse(lines[lines.length - 1]);
  const secondsTo: (number | null)[] = TARGETS.map(() => null);
  for (const line of lines.slice(0, -1)) {
    const [, pct, s] = line.split("\t").map(Number);
    TARGETS.forEach((t, i) => {
      if (pct <= t && secondsTo[i] === null) secondsTo[i] = s;
    });
  }
  return {
    spot,
    threads,
    iterations: j.iterations,
    exploitabilityPct: j.exploitability_pct,
    solveSeconds: j.solve_s,
    wallSeconds: wall,
    secondsTo,
    memoryBytes: j.memory_bytes,
  };
}

function ratio(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : a / b;
}

/**
 * `deno task bench gpu-solve [--refsolve PATH]`: T1, T2 and F1 solved on the GPU (f32) to 0.5 / 0.3 /
 * 0.1 % of the pot (F1 capped at 100 iterations), beside the reference solver on the CPU cores.
 */
export const suite: BenchSuite = {
  description:
    "postflop CFR on the GPU: T1, T2, F1 (f32) seconds to 0.5/0.3/0.1 % of the pot, ms per iteration, check cost, set-up, device memory; reference solver on the CPU for ratios",
  async run(opts): Promise<BenchReport> {
    const ctx = await getGpu();
    if (!ctx) throw new KibitzError("no_gpu", "bench gpu-solve needs a WebGPU adapter");
    const adapter = describeAdapter(ctx.report);
    const report = newReport("gpu-solve", adapter);
    const argi = opts.args.indexOf("--refsolve");
    const ref = argi >= 0 ? opts.args[argi + 1] : Deno.env.get("REFSOLVE") ?? "";
    const f1Its = opts.full ? 300 : 100;
    const runs = [
      await gpuRun(ctx, "T1", T1_SPOT, opts.full ? 1000 : 400, 0.1, opts.log),
      await gpuRun(ctx, "T2", t2Config(...T2_SIZES), opts.full ? 1000 : 300, 0.1, opts.log),
      await gpuRun(ctx, "F1", F1, f1Its, 0.1, opts.log),
    ];
    report.tables.push({
      title:
        `GPU solve, f32, ${adapter}; exploitability checked every 10 iterations (included in the seconds)`,
      columns: [
        "spot",
        "hands",
        "public nodes",
        "tree build s",
        "upload + compile s",
        "iterations",
        "final %",
        "ms / iteration",
        "ms / check",
        ...TARGETS.map((t) => `s to ${t}%`),
        ...TARGETS.map((t) => `its to ${t}%`),
        "device MB",
      ],
      rows: runs.map((r) => [
        r.spot,
        r.hands,
        r.nodes,
        r.treeSeconds,
        r.uploadSeconds,
        r.iterations,
        r.exploitabilityPct,
        r.msPerIteration,
        r.msPerCheck,
        ...r.seconds,
        ...r.its,
        r.deviceBytes / MB,
      ]),
    });
    if (ref) {
      const threads = navigator.hardwareConcurrency;
      const refs = [
        await refRun(ref, "T1", 1000, threads),
        await refRun(ref, "F1", f1Its, threads),
      ];
      for (const r of refs) opts.log(`refsolve ${r.spot}: ${JSON.stringify(r)}`);
      report.tables.push({
        title:
          `Reference solver (${ref}), f32, ${threads} threads, same run: GPU seconds / reference seconds`,
        columns: [
          "spot",
          "ref iterations",
          "ref final %",
          "ref solve s",
          ...TARGETS.map((t) => `ref s to ${t}%`),
          "ref MB",
          ...TARGETS.map((t) => `GPU/ref time to ${t}%`),
        ],
        rows: refs.map((r) => {
          const g = runs.find((x) => x.spot === r.spot)!;
          return [
            r.spot,
            r.iterations,
            r.exploitabilityPct,
            r.solveSeconds,
            ...r.secondsTo,
            r.memoryBytes / MB,
            ...TARGETS.map((_, i) => ratio(g.seconds[i], r.secondsTo[i])),
          ];
        }),
      });
    } else {
      report.notes.push("reference solver not run: pass --refsolve PATH or set REFSOLVE");
    }
    report.notes.push(
      "GPU backend: f32 storage only so far (quantized formats are refused by name); F1 capped at " +
        `${f1Its} iterations. Device MB = buffers this solve allocated (tables, 3 node-vector buffers, stores).`,
    );
    return report;
  },
};
