import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import type { CfrExploitability } from "../cfr/evaluate.ts";
import { GpuCfrSolver } from "../cfr/gpu/solver.ts";
import { CfrSolver, type SolverOptions } from "../cfr/solver.ts";
import { buildTree, type PublicTree } from "../cfr/tree.ts";
import { type WarmResets, warmSchedule } from "../cfr/warmstart_values.ts";
import { writeFileAtomic } from "../cli/atomic.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { buildActionTree } from "./action_tree.ts";
import { parseSolveConfig } from "./config.ts";
import { PostflopGame } from "./game.ts";
import {
  autoWarmStartMethod,
  warmStartCoverage,
  type WarmStartMethod,
  warmStartPostflop,
  type WarmStartSubtrees,
} from "./warmstart.ts";
import { REGRETS_AUTO_WEIGHT } from "./warmstart_config.ts";
import { type WarmResponses, warmStartPostflopValues } from "./warmstart_values.ts";

// `deno task bench warmstart`: spot T2 of ../shared/data/poker/REFERENCE.md solved cold and
// warm-started from T2s (same spot, sizes "66%, a" / "2.5x") by both methods, for f32 and for 8-bit
// regrets with an 8-bit strategy; with `f1`, also spot F1 warm-started from F1s, the same spot with
// one size (52 %) on every street and no raises (117 betting nodes against F1's 501).
// Exploitability is measured every 10 iterations (`every=N`; its time is not counted). A warm run's iterations
// are counted as the seed counts them, W plus the full tree's own; its seconds include the small
// solve and the seeding. With `--backend gpu` the small and the full solves run on the GPU and the
// seeding on the CPU between them, as `deno task solve --backend gpu` does.

const BASIC_OOP = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s";
const BASIC_IP = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+";

/** The config text of spot T2 (or T2s) with bet sizes `bet` / `raise` on the turn and river. */
export function t2Config(bet: string, raise: string): string {
  const streets = ["turn", "river"].map((s) =>
    `[bet_sizes.${s}]\noop_bet = "${bet}"\noop_raise = "${raise}"\n` +
    `ip_bet = "${bet}"\nip_raise = "${raise}"\noop_donk = ""\n`
  );
  return `[ranges]\noop = "${BASIC_OOP}"\nip = "${BASIC_IP}"\n[cards]\nflop = "Td9d6h"\nturn = "Qc"\n` +
    `[tree]\nstarting_pot = 200\neffective_stack = 900\n${streets.join("")}`;
}

/** Sizes of T2s (small) and T2 (large). */
export const T2S_SIZES = ["66%, a", "2.5x"] as const,
  T2_SIZES = [
    "33%, 66%, 100%, 150%, a",
    "2.5x, a",
  ] as const;

const F1_RANGES = `[ranges]
oop = "88+,A8s+,A5s-A2s:0.5,AJo+,ATo:0.75,K9s+,KQo,KJo:0.75,KTo:0.25,Q9s+,QJo:0.5,J8s+,JTo:0.25,T8s+,T7s:0.45,97s+,96s:0.45,87s,86s:0.75,85s:0.45,75s+:0.75,74s:0.45,65s:0.75,64s:0.5,63s:0.45,54s:0.75,53s:0.5,52s:0.45,43s:0.5,42s:0.45,32s:0.45"
ip = "AA:0.25,99-22,AJs-A2s,AQo-A8o,K2s+,K9o+,Q2s+,Q9o+,J6s+,J9o+,T6s+,T9o,96s+,95s:0.5,98o,86s+,85s:0.5,75s+,74s:0.5,64s+,63s:0.5,54s,53s:0.5,43s"
[cards]
flop = "Qs Jh 2h"
[tree]
starting_pot = 180
effective_stack = 910
add_allin_threshold = 0
force_allin_threshold = 0
merging_threshold = 0
`;

/** Spot F1 with bet sizes per street (flop, turn, river) and the raise sizes ("" for none). */
export function f1Config(bets: readonly [string, string, string], raise: string): string {
  return F1_RANGES +
    ["flop", "turn", "river"].map((s, i) =>
      `[bet_sizes.${s}]\noop_bet = "${bets[i]}"\noop_raise = "${raise}"\n` +
      `ip_bet = "${bets[i]}"\nip_raise = "${raise}"\n${i > 0 ? 'oop_donk = ""\n' : ""}`
    ).join("");
}

