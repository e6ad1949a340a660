import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { CfrSolver, type SolverOptions } from "../cfr/solver.ts";
import { buildTree, type PublicTree } from "../cfr/tree.ts";
import { KibitzError } from "../errors.ts";
import { buildActionTree } from "./action_tree.ts";
import { parseSolveConfig } from "./config.ts";
import { PostflopGame } from "./game.ts";
import {
  type WarmStartInterpolation,
  warmStartPostflop,
  type WarmStartSubtrees,
} from "./warmstart.ts";

// `deno task bench warmstart`: spot T2 of ../shared/data/poker/REFERENCE.md solved cold and
// warm-started from T2s (same spot, sizes "66%, a" / "2.5x"), for f32 and for 8-bit regrets with an
// 8-bit strategy. Exploitability is measured every 10 iterations (its time is not counted); seconds
// are solver time, and a warm run's seconds include the small solve and the transfer.

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

interface Spot {
  game: PostflopGame;
  tree: PublicTree;
}

function makeSpot(bet: string, raise: string): Spot {
  const config = parseSolveConfig(t2Config(bet, raise), "T2");
  const game = new PostflopGame(buildActionTree(config.tree), config.board, config.rangeWeights);
  return { game, tree: buildTree(game) };
}

/** One warm-start variant. */
interface Variant {
  weight: number;
  smallIterations: number;
  interpolation: WarmStartInterpolation;
  subtrees: WarmStartSubtrees;
}

/** What one run measured. */
interface RunResult {
  smallSeconds: number;
  /** Large-tree iterations run (after the warm start's t = W) at the first check <= each target. */
  its: (number | null)[];
  seconds: (number | null)[];
  curve: Map<number, number>;
  /** Seconds per iteration of each 10-iteration chunk. */
  chunks: number[];
}

const TARGETS = [0.5, 0.3];

function solveLarge(
  s: CfrSolver,
  startSeconds: number,
  maxIts: number,
  log: (l: string) => void,
  label: string,
): RunResult {
  const start = s.iteration;
  let solveMs = startSeconds * 1000;
  const its: (number | null)[] = TARGETS.map(() => null);
  const seconds: (number | null)[] = TARGETS.map(() => null);
  const curve = new Map<number, number>();
  const chunks: number[] = [];
  while (s.iteration - start < maxIts && its.some((x) => x === null)) {
    const t0 = performance.now();
    s.run(10);
    const ms = performance.now() - t0;
    solveMs += ms;
    chunks.push(ms / 10000);
    const pct = s.exploitability().percent;
    const done = s.iteration - start;
    curve.set(done, pct);
    TARGETS.forEach((t, i) => {
      if (its[i] === null && pct <= t) (its[i] = done), (seconds[i] = solveMs / 1000);
    });
    log(`${label}: ${done} its ${pct.toFixed(3)}% ${(solveMs / 1000).toFixed(1)} s`);
  }
  return { smallSeconds: startSeconds, its, seconds, curve, chunks };
}

function parseArgs(args: string[]): Partial<Variant> & { maxIts?: number } {
  const out: Partial<Variant> & { maxIts?: number } = {};
  for (const a of args) {
    const m = /^(weight|small|max|interpolation|subtrees)=(.+)$/.exec(a);
    if (!m) {
      throw new KibitzError(
        "bad_args",
        `warmstart bench: unknown argument "${a}"; use weight=W small=N max=N interpolation=linear|log subtrees=nearest|matched`,
      );
    }
    const v = m[2], n = Number(v);
    if (m[1] === "interpolation") {
      if (v !== "linear" && v !== "log") throw new KibitzError("bad_args", `interpolation=${v}`);
      out.interpolation = v;
    } else if (m[1] === "subtrees") {
      if (v !== "nearest" && v !== "matched") throw new KibitzError("bad_args", `subtrees=${v}`);
      out.subtrees = v;
    } else if (!(n > 0)) {
      throw new KibitzError("bad_args", `${m[1]} must be a positive number, got ${v}`);
    } else if (m[1] === "weight") out.weight = n;
    else if (m[1] === "small") out.smallIterations = Math.round(n);
    else out.maxIts = Math.round(n);
  }
  return out;
}

