import { benchKeyValues, type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import type { CfrExploitability } from "../cfr/evaluate.ts";
import { GpuCfrSolver, type GpuSolveOptions } from "../cfr/gpu/solver.ts";
import { buildTree } from "../cfr/tree.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { F1 } from "./bench.ts";
import { parseSolveConfig, T1_SPOT } from "./config.ts";
import type { PostflopGame } from "./game.ts";
import { rootSummary } from "./results.ts";
import { prepareSpot, runSolve } from "./solve.ts";
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
  /** Memory setting: "default", "unchunked" or the budget in MB. */
  memory: string;
  hands: string;
  nodes: number;
  chunks: number;
  treeSeconds: number;
  uploadSeconds: number;
  iterations: number;
  exploitabilityPct: number;
  /** Iterations run after the check that first met the stop target (checks are pipelined). */
  pastTarget: number | null;
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
  checkDispatches: number;
  /** Root: EVs of both players (chips of the pot) and the acting player's action frequencies. */
  rootEv: [number, number];
  rootActions: string[];
  rootFrequencies: number[];
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

/** Root action frequencies of an average strategy block (actions x hands), range-weighted. */
function rootFrequencies(game: PostflopGame, p: 0 | 1, block: Float32Array): number[] {
  const H = game.numHands[p], A = block.length / H;
  const comp = new Float32Array(H);
  game.compatibleSums(p, game.initialWeights((1 - p) as 0 | 1), comp);
  const w = game.initialWeights(p);
  const f = new Array<number>(A).fill(0);
  let mass = 0;
  for (let h = 0; h < H; h++) {
    let sum = 0;
    for (let a = 0; a < A; a++) sum += block[a * H + h];
    const dw = comp[h] * w[h];
    mass += dw;
    for (let a = 0; a < A; a++) f[a] += dw * (sum > 0 ? block[a * H + h] / sum : 1 / A);
  }
  return f.map((x) => x / mass);
}

/** One line per finished run, so a run cut short (a time cap) still reports what it measured. */
function runLine(r: GpuRun): string {
  const f = (x: number | null, d = 3) => x === null ? "-" : x.toFixed(d);
  return `ROW ${r.spot} ${r.formats} mem=${r.memory}: ${r.chunks} chunk(s), ${
    (r.deviceBytes / MB).toFixed(1)
  } MB, ${r.dispatches} dispatches/it, ${r.checkDispatches}/check, ${
    f(r.msPerIteration, 2)
  } ms/it, ${f(r.msPerCheck, 1)} ms/check; s to ${
    TARGETS.map((t, i) => `${t}%: ${f(r.seconds[i])} (it ${r.its[i] ?? "-"})`).join(", ")
  }; final it ${r.iterations} ${f(r.exploitabilityPct, 4)}% (${
    r.pastTarget ?? "-"
  } its past the target check); root EV ${f(r.rootEv[0], 2)} / ${f(r.rootEv[1], 2)}; root ${
    r.rootActions.map((a, i) => `${a} ${(100 * r.rootFrequencies[i]).toFixed(2)}%`).join(", ")
  }; set-up ${f(r.treeSeconds, 2)} s tree + ${f(r.uploadSeconds, 2)} s upload`;
}

/**
 * Solves one spot on the GPU, checking exploitability every 10 iterations with up to two checks in
 * flight (the ~11 ms readback overlaps the next iterations; a target counts as reached when its
 * check's result is back, and the last check is of the final iteration). Then times 20 iterations
 * and 3 checks on their own.
 */
async function gpuRun(
  ctx: GpuContext,
  name: string,
  text: string,
  bits: [number, number],
  maxIterations: number,
  stopPct: number,
  memory: GpuSolveOptions,
  log: (s: string) => void,
): Promise<GpuRun> {
  const t0 = performance.now();
  const spot = prepareSpot(parseSolveConfig(text, name));
  const tree = buildTree(spot.game);
  const t1 = performance.now();
  const gpu = await GpuCfrSolver.create(ctx, tree, spot.game, {
    regretBits: bits[0],
    strategyBits: bits[1],
  }, memory);
  await ctx.device.queue.onSubmittedWorkDone();
  const t2 = performance.now();
  const formats = gpu.formats.join("/");
  const label = memory.memoryBudget !== undefined
    ? `${memory.memoryBudget / MB}MB`
    : memory.chunks === 1
    ? "unchunked"
    : "default";
  log(
    `${name} ${formats} (${label}): ${gpu.chunks} chunk(s), ${
      (gpu.deviceBytes / MB).toFixed(1)
    } MB on the device, ${gpu.dispatchesPerIteration} dispatches per iteration`,
  );
  const seconds: (number | null)[] = TARGETS.map(() => null);
  const its: (number | null)[] = TARGETS.map(() => null);
  let pct = Infinity, lastIt = 0, solveSeconds = 0, iterMs = 0, checkMs = 0;
  let stopIt: number | null = null;
  let kernels: Record<string, number> | null = null;
  let ev: [number, number] = [NaN, NaN];
  let root: { actions: string[]; frequencies: number[] } = { actions: [], frequencies: [] };
  try {
    const start = performance.now();
    const inflight: { it: number; p: Promise<CfrExploitability> }[] = [];
    const settle = async () => {
      const c = inflight.shift()!;
      const e = await c.p;
      const el = (performance.now() - start) / 1000;
      pct = e.percent, lastIt = c.it;
      ev = [e.ev[0] + spot.game.startingPot / 2, e.ev[1] + spot.game.startingPot / 2];
      TARGETS.forEach((t, i) => {
        if (pct <= t && seconds[i] === null) seconds[i] = el, its[i] = c.it;
      });
      log(`${name} ${formats}: it ${c.it} ${pct.toFixed(3)}% ${el.toFixed(3)} s`);
      if (pct <= stopPct && stopIt === null) stopIt = c.it;
    };
    while (stopIt === null && gpu.iteration < maxIterations) {
      gpu.run(Math.min(10, maxIterations - gpu.iteration));
      inflight.push({ it: gpu.iteration, p: gpu.exploitability() });
      if (inflight.length >= 2) await settle();
    }
    while (inflight.length > 0) await settle();
    solveSeconds = (performance.now() - start) / 1000;
    root = await gpuRoot(gpu, spot.game);
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
    memory: label,
    hands: `${spot.game.numHands[0]} / ${spot.game.numHands[1]}`,
    nodes: tree.size,
    chunks: gpu.chunks,
    treeSeconds: (t1 - t0) / 1000,
    uploadSeconds: (t2 - t1) / 1000,
    iterations: lastIt,
    exploitabilityPct: pct,
    pastTarget: stopIt === null ? null : lastIt - stopIt,
    msPerIteration: iterMs,
    msPerCheck: checkMs,
    solveSeconds,
    seconds,
    its,
    deviceBytes: gpu.deviceBytes,
    trafficBytes: trafficBytes(tree.size, spot.game.numHands, gpu.storeBytes),
    kernels,
    dispatches: gpu.dispatchesPerIteration,
    checkDispatches: gpu.dispatchesPerCheck,
    rootEv: ev,
    rootActions: root.actions,
    rootFrequencies: root.frequencies,
  };
}

/** The root's actions and range-weighted frequencies of the GPU's average strategy. */
async function gpuRoot(
  gpu: GpuCfrSolver,
  game: PostflopGame,
): Promise<{ actions: string[]; frequencies: number[] }> {
  const tree = gpu.tree;
  if (tree.block[0] < 0) return { actions: [], frequencies: [] };
  const p = tree.player[0] as 0 | 1;
  const actions: string[] = [];
  for (let a = 0; a < tree.numChildren[0]; a++) actions.push(tree.label[tree.firstChild[0] + a]);
  return { actions, frequencies: rootFrequencies(game, p, await gpu.strategyBlock(tree.block[0])) };
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

/** The suite's key=value arguments, with the runner's `--refsolve PATH` set apart. */
function suiteArgs(args: string[]): { kv: Map<string, string>; refsolve: string } {
  const rest: string[] = [];
  let refsolve = "";
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--refsolve") refsolve = args[++i] ?? "";
    else if (args[i] === "--repeats") i++;
    else rest.push(args[i]);
  }
  return { kv: benchKeyValues("gpu-solve", rest), refsolve };
}

/** Root summary of a solve of `text` to `target` % on one backend (the `deno task solve` path). */
async function backendRoot(
  ctx: GpuContext,
  name: string,
  text: string,
  backend: "cpu" | "gpu",
  target: number,
  maxIterations: number,
  log: (s: string) => void,
) {
  const spot = prepareSpot(parseSolveConfig(text, name));
  const s = spot.config.solver as { -readonly [K in keyof typeof spot.config.solver]: unknown };
  s.targetExploitabilityPct = target;
  s.maxIterations = maxIterations;
  s.threads = navigator.hardwareConcurrency;
  const choice = backend === "gpu"
    ? { backend, reason: "bench", ctx }
    : { backend, reason: "bench" } as const;
  const out = await runSolve(spot, { backend: choice });
  const sum = rootSummary(out.solver.tree, spot.game, out.solver.averagePolicy());
  const line = `COMPARE ${name} ${backend}: ${out.iterations} its, ${
    out.exploitability.percent.toFixed(4)
  }% in ${out.seconds.toFixed(2)} s; root (${sum.player}) ${
    sum.actions.map((a, i) => `${a} ${(100 * sum.frequencies[i]).toFixed(2)}%`).join(", ")
  }; EV ${sum.ev[0].toFixed(3)} / ${sum.ev[1].toFixed(3)}`;
  log(line);
  return { name, backend, out, sum };
}

/**
 * `deno task bench gpu-solve [spots=T1,T2,F1] [its=N] [budget=MB] [compare=T2] [--refsolve PATH]`:
 * T1 and T2 (f32, 16/16, 8/4) solved on the GPU to 0.1 % of the pot, F1 (f32, 16/16, 8/4 with the
 * default memory plan, and 8/4 within `budget` MB, default 300) capped at 100 iterations; each row
 * is printed as it finishes (`ROW ...`). `compare=T2` also solves T2 to 0.1 % on the GPU and the
 * CPU through the solve path and prints both root strategies (`COMPARE ...`). The reference
 * solver runs on the CPU cores for ratios (T1, F1) when given.
 */
export const suite: BenchSuite = {
  description:
    "postflop CFR on the GPU: T1, T2, F1 (f32, 16/16, 8/4; F1 also within a memory budget) seconds to 0.5/0.3/0.1 % of the pot, ms per iteration, check cost, chunks, dispatches, device memory, root EVs and frequencies; reference solver on the CPU for ratios",
  async run(opts): Promise<BenchReport> {
    const ctx = await getGpu();
    if (!ctx) throw new KibitzError("no_gpu", "bench gpu-solve needs a WebGPU adapter");
    const adapter = describeAdapter(ctx.report);
    const report = newReport("gpu-solve", adapter);
    const { kv, refsolve } = suiteArgs(opts.args);
    const spots = (kv.get("spots") ?? "T1,T2,F1").split(",");
    const cap = Number(kv.get("its") ?? Infinity);
    const budget = Number(kv.get("budget") ?? 300) * MB;
    const budgetRow = kv.get("budget") !== "0";
    const compare = (kv.get("compare") ?? "").split(",").filter((x) => x);
    for (const [k, v] of [["its", cap], ["budget", budgetRow ? budget : 1]] as const) {
      if (!(v > 0)) throw new KibitzError("bad_args", `gpu-solve: ${k} must be a positive number`);
    }
    const f1Its = Math.min(cap, opts.full ? 300 : 100);
    if (!ctx.report.isFallback) await warmUp(ctx);
    const runs: GpuRun[] = [];
    const add = async (
      name: string,
      text: string,
      bits: [number, number],
      its: number,
      memory: GpuSolveOptions = {},
    ) => {
      try {
        const r = await gpuRun(ctx, name, text, bits, its, 0.1, memory, opts.log);
        runs.push(r);
        opts.log(runLine(r));
      } catch (e) {
        // One run that does not fit (a budget no chunking meets) must not cost the others.
        if (!isKibitzError(e)) throw e;
        opts.log(`ROW ${name} ${bits.join("/")} failed: ${e.message}`);
        report.notes.push(`${name} ${bits.join("/")} ${JSON.stringify(memory)}: ${e.message}`);
      }
    };
    // `formats=32/32,8/4` runs a subset (a capped device run); `budget=0` skips F1's budget row.
    const formats = (kv.get("formats") ?? "32/32,16/16,8/4").split(",").map((f) => {
      const [r, s] = f.split("/").map(Number);
      if (![32, 16, 8, 4].includes(r) || ![32, 16, 8, 4].includes(s)) {
        throw new KibitzError("bad_args", `gpu-solve: formats takes e.g. 32/32,8/4, got ${f}`);
      }
      return [r, s] as [number, number];
    });
    if (spots.includes("T1")) {
      for (const bits of formats) {
        await add("T1", T1_SPOT, bits, Math.min(cap, opts.full ? 1000 : 400));
      }
    }
    if (spots.includes("R")) {
      // A small river spot: a smoke run on software adapters.
      for (const bits of [[32, 32], [8, 4]] as [number, number][]) {
        await add("R", SMOKE_RIVER, bits, Math.min(cap, 100));
      }
    }
    if (spots.includes("T2")) {
      const t2 = t2Config(...T2_SIZES);
      for (const bits of formats) await add("T2", t2, bits, Math.min(cap, opts.full ? 1000 : 300));
    }
    if (spots.includes("F1")) {
      for (const bits of formats) await add("F1", F1, bits, f1Its);
      if (budgetRow) await add("F1", F1, [8, 4], f1Its, { memoryBudget: budget });
    }
    const compared: Awaited<ReturnType<typeof backendRoot>>[][] = [];
    for (const name of compare) {
      const texts: Record<string, string> = {
        T1: T1_SPOT,
        T2: t2Config(...T2_SIZES),
        R: SMOKE_RIVER,
      };
      const text = texts[name];
      if (!text) {
        throw new KibitzError("bad_args", `gpu-solve: compare takes T1, T2 or R, got ${name}`);
      }
      compared.push([
        await backendRoot(ctx, name, text, "gpu", 0.1, 3000, opts.log),
        await backendRoot(ctx, name, text, "cpu", 0.1, 3000, opts.log),
      ]);
    }
    report.tables.push({
      title:
        `GPU solve on ${adapter}; exploitability checked every 10 iterations (included in the seconds)`,
      columns: [
        "spot",
        "regrets/strategy",
        "memory plan",
        "chunks",
        "device MB",
        "dispatches / it",
        "dispatches / check",
        "hands",
        "public nodes",
        "tree build s",
        "upload + compile s",
        "iterations",
        "last %",
        "its past target check",
        "ms / iteration",
        "ms / check",
        ...TARGETS.map((t) => `s to ${t}%`),
        ...TARGETS.map((t) => `its to ${t}%`),
        "GB moved / it (floor)",
        "GB/s",
        "root EV OOP / IP",
        "root frequencies",
      ],
      rows: runs.map((r) => [
        r.spot,
        r.formats,
        r.memory,
        r.chunks,
        r.deviceBytes / MB,
        r.dispatches,
        r.checkDispatches,
        r.hands,
        r.nodes,
        r.treeSeconds,
        r.uploadSeconds,
        r.iterations,
        r.exploitabilityPct,
        r.pastTarget,
        r.msPerIteration,
        r.msPerCheck,
        ...r.seconds,
        ...r.its,
        r.trafficBytes / 1e9,
        r.msPerIteration > 0 ? r.trafficBytes / 1e6 / r.msPerIteration : null,
        `${r.rootEv[0].toFixed(2)} / ${r.rootEv[1].toFixed(2)}`,
        r.rootActions.map((a, i) => `${a} ${(100 * r.rootFrequencies[i]).toFixed(1)}%`).join(", "),
      ]),
    });
    if (compared.length > 0) {
      report.tables.push({
        title: "Root strategy, GPU vs CPU, each solved to 0.1 % of the pot through the solve path",
        columns: [
          "spot",
          "backend",
          "iterations",
          "final %",
          "seconds",
          "root EV OOP / IP",
          "root",
        ],
        rows: compared.flat().map((c) => [
          c.name,
          c.backend,
          c.out.iterations,
          c.out.exploitability.percent,
          c.out.seconds,
          `${c.sum.ev[0].toFixed(3)} / ${c.sum.ev[1].toFixed(3)}`,
          c.sum.actions.map((a, i) => `${a} ${(100 * c.sum.frequencies[i]).toFixed(2)}%`).join(
            ", ",
          ),
        ]),
      });
    }
    const names = [
      "down",
      "fold",
      "showdown",
      "dense",
      "up",
      "accum",
      "settle",
      "reduce",
      "encode",
      "commit",
    ];
    const timed = runs.filter((r) => r.kernels);
    if (timed.length > 0) {
      report.tables.push({
        title: "GPU ms per kernel in one iteration (each dispatch timed in its own pass: " +
          "the sum exceeds ms / iteration by the per-pass overhead)",
        columns: ["spot", "regrets/strategy", "memory plan", ...names, "sum", "dispatches"],
        rows: timed.map((r) => {
          const k = r.kernels!;
          return [
            r.spot,
            r.formats,
            r.memory,
            ...names.map((n) => k[n] ?? null),
            Object.values(k).reduce((a, b) => a + b, 0),
            r.dispatches,
          ];
        }),
      });
    }
    const ref = refsolve || (Deno.env.get("REFSOLVE") ?? "");
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
          const g = runs.find((x) =>
            x.spot === r.spot && x.formats === "f32/f32" && x.memory === "default"
          );
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
      `F1 capped at ${f1Its} iterations. Device MB = buffers this solve allocated (stores, scales, tables, ` +
        "node rows (reach and values share a row), instant regrets of quantized stores, scratch, dispatch " +
        "parameters); memory plan: default (the lower tree in chunks no larger than max(256 MiB, stores + " +
        "tables)), or a budget in MB (fewest chunks that fit). Checks are pipelined (two in flight): the run " +
        "stops when a check reports 0.1 %, and the last check, of the final iteration, is awaited (its past " +
        "target check = iterations after the one that met it; last % is the final iteration's). ms / check is " +
        "one check on its own, readback included. Root EVs are chips of the pot at the final iteration. GB moved / it is a floor on the traffic (vectors and stores); GB/s = it / ms per iteration, to set beside the card's bandwidth (H200: 4.8 TB/s peak, 1.48 TB/s for a plain copy kernel through Deno's WebGPU). Warm-up (hardware adapters): 1.5 s of T1 iterations before timing.",
    );
    return report;
  },
};