interface Spot {
  game: PostflopGame;
  tree: PublicTree;
}

function makeSpot(text: string, name: string): Spot {
  const config = parseSolveConfig(text, name);
  const game = new PostflopGame(buildActionTree(config.tree), config.board, config.rangeWeights);
  return { game, tree: buildTree(game) };
}

const TARGETS = [0.5, 0.3, 0.1];

/** One run's measurements. */
interface RunResult {
  label: string;
  method: "cold" | WarmStartMethod;
  /** W (0 for cold). */
  weight: number;
  /** Small solve plus seeding, seconds (0 for cold). */
  setupSeconds: number;
  /** Exploitability of the full tree's average right after the seeding (% of pot). */
  startPct: number;
  /** Counted iterations (W + full-tree iterations) at the first check at or below each target. */
  its: (number | null)[];
  seconds: (number | null)[];
  /** Counted iterations -> exploitability %. */
  curve: Map<number, number>;
  /** Root EVs of both players at the first check at or below each target (null: not reached). */
  evAt: ([number, number] | null)[];
}

/** Arguments of the suite. */
interface BenchArgs {
  weights: (number | "auto")[];
  regretWeights: number[];
  smallIterations: number;
  maxIts: number;
  methods: ("cold" | WarmStartMethod)[];
  storages: string[];
  f1: boolean;
  /** Run spot T2 (default; `spots=f1` runs F1 alone). */
  t2: boolean;
  resets: WarmResets;
  /** Solver threads of every run (default 1). */
  threads: number;
  /** Regrets method: warm the subtrees of new sizes from the nearest size's, or leave them cold. */
  subtrees: WarmStartSubtrees;
  /** Average resets of the regrets method's continued schedule (default "keep": the reference's). */
  regretResets: WarmResets;
  responses: WarmResponses;
  epsilon: number;
  offLine: number;
  newActions: "value" | "capped";
  csv: string;
  /** Iterations between exploitability checks (default 10; 5 where resolution matters). */
  every: number;
  /**
   * Seed source: the one-size tree (default), or the full tree itself ("self": a perfect mapping,
   * the bound of what any transfer of a T-iteration regret state can give; its seconds mean nothing).
   */
  from: "small" | "self";
}

/** The suite's key=value arguments, one per line: `deno task bench warmstart --help` prints them. */
export const WARMSTART_USAGE =
  `spots=t2,f1        spots to run (default t2): T2 from T2s, F1 from F1s; a bare "f1" adds F1 to T2
methods=cold,regrets,values  runs per spot and storage (default all three)
storage=f32,8      f32 stores and/or 8-bit regrets with an 8-bit strategy (default both)
max=N              counted iterations (W + the full tree's) at most (default 300)
every=N            iterations between exploitability checks, not timed (default 10)
small=N            iterations of the small tree's solve (default 40)
threads=N          solver threads of every CPU run (default 1)
rweight=W[,W...]   regrets method: W, one run each (default 30, its "auto")
weight=auto|W[,...]  values method: W, one run each (default auto: from the mapped strategy's exploitability)
resets=continue|none|keep   values method: average resets from 4 W (continue, default), none, or the reference's
rresets=keep|continue|none  regrets method: the reference's resets (keep, default), from 4 W, or none
subtrees=nearest|matched    regrets method: new sizes' subtrees from the nearest size (default) or cold
responses=copy|pot-odds|rank  values method: responses to a new size (default copy)
epsilon=E          values method: floor of the mapped strategy's probabilities, 0..1 (default 0)
offline=F          values method: weight of nodes off the small tree's lines, 0..1 (default 1)
new=value|capped   values method: new actions' regrets from their values (default) or capped at 0
from=small|self    seed source: the one-size tree (default) or the full tree itself (a perfect mapping)
csv=PATH           the curves as CSV (default bench-out/warmstart_curves.csv)
--backend gpu      the small and full solves on the GPU, the seeding on the CPU (auto, cpu: the CPU)
Writes <out>/warmstart.md and .json: counted iterations, x against cold and seconds (small solve and
seeding included) to 0.5 / 0.3 / 0.1 %, which method warmstart_method = "auto" picks per spot, and
root EVs against cold.`;