function tag(v: Variant): string {
  const extra = (v.subtrees === "matched" ? ", matched subtrees" : "") +
    (v.interpolation === "log" ? ", log" : "");
  return `warm W=${v.weight}${extra}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[(s.length - 1) >> 1];
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b > 0 ? a / b : null;
}

/** `deno task bench warmstart`: T2 cold vs warm-started from T2s, f32 and 8/8-bit, and the speedup. */
export const suite: BenchSuite = {
  description: "warm start: spot T2 cold vs warm-started from T2s (f32 and 8/8-bit), speedup",
  run(opts): Promise<BenchReport> {
    const report = newReport("warmstart", null);
    const a = parseArgs(opts.args);
    const base: Variant = {
      weight: a.weight ?? 10,
      smallIterations: a.smallIterations ?? 40,
      interpolation: a.interpolation ?? "linear",
      subtrees: a.subtrees ?? "nearest",
    };
    // The default W = 10, and W = 30 (the best of 10 / 30 / 64 in our f32 trials).
    const variants: Variant[] = [base, { ...base, weight: base.weight * 3 }];
    if (opts.full) {
      variants.push(
        { ...base, subtrees: "matched" },
        { ...base, interpolation: "log" },
      );
    }
    const maxIts = a.maxIts ?? 300;
    const small = makeSpot(...T2S_SIZES), large = makeSpot(...T2_SIZES);
    opts.log(
      `T2s: ${small.tree.size} nodes, T2: ${large.tree.size} nodes; hands ${large.game.numHands}`,
    );
    const storages: [string, SolverOptions][] = [
      ["f32", { regretBits: 32, strategyBits: 32 }],
      ["8-bit regrets / 8-bit strategy", { regretBits: 8, strategyBits: 8 }],
    ];
    const rows: (string | number | null)[][] = [];
    const work: (string | number | null)[][] = [];
    const curves: { label: string; curve: Map<number, number> }[] = [];
    for (const [storage, so] of storages) {
      const cold = solveLarge(
        new CfrSolver(large.tree, large.game, so),
        0,
        maxIts,
        opts.log,
        `${storage} cold`,
      );
      curves.push({ label: `${storage} cold`, curve: cold.curve });
      const warm: { v: Variant; small: number; transfer: number; r: RunResult }[] = [];
      for (const v of variants) {
        const t0 = performance.now();
        const ss = new CfrSolver(small.tree, small.game, so);
        ss.run(v.smallIterations);
        const t1 = performance.now();
        const smallExpl = ss.exploitability().percent;
        const t2 = performance.now();
        const ls = new CfrSolver(large.tree, large.game, so);
        warmStartPostflop({ solver: ss, game: small.game }, { solver: ls, game: large.game }, v);
        const t3 = performance.now();
        const setup = (t1 - t0 + t3 - t2) / 1000;
        opts.log(
          `${storage} ${tag(v)}: small tree ${v.smallIterations} its at ${smallExpl.toFixed(3)}%, ${
            setup.toFixed(1)
          } s with the transfer`,
        );
        const r = solveLarge(ls, setup, maxIts, opts.log, `${storage} ${tag(v)}`);
        curves.push({ label: `${storage} ${tag(v)}`, curve: r.curve });
        warm.push({ v, small: (t1 - t0) / 1000, transfer: (t3 - t2) / 1000, r });
      }
      // Work-normalized seconds: iterations times the median seconds per iteration of each tree over
      // this storage's runs, so that load from other processes on a shared machine cancels out.
      const largeIt = median([cold, ...warm.map((w) => w.r)].flatMap((r) => r.chunks));
      const smallIt = median(warm.map((w) => w.small / w.v.smallIterations));
      const normCold = cold.its.map((n) => (n === null ? null : n * largeIt));
      rows.push([
        storage,
        "cold",
        0,
        0,
        ...TARGETS.flatMap((_, i) => [cold.its[i], cold.seconds[i], 1]),
      ]);
      work.push([storage, "cold", largeIt, 0, ...TARGETS.flatMap((_, i) => [normCold[i], 1])]);
      for (const { v, transfer, r } of warm) {
        const name = `${tag(v)}, T2s ${v.smallIterations} its, ${v.interpolation}, ${v.subtrees}`;
        rows.push([
          storage,
          name,
          v.smallIterations,
          r.smallSeconds,
          ...TARGETS.flatMap((_, i) => [
            r.its[i],
            r.seconds[i],
            ratio(cold.seconds[i], r.seconds[i]),
          ]),
        ]);
        const fixed = v.smallIterations * smallIt + transfer;
        const norm = r.its.map((n) => (n === null ? null : n * largeIt + fixed));
        work.push([
          storage,
          name,
          largeIt,
          smallIt,
          ...TARGETS.flatMap((_, i) => [norm[i], ratio(normCold[i], norm[i])]),
        ]);
      }
    }
    report.tables.push({
      title: `T2 to 0.5 % and 0.3 % of the pot: cold vs warm-started from T2s (checked every 10)`,
      columns: [
        "storage",
        "run",
        "T2s its",
        "T2s + transfer s",
        "T2 its to 0.5%",
        "s to 0.5%",
        "speedup 0.5%",
        "T2 its to 0.3%",
        "s to 0.3%",
        "speedup 0.3%",
      ],
      rows,
    });
    report.tables.push({
      title:
        "Work-normalized seconds (median seconds per iteration of each tree x iterations, plus the transfer)",
      columns: [
        "storage",
        "run",
        "T2 s/it",
        "T2s s/it",
        "s to 0.5%",
        "speedup 0.5%",
        "s to 0.3%",
        "speedup 0.3%",
      ],
      rows: work,
    });
    const checkpoints = [...new Set(curves.flatMap((c) => [...c.curve.keys()]))].sort((x, y) =>
      x - y
    );
    report.tables.push({
      title: "Exploitability (% of pot) by T2 iterations run (warm runs continue at t = W)",
      columns: ["T2 its", ...curves.map((c) => c.label)],
      rows: checkpoints.map((k) => [k, ...curves.map((c) => c.curve.get(k) ?? null)]),
    });
    report.notes.push(
      "Seconds are solver time (iterations and, for warm runs, the T2s solve and the transfer); the exploitability checks are not counted.",
      "Speedup = cold seconds / warm seconds to the same target. The reference schedule resets the average strategy at t = 16, 64, 256, so curves jump after those iterations (warm runs reach them W iterations earlier).",
      `Iterations capped at ${maxIts}: '-' means the target was not reached.`,
      "Iteration counts are deterministic (seed 0); measured seconds move with the load of other processes on the machine, so compare speedups in the work-normalized table.",
    );
    return Promise.resolve(report);
  },
};
