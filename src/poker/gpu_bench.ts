import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { GpuCfrSolver } from "../cfr/gpu/solver.ts";
import { buildTree } from "../cfr/tree.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { F1 } from "./bench.ts";
import { parseSolveConfig, T1_SPOT } from "./config.ts";
import { prepareSpot } from "./solve.ts";
import { T2_SIZES, t2Config } from "./warmstart_bench.ts";

const TARGETS = [0.5, 0.3, 0.1];

/** A small river spot (34 / 27 hands, 15 nodes) for smoke runs (`--spots R`). */
const SMOKE_RIVER = `[ranges]
oop = "QQ+,AK,T9s"
ip = "JJ-99,AQs,KQ"
[cards]
flop = "Td9d6h"
turn = "Qc"
river = "2s"
[tree]
starting_pot = 200
effective_stack = 900
[bet_sizes]
river = "minimal"
`;
const MB = 1e6;

interface GpuRun {
  spot: string;
  formats: string;
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
  /** Estimated bytes one iteration reads and writes (see trafficBytes). */
  trafficBytes: number;
  /** GPU ms per kernel in one iteration, each dispatch timed apart (null without timestamps). */
  kernels: Record<string, number> | null;
  dispatches: number;
}

/**
 * A floor on the bytes an iteration moves: per traverser, every node's opponent reach written once
 * and read about twice (children, terminals), its values written once and read once (parent), and
 * each store read and written once (regrets also read by the opponent's down pass).
 */
function trafficBytes(nodes: number, hands: readonly number[], storeBytes: number): number {
  const [h0, h1] = hands;
  return 2 * nodes * 4 * (3 * (h0 + h1) / 2 + 2 * (h0 + h1) / 2) + 3 * storeBytes;
}

/**
 * Solves one spot on the GPU, checking exploitability every 10 iterations with up to two checks in
 * flight (the ~11 ms readback overlaps the next iterations; a target counts as reached when its
 * check's result is back). Then times 20 iterations and 3 checks on their own.
 */
async function gpuRun(
  ctx: GpuContext,
  name: string,
  text: string,
  bits: [number, number],
  maxIterations: number,
  stopPct: number,
  log: (s: string) => void,
): Promise<GpuRun> {
  const t0 = performance.now();
  const spot = prepareSpot(parseSolveConfig(text, name));
  const tree = buildTree(spot.game);
  const t1 = performance.now();
  const gpu = await GpuCfrSolver.create(ctx, tree, spot.game, {
    regretBits: bits[0],
    strategyBits: bits[1],
  });
  await ctx.device.queue.onSubmittedWorkDone();
  const t2 = performance.now();
  const formats = gpu.formats.join("/");
  const seconds: (number | null)[] = TARGETS.map(() => null);
  const its: (number | null)[] = TARGETS.map(() => null);
  let pct = Infinity, lastIt = 0, solveSeconds = 0, iterMs = 0, checkMs = 0;
  let kernels: Record<string, number> | null = null;
  try {
    const start = performance.now();
    const inflight: { it: number; p: Promise<{ percent: number }> }[] = [];
    let done = false;
    const settle = async () => {
      const c = inflight.shift()!;
      const e = await c.p;
      const el = (performance.now() - start) / 1000;
      pct = e.percent, lastIt = c.it;
      TARGETS.forEach((t, i) => {
        if (pct <= t && seconds[i] === null) seconds[i] = el, its[i] = c.it;
      });
      log(`${name} ${formats}: it ${c.it} ${pct.toFixed(3)}% ${el.toFixed(3)} s`);
      if (pct <= stopPct) done = true;
    };
    while (!done && gpu.iteration < maxIterations) {
      gpu.run(Math.min(10, maxIterations - gpu.iteration));
      inflight.push({ it: gpu.iteration, p: gpu.exploitability() });
      if (inflight.length >= 2) await settle();
    }
    while (inflight.length > 0) await settle();
    solveSeconds = (performance.now() - start) / 1000;
    const a = performance.now();
    gpu.run(20);
    await ctx.device.queue.onSubmittedWorkDone();
    const b = performance.now();
    for (let k = 0; k < 3; k++) await gpu.exploitability();
    iterMs = (b - a) / 20, checkMs = (performance.now() - b) / 3;
    kernels = await gpu.kernelTimes();
  } finally {
    gpu.destroy();
  }
  return {
    spot: name,
    formats,
    hands: `${spot.game.numHands[0]} / ${spot.game.numHands[1]}`,
    nodes: tree.size,
    treeSeconds: (t1 - t0) / 1000,
    uploadSeconds: (t2 - t1) / 1000,
    iterations: lastIt,
    exploitabilityPct: pct,
    msPerIteration: iterMs,
    msPerCheck: checkMs,
    solveSeconds,
    seconds,
    its,
    deviceBytes: gpu.deviceBytes,
    trafficBytes: trafficBytes(tree.size, spot.game.numHands, gpu.storeBytes),
    kernels,
    dispatches: gpu.dispatchesPerIteration,
  };
}