/** Reads the suite's key=value arguments; a bad one is an error naming it and the valid values. */
export function parseWarmstartArgs(args: string[]): BenchArgs {
  const out: BenchArgs = {
    weights: ["auto"],
    regretWeights: [REGRETS_AUTO_WEIGHT],
    smallIterations: 40,
    maxIts: 300,
    methods: ["cold", "regrets", "values"],
    storages: ["f32", "8"],
    f1: false,
    t2: true,
    resets: "continue",
    regretResets: "keep",
    subtrees: "nearest",
    threads: 1,
    responses: "copy",
    epsilon: 0,
    offLine: 1,
    newActions: "value",
    csv: "bench-out/warmstart_curves.csv",
    every: 10,
    from: "small",
  };
  const bad = (why: string): never => {
    throw new KibitzError(
      "bad_args",
      `warmstart bench: ${why} (deno task bench warmstart --help lists the arguments)`,
    );
  };
  const oneOf = (k: string, v: string, valid: readonly string[]): string =>
    valid.includes(v) ? v : bad(`${k}=${v}: unknown value "${v}"; valid: ${valid.join(", ")}`);
  const listOf = (k: string, v: string, valid: readonly string[]): string[] =>
    v.split(",").map((x) =>
      valid.includes(x) ? x : bad(`${k}=${v}: unknown value "${x}"; valid: ${valid.join(", ")}`)
    );
  for (const a of args) {
    if (a === "f1") {
      out.f1 = true;
      continue;
    }
    const m = /^([a-z]+)=(.+)$/.exec(a);
    if (!m) bad(`unknown argument "${a}": arguments are key=value, or f1`);
    const [, k, v] = m!;
    const n = Number(v);
    const pos = (x: string) => {
      const y = Number(x);
      return y > 0 && Number.isFinite(y)
        ? y
        : bad(`${k}=${v}: must be a positive number, got "${x}"`);
    };
    const positive = () => pos(v);
    if (k === "weight") out.weights = v.split(",").map((x) => (x === "auto" ? "auto" : pos(x)));
    else if (k === "rweight") out.regretWeights = v.split(",").map(pos);
    else if (k === "small") out.smallIterations = Math.round(positive());
    else if (k === "max") out.maxIts = Math.round(positive());
    else if (k === "every") out.every = Math.round(positive());
    else if (k === "from") out.from = oneOf(k, v, ["small", "self"]) as BenchArgs["from"];
    else if (k === "epsilon") {
      out.epsilon = n >= 0 && n <= 1 ? n : bad(`epsilon=${v}: must be in 0..1`);
    } else if (k === "csv") out.csv = v;
    else if (k === "new") out.newActions = oneOf(k, v, ["value", "capped"]) as "value" | "capped";
    else if (k === "offline") {
      out.offLine = n >= 0 && n <= 1 ? n : bad(`offline=${v}: must be in 0..1`);
    } else if (k === "spots") {
      const ss = listOf(k, v, ["t2", "f1"]);
      out.t2 = ss.includes("t2");
      out.f1 = ss.includes("f1");
    } else if (k === "resets") {
      out.resets = oneOf(k, v, ["continue", "none", "keep"]) as WarmResets;
    } else if (k === "threads") out.threads = Math.round(positive());
    else if (k === "subtrees") {
      out.subtrees = oneOf(k, v, ["nearest", "matched"]) as WarmStartSubtrees;
    } else if (k === "rresets") {
      out.regretResets = oneOf(k, v, ["keep", "continue", "none"]) as WarmResets;
    } else if (k === "responses") {
      out.responses = oneOf(k, v, ["copy", "pot-odds", "rank"]) as WarmResponses;
    } else if (k === "methods") {
      out.methods = listOf(k, v, ["cold", "regrets", "values"]) as BenchArgs["methods"];
    } else if (k === "storage") out.storages = listOf(k, v, ["f32", "8"]);
    else bad(`unknown argument "${k}"`);
  }
  return out;
}

/** One exploitability check of a run: records the curve point, the targets reached and logs. */
function record(
  r: RunResult,
  it: number,
  e: CfrExploitability,
  ms: number,
  log: (l: string) => void,
) {
  r.curve.set(it, e.percent);
  TARGETS.forEach((t, i) => {
    if (r.its[i] === null && e.percent <= t) {
      r.its[i] = it;
      r.seconds[i] = ms / 1000;
      r.evAt[i] = [e.ev[0], e.ev[1]];
    }
  });
  log(
    `${r.label}: ${it} its ${e.percent.toFixed(3)}% ${(ms / 1000).toFixed(1)} s, root EVs ${
      e.ev[0].toFixed(3)
    } / ${e.ev[1].toFixed(3)}`,
  );
}

