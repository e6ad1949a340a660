import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { leducGame } from "../games/leduc.ts";
import { CfrSolver, type SolverOptions } from "./solver.ts";
import { CFR_ALGORITHMS } from "./schedule.ts";
import { buildTree, type PublicTree } from "./tree.ts";
import type { CfrGame } from "./game.ts";

/** What one measured solve produced. */
export interface ConvergenceRun {
  /** Exploitability (chips) at each checkpoint. */
  atCheckpoint: number[];
  /** First iteration (checked every `every`) at or below each target (% of pot), or null. */
  itsToTarget: (number | null)[];
  /** Iterations per second of the solver alone (evaluation time excluded). */
  itsPerSecond: number;
  bytes: number;
  formats: string;
  nodeHandVisits: number;
}

/**
 * Solves `game` and records exploitability at `checkpoints` and the first iteration (checked every
 * `every` iterations) reaching each target in % of the starting pot.
 */
export function convergenceRun(
  tree: PublicTree,
  game: CfrGame,
  opts: SolverOptions,
  checkpoints: readonly number[],
  targetsPct: readonly number[],
  every = 10,
): ConvergenceRun {
  const s = new CfrSolver(tree, game, opts);
  const last = checkpoints[checkpoints.length - 1];
  const atCheckpoint: number[] = [];
  const itsToTarget: (number | null)[] = targetsPct.map(() => null);
  let solveMs = 0;
  while (s.iteration < last) {
    const t0 = performance.now();
    s.run(Math.min(every, last - s.iteration));
    solveMs += performance.now() - t0;
    const e = s.exploitability();
    targetsPct.forEach((pct, i) => {
      if (itsToTarget[i] === null && e.percent <= pct) itsToTarget[i] = s.iteration;
    });
    if (checkpoints.includes(s.iteration)) atCheckpoint.push(e.chips);
  }
  return {
    atCheckpoint,
    itsToTarget,
    itsPerSecond: last / (solveMs / 1000),
    bytes: s.storageBytes(),
    formats: `${s.regrets.format}/${s.strategy.format}`,
    nodeHandVisits: s.nodeHandVisits,
  };
}

const BITS = [32, 16, 8, 4];