/** Runs T1 iterations for about 1.5 s so the GPU's clocks are up before anything is timed. */
async function warmUp(ctx: GpuContext): Promise<void> {
  const spot = prepareSpot(parseSolveConfig(T1_SPOT, "T1"));
  const gpu = await GpuCfrSolver.create(ctx, buildTree(spot.game), spot.game, {});
  const start = performance.now();
  while (performance.now() - start < 1500) {
    gpu.run(10);
    await ctx.device.queue.onSubmittedWorkDone();
  }
  gpu.destroy();
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
 * `deno task bench gpu-solve [--refsolve PATH] [--spots T1,T2,F1,R] [--iterations N]`: T1 (f32,
 * 16/16, 8/8, 8/4), T2 (f32) and F1 (f32, 8/4) solved on the GPU to 0.5 / 0.3 / 0.1 % of the pot
 * (F1 capped at 100 iterations), beside the reference solver on the CPU cores (T1, F1).
 */
export const suite: BenchSuite = {
  description:
    "postflop CFR on the GPU: T1, T2, F1 (f32) seconds to 0.5/0.3/0.1 % of the pot, ms per iteration, check cost, set-up, device memory; reference solver on the CPU for ratios",
  async run(opts): Promise<BenchReport> {
    const ctx = await getGpu();
    if (!ctx) throw new KibitzError("no_gpu", "bench gpu-solve needs a WebGPU adapter");
    const adapter = describeAdapter(ctx.report);
    const report = newReport("gpu-solve", adapter);
    const arg = (name: string) => {
      const i = opts.args.indexOf(name);
      return i >= 0 ? opts.args[i + 1] : undefined;
    };
    const spots = (arg("--spots") ?? "T1,T2,F1").split(",");
    const cap = Number(arg("--iterations") ?? Infinity);
    const f1Its = Math.min(cap, opts.full ? 300 : 100);
    if (!ctx.report.isFallback) await warmUp(ctx);
    const runs: GpuRun[] = [];
    if (spots.includes("T1")) {
      for (const bits of [[32, 32], [16, 16], [8, 8], [8, 4]] as [number, number][]) {
        const its = Math.min(cap, opts.full ? 1000 : 400);
        runs.push(await gpuRun(ctx, "T1", T1_SPOT, bits, its, 0.1, opts.log));
      }
    }
    if (spots.includes("R")) {
      // A small river spot: a smoke run on software adapters.
      for (const bits of [[32, 32], [8, 4]] as [number, number][]) {
        runs.push(await gpuRun(ctx, "R", SMOKE_RIVER, bits, Math.min(cap, 100), 0.1, opts.log));
      }
    }
    if (spots.includes("T2")) {
      const its = Math.min(cap, opts.full ? 1000 : 300);
      runs.push(await gpuRun(ctx, "T2", t2Config(...T2_SIZES), [32, 32], its, 0.1, opts.log));
    }
    if (spots.includes("F1")) {
      for (const bits of [[32, 32], [8, 4]] as [number, number][]) {
        runs.push(await gpuRun(ctx, "F1", F1, bits, f1Its, 0.1, opts.log));
      }
    }
    report.tables.push({
      title:
        `GPU solve on ${adapter}; exploitability checked every 10 iterations (included in the seconds)`,
      columns: [
        "spot",
        "regrets/strategy",
        "hands",
        "public nodes",
        "tree build s",
        "upload + compile s",
        "iterations",
        "last %",
        "ms / iteration",
        "ms / check",
        ...TARGETS.map((t) => `s to ${t}%`),
        ...TARGETS.map((t) => `its to ${t}%`),
        "device MB",
        "GB moved / it (floor)",
        "GB/s",
      ],
      rows: runs.map((r) => [
        r.spot,
        r.formats,
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
        r.trafficBytes / 1e9,
        r.msPerIteration > 0 ? r.trafficBytes / 1e6 / r.msPerIteration : null,
      ]),
    });
    const names = ["down", "fold", "showdown", "dense", "up", "reduce", "encode", "commit"];
    const timed = runs.filter((r) => r.kernels);
    if (timed.length > 0) {
      report.tables.push({
        title: "GPU ms per kernel in one iteration (each dispatch timed in its own pass: " +
          "the sum exceeds ms / iteration by the per-pass overhead)",
        columns: ["spot", "regrets/strategy", ...names, "sum", "dispatches"],
        rows: timed.map((r) => {
          const k = r.kernels!;
          return [
            r.spot,
            r.formats,
            ...names.map((n) => k[n] ?? null),
            Object.values(k).reduce((a, b) => a + b, 0),
            r.dispatches,
          ];
        }),
      });
    }
    const ref = arg("--refsolve") ?? Deno.env.get("REFSOLVE") ?? "";
    if (ref) {
      const threads = navigator.hardwareConcurrency;
      const refs: RefRun[] = [];
      if (spots.includes("T1")) refs.push(await refRun(ref, "T1", 1000, threads));
      if (spots.includes("F1")) refs.push(await refRun(ref, "F1", f1Its, threads));
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
          const g = runs.find((x) => x.spot === r.spot && x.formats === "f32/f32");
          return [
            r.spot,
            r.iterations,
            r.exploitabilityPct,
            r.solveSeconds,
            ...r.secondsTo,
            r.memoryBytes / MB,
            ...TARGETS.map((_, i) => ratio(g?.seconds[i] ?? null, r.secondsTo[i])),
          ];
        }),
      });
    } else {
      report.notes.push("reference solver not run: pass --refsolve PATH or set REFSOLVE");
    }
    report.notes.push(
      `F1 capped at ${f1Its} iterations. Device MB = buffers this solve allocated (tables, 2 node-vector ` +
        "buffers of public nodes x max hands, stores). Checks are pipelined (two in flight); ms / check is " +
        "one check on its own, readback included. GB moved / it is a floor on the traffic (vectors and stores); GB/s = it / ms per iteration, to set beside the card's bandwidth (H200: 4.8 TB/s peak, 1.48 TB/s for a plain copy kernel through Deno's WebGPU). Warm-up (hardware adapters): 1.5 s of T1 iterations before timing.",
    );
    return report;
  },
};