/** Runs the full tree from where it stands to the last target or `maxIts` counted iterations. */
function solveLarge(
  s: CfrSolver,
  r: RunResult,
  maxIts: number,
  every: number,
  log: (l: string) => void,
): void {
  let ms = r.setupSeconds * 1000;
  while (s.iteration < maxIts && r.its.some((x) => x === null)) {
    const t0 = performance.now();
    s.run(Math.min(every, maxIts - s.iteration));
    ms += performance.now() - t0;
    record(r, s.iteration, s.exploitability(), ms, log);
  }
}

/**
 * The same on the GPU: the device stores start from `s` (seeded or cold) and its iteration t = W,
 * with its discount as the seeding left it (runGpuSolve's path); iterations are timed to the end of
 * their GPU work, checks are not. The solver's upload (`setupMs`) counts with the run.
 */
async function solveLargeGpu(
  ctx: GpuContext,
  s: CfrSolver,
  so: SolverOptions,
  r: RunResult,
  maxIts: number,
  every: number,
  log: (l: string) => void,
): Promise<void> {
  const g = await GpuCfrSolver.create(ctx, s.tree, s.game, { ...so, discount: { ...s.discount } });
  try {
    const t0 = performance.now();
    await g.copyFrom(s);
    await ctx.device.queue.onSubmittedWorkDone();
    let ms = r.setupSeconds * 1000 + performance.now() - t0;
    while (g.iteration < maxIts && r.its.some((x) => x === null)) {
      const t1 = performance.now();
      g.run(Math.min(every, maxIts - g.iteration));
      await ctx.device.queue.onSubmittedWorkDone();
      ms += performance.now() - t1;
      record(r, g.iteration, await g.exploitability(), ms, log);
    }
  } finally {
    g.destroy();
  }
}

/** The small tree's solve of `iterations` on the GPU, its stores read back into `ss`. */
async function solveSmallGpu(
  ctx: GpuContext,
  ss: CfrSolver,
  so: SolverOptions,
  iterations: number,
): Promise<number> {
  const g = await GpuCfrSolver.create(ctx, ss.tree, ss.game, so);
  try {
    const t0 = performance.now(); // the build above is not timed, as no solver's construction is
    g.run(iterations);
    await g.copyTo(ss);
    return performance.now() - t0;
  } finally {
    g.destroy();
  }
}

/**
 * Root EVs against the cold run's: at the lowest target both reached (the EVs of each run at its own
 * first check there), and that target; nulls without a cold run or a common target.
 */
function evGap(r: RunResult, cold: RunResult | null): (number | null)[] {
  if (!cold) return [null, null];
  for (let i = TARGETS.length - 1; i >= 0; i--) {
    const a = r.evAt[i], b = cold.evAt[i];
    if (a && b) return [Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1])), TARGETS[i]];
  }
  return [null, null];
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b > 0 ? a / b : null;
}