/** `deno task bench cfr`: Leduc convergence per (algorithm, regret bits, strategy bits), speed, bytes, pruning. */
export const suite: BenchSuite = {
  description:
    "CFR engine on Leduc: convergence table per storage format, iterations/s, bytes, pruning",
  run(opts): Promise<BenchReport> {
    const report = newReport("cfr", null);
    const game = leducGame();
    const tree = buildTree(game);
    const checkpoints = opts.full ? [100, 300, 1000, 3000] : [100, 300, 1000];
    const targets = [1, 0.5, 0.1];
    const seeds = opts.full ? [0, 1, 2] : [0];
    const rows: (string | number | null)[][] = [];
    const its = new Map<string, (number | null)[]>();
    for (const algorithm of CFR_ALGORITHMS) {
      for (const regretBits of BITS) {
        for (const strategyBits of BITS) {
          const runs = seeds.map((seed) =>
            convergenceRun(
              tree,
              game,
              { algorithm, regretBits, strategyBits, seed },
              checkpoints,
              targets,
            )
          );
          const mean = (f: (r: ConvergenceRun) => number) =>
            runs.reduce((a, r) => a + f(r), 0) / runs.length;
          const reach = targets.map((_, i) => {
            const v = runs.map((r) => r.itsToTarget[i]);
            return v.some((x) => x === null)
              ? null
              : v.reduce((a: number, x) => a + (x ?? 0), 0) / v.length;
          });
          its.set(`${algorithm}/${regretBits}/${strategyBits}`, reach);
          rows.push([
            algorithm,
            regretBits,
            strategyBits,
            runs[0].formats,
            runs[0].bytes,
            Math.round(mean((r) => r.itsPerSecond)),
            ...checkpoints.map((_, i) => mean((r) => r.atCheckpoint[i])),
            ...reach,
          ]);
          opts.log(
            `${algorithm} ${regretBits}/${strategyBits}: ${
              rows[rows.length - 1].slice(6).join(" ")
            }`,
          );
        }
      }
    }
    report.tables.push({
      title: `Leduc convergence: exploitability (chips; pot 2) after N iterations${
        seeds.length > 1 ? `, mean of seeds ${seeds.join(", ")}` : ", seed 0"
      }`,
      columns: [
        "algorithm",
        "regret bits",
        "strategy bits",
        "formats",
        "bytes",
        "it/s",
        ...checkpoints.map((n) => `expl @${n}`),
        ...targets.map((p) => `its to ${p}%`),
      ],
      rows,
    });

    const pruneRows: (string | number | null)[][] = [];
    const last = checkpoints[checkpoints.length - 1];
    let baseVisits = 0;
    for (const c of [0, 0.5, 1, 2, 5]) {
      const r = convergenceRun(tree, game, { pruning: c }, [last], targets);
      if (c === 0) baseVisits = r.nodeHandVisits;
      pruneRows.push([
        c,
        r.nodeHandVisits,
        r.nodeHandVisits / baseVisits,
        r.atCheckpoint[0],
        Math.round(r.itsPerSecond),
        ...r.itsToTarget,
      ]);
      opts.log(`pruning ${c}: ${r.nodeHandVisits} visits, ${r.atCheckpoint[0]}`);
    }
    report.tables.push({
      title: `Regret-based pruning (dcfr, f32, ${last} iterations, unpruned refresh every 10)`,
      columns: [
        "threshold c",
        "node-hand visits",
        "vs unpruned",
        `expl @${last}`,
        "it/s",
        ...targets.map((p) => `its to ${p}%`),
      ],
      rows: pruneRows,
    });
    // Stated tolerance: pruning may change the exploitability reached by at most 0.01 % of the pot.
    const tol = 1e-4 * game.startingPot, base = pruneRows[0][3] as number;
    for (const row of pruneRows.slice(1)) {
      const e = row[3] as number, cut = 100 * (1 - (row[2] as number));
      report.notes.push(
        `pruning c = ${row[0]}: ${cut.toFixed(1)} % fewer node-hand visits; exploitability ` +
          `${e.toExponential(2)} vs ${base.toExponential(2)} unpruned, ` +
          `${
            Math.abs(e - base) <= tol ? "within" : "OUTSIDE"
          } the stated tolerance of ${tol} chips (0.01 % of the pot).`,
      );
    }

    const fmt = (
      x: number | null | undefined,
    ) => (x === null || x === undefined ? "never" : String(x));
    for (const algorithm of CFR_ALGORITHMS) {
      const s = (r: number, st: number) => its.get(`${algorithm}/${r}/${st}`)![1];
      report.notes.push(
        `${algorithm}, iterations to 0.5 % of the pot with f32 regrets: strategy 32/16/8/4 bits = ` +
          `${fmt(s(32, 32))}/${fmt(s(32, 16))}/${fmt(s(32, 8))}/${fmt(s(32, 4))}; ` +
          `with 16-bit regrets: ${fmt(s(16, 32))}/${fmt(s(16, 16))}/${fmt(s(16, 8))}/${
            fmt(s(16, 4))
          }.`,
      );
    }
    report.notes.push(
      "Exploitability is (BR gain of player 1 + BR gain of player 2) / 2 of the average strategy, checked every 10 iterations; " +
        "'its to X%' is the first check at or below X % of the starting pot (2 chips); 'never' = not within the run.",
      "it/s times the solver alone on one CPU core (CPU backend; --backend is ignored). bytes = regret + strategy (+ PDCFR+ prediction) storage.",
      "Rounding (seeded): regrets round to nearest in 16 bits and stochastically in 8/4 bits; cumulative strategies round stochastically in every quantized format (the solver default).",
    );
    return Promise.resolve(report);
  },
};