/** Cold and warm runs of one spot and storage (on the GPU when `ctx` is given). */
async function runSpot(
  name: string,
  small: Spot,
  large: Spot,
  storage: string,
  so: SolverOptions,
  a: BenchArgs,
  log: (l: string) => void,
  ctx: GpuContext | null,
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  const fresh = (label: string, method: RunResult["method"]): RunResult => ({
    label: `${name} ${storage} ${label}`,
    method,
    weight: 0,
    setupSeconds: 0,
    startPct: NaN,
    its: TARGETS.map(() => null),
    seconds: TARGETS.map(() => null),
    curve: new Map(),
    evAt: TARGETS.map(() => null),
  });
  const variants: ["cold" | WarmStartMethod, number | "auto"][] = [];
  for (const m of a.methods) {
    if (m === "cold") variants.push([m, 0]);
    else if (m === "regrets") { for (const w of a.regretWeights) variants.push([m, w]); }
    else for (const w of a.weights) variants.push([m, w]);
  }
  // A GPU run's CPU solvers hold the stores between the phases; the Wasm walk would go unused.
  const cpuSo: SolverOptions = ctx ? { ...so, threads: 1, wasmWalk: false } : so;
  for (const [method, w] of variants) {
    const ls = new CfrSolver(large.tree, large.game, { ...cpuSo });
    let r: RunResult;
    if (method === "cold") r = fresh("cold", "cold");
    else {
      const ss = new CfrSolver(small.tree, small.game, { ...cpuSo });
      let smallMs: number;
      if (ctx) smallMs = await solveSmallGpu(ctx, ss, so, a.smallIterations);
      else {
        const t0 = performance.now();
        ss.run(a.smallIterations);
        smallMs = performance.now() - t0;
      }
      const smallPct = ss.exploitability().percent; // not timed, as the checks of the runs
      const t2 = performance.now();
      const sides = [{ solver: ss, game: small.game }, { solver: ls, game: large.game }] as const;
      let weight: number;
      let what: string;
      if (method === "values") {
        const rep = warmStartPostflopValues(sides[0], sides[1], {
          weight: w,
          smallPct,
          resets: a.resets,
          responses: a.responses,
          epsilon: a.epsilon,
          offLine: a.offLine,
          newActions: a.newActions,
        });
        weight = rep.weight;
        what = `values W=${weight}${w === "auto" ? " (auto)" : ""}`;
        log(
          `${name} ${storage} ${what}: mapped strategy ${
            rep.profilePct.toFixed(2)
          }% exploitable, average resets from t = ${rep.resetFrom}`,
        );
      } else {
        weight = w as number;
        warmStartPostflop(sides[0], sides[1], { weight, subtrees: a.subtrees });
        const from = warmSchedule(ls, weight, a.regretResets);
        what = `regrets W=${weight}${a.regretResets === "keep" ? "" : ` resets from ${from}`}`;
      }
      const setup = (smallMs + performance.now() - t2) / 1000;
      ss.close();
      r = fresh(what, method);
      r.weight = weight;
      r.setupSeconds = setup;
      log(
        `${r.label}: small tree ${a.smallIterations} its at ${smallPct.toFixed(3)}%, ${
          setup.toFixed(1)
        } s with the seeding`,
      );
    }
    r.startPct = ls.exploitability().percent;
    r.curve.set(ls.iteration, r.startPct);
    if (ctx) await solveLargeGpu(ctx, ls, so, r, a.maxIts, a.every, log);
    else solveLarge(ls, r, a.maxIts, a.every, log);
    ls.close();
    results.push(r);
  }
  return results;
}

/** The bench's backend: a GPU context for `--backend gpu` (an error without an adapter), else null. */
async function warmstartBackend(backend: string): Promise<GpuContext | null> {
  if (backend === "auto" || backend === "cpu") return null;
  if (backend !== "gpu") {
    throw new KibitzError(
      "bad_args",
      `warmstart bench: --backend ${backend}: unknown backend; valid: auto, cpu, gpu`,
    );
  }
  const ctx = await getGpu();
  if (!ctx) {
    throw new KibitzError(
      "no_gpu",
      "warmstart bench: --backend gpu: no WebGPU adapter found; use --backend cpu",
    );
  }
  return ctx;
}

/** `deno task bench warmstart`: T2 (and F1) cold vs warm-started by both methods, f32 and 8/8-bit. */
export const suite: BenchSuite = {
  description:
    "warm start: spot T2 (and F1) cold vs warm-started from a one-size tree by regret transfer and by strategy values (f32 and 8/8-bit)",
  usage: WARMSTART_USAGE,
  async run(opts): Promise<BenchReport> {
    const a = parseWarmstartArgs(opts.args);
    const ctx = await warmstartBackend(opts.backend);
    const report = newReport("warmstart", ctx ? describeAdapter(ctx.report) : null);
    report.notes.push(
      ctx
        ? `Backend: GPU (${
          describeAdapter(ctx.report)
        }): the small and the full solves on the device, the seeding and the exploitability of the seeded strategy on the CPU; iterations timed to the end of their GPU work.`
        : `Backend: CPU, ${a.threads} thread${
          a.threads > 1 ? "s" : ""
        } (\`--backend gpu\` runs the solves on the GPU).`,
    );
    const spots: [string, () => [Spot, Spot]][] = [];
    if (a.t2) {
      spots.push([
        "T2",
        () => [makeSpot(t2Config(...T2S_SIZES), "T2s"), makeSpot(t2Config(...T2_SIZES), "T2")],
      ]);
    }
    if (a.f1) {
      spots.push(["F1", () => [
        makeSpot(f1Config(["52%", "52%", "52%"], ""), "F1s"),
        makeSpot(f1Config(["52%", "55%", "70%"], "45%"), "F1"),
      ]]);
    }
    const storages: Record<string, SolverOptions> = {
      f32: { regretBits: 32, strategyBits: 32 },
      "8": { regretBits: 8, strategyBits: 8 },
    };
    const all: RunResult[] = [];
    const rows: (string | number | null)[][] = [];
    for (const [name, build] of spots) {
      const [built, large] = build();
      // "self": a second copy of the full tree, so the two solvers share no game or tree object.
      const small = a.from === "self" ? build()[1] : built;
      if (a.from === "self") {
        report.notes.push(
          `${name}: from=self, the warm runs seed ${name} from ${name} itself solved ${a.smallIterations} iterations (a perfect mapping; their seconds include that solve and compare with nothing).`,
        );
      }
      const coverage = warmStartCoverage(small, large);
      opts.log(
        `${name}s: ${small.tree.size} nodes, ${name}: ${large.tree.size} nodes; ${
          (100 * coverage).toFixed(1)
        }% of ${name}'s decision nodes paired, warmstart_method "auto" seeds by ${
          autoWarmStartMethod(coverage)
        }`,
      );
      report.notes.push(
        `${name}: ${
          (100 * coverage).toFixed(1)
        }% of the decision nodes have a counterpart in ${name}s; warmstart_method = "auto" (the default) seeds it by "${
          autoWarmStartMethod(coverage)
        }".`,
      );
      const pick = autoWarmStartMethod(coverage);
      for (const st of a.storages) {
        const label = st === "f32" ? "f32" : "8/8-bit";
        const so = { ...storages[st], threads: a.threads };
        const runs = await runSpot(name, small, large, label, so, a, opts.log, ctx);
        all.push(...runs);
        const cold = runs.find((r) => r.method === "cold") ?? null;
        for (const r of runs) {
          rows.push([
            name,
            label,
            r.method === pick ? `${r.method} (auto's pick)` : r.method,
            r.weight,
            r.setupSeconds,
            r.startPct,
            ...TARGETS.flatMap((_, i) => [
              r.its[i],
              ratio(cold?.its[i] ?? null, r.its[i]),
              r.seconds[i],
              ratio(cold?.seconds[i] ?? null, r.seconds[i]),
            ]),
            ...evGap(r, cold),
          ]);
        }
      }
    }
    report.tables.push({
      title:
        `Iterations (W + full tree's) and seconds (small solve and seeding included) to 0.5 / 0.3 / 0.1 % of the pot, checked every ${a.every}`,
      columns: [
        "spot",
        "storage",
        "run",
        "W",
        "small + seed s",
        "% after seeding",
        ...TARGETS.flatMap((t) => [`its to ${t}%`, `x its`, `s to ${t}%`, `x s`]),
        "max |EV - cold EV| chips",
        "EVs compared at %",
      ],
      rows,
    });
    const keys = [...new Set(all.flatMap((r) => [...r.curve.keys()]))].sort((x, y) => x - y);
    const curveRows = keys.map((k) => [k, ...all.map((r) => r.curve.get(k) ?? null)]);
    report.tables.push({
      title: "Exploitability (% of pot) by counted iterations (warm runs start at W)",
      columns: ["its", ...all.map((r) => r.label)],
      rows: curveRows,
    });
    const csv = [
      ["its", ...all.map((r) => JSON.stringify(r.label))].join(","),
      ...curveRows.map((row) => row.map((c) => (c === null ? "" : String(c))).join(",")),
    ].join("\n") + "\n";
    const dir = a.csv.includes("/") ? a.csv.slice(0, a.csv.lastIndexOf("/")) : ".";
    await Deno.mkdir(dir, { recursive: true });
    await writeFileAtomic(a.csv, csv);
    report.notes.push(
      `Curves as CSV: ${a.csv}.`,
      `Warm runs: the small tree solved ${a.smallIterations} iterations; "values" seeds regrets W * (v(a) - v) from the mapped strategy's counterfactual values and the average W * strategy (W ${
        a.weights.join(", ")
      }, resets ${a.resets}, responses ${a.responses}); "regrets" transfers the small tree's regrets scaled to W = ${
        a.regretWeights.join(", ")
      }.`,
      `x its / x s: cold divided by this run (above 1: faster than cold). Iterations are deterministic (seed 0); seconds move with the load of other processes. "(auto's pick)": the method warmstart_method = "auto" (the default) uses on that spot.`,
      `Iterations capped at ${a.maxIts}: '-' means the target was not reached.`,
    );
    return report;
  },
};
