import { betSizeToString } from "./bet_size.ts";
import {
  expandSpot,
  type PreparedSpot,
  prepareSpot,
  type RunOptions,
  runSolve,
  type SolveOutcome,
} from "./solve.ts";
import {
  smallTreeConfig,
  validateWarmStartGames,
  warmStartCoverage,
  warmStartPostflop,
  type WarmStartSettings,
} from "./warmstart.ts";
import {
  AUTO_REGRETS_COVERAGE,
  autoWarmStartMethod,
  REGRETS_AUTO_WEIGHT,
} from "./warmstart_config.ts";
import { warmStartPostflopValues } from "./warmstart_values.ts";
import {
  type CheckpointPhase,
  type CheckpointSettings,
  checkpointSink,
  type OpenedCheckpoint,
  type WarmStartRecord,
} from "./checkpoint.ts";
import { KibitzError } from "../errors.ts";

// The three phases of a warm-started `deno task solve` (small tree, seeding, full tree), for both
// warm-start methods. Apart from the regret transfer and its settings so that the value-based method
// (warmstart_values.ts, which builds on warmstart.ts) can be chosen here without an import cycle.

/** What the seeding of the full tree did, whichever the method. */
export interface WarmStartTransfer {
  method: "values" | "regrets";
  /** True when warmstart_method = "auto" chose the method. */
  auto: boolean;
  /** Share of the full tree's decision nodes paired with a small-tree node ("auto" decides by it). */
  coverage: number;
  /** W: the full solve continues at t = W (rounded, at least 1). */
  weight: number;
  startIteration: number;
  /** Full-tree decision nodes seeded from the small tree. */
  nodes: number;
  /** Decision nodes without a counterpart (regrets: start at 0; values: play uniformly). */
  unmatched: number;
  /** Values: the mapped strategy's exploitability in the full tree (% of the pot; NaN if W was given). */
  profilePct: number;
  /** Values: the first power of 4 that may reset the average (Infinity: none). */
  resetFrom: number;
  warnings: string[];
}

/** The three phases of a warm-started solve. */
export interface WarmStartSolveOutcome {
  smallSpot: PreparedSpot;
  small: SolveOutcome;
  transfer: WarmStartTransfer;
  /** The full tree's solve; its iteration counter started at W. */
  outcome: SolveOutcome;
}

/**
 * Solves the small tree (phase 1), seeds the full tree by the settings' method (phase 2) and solves
 * it from t = W (phase 3); max_iterations counts the full tree's own iterations.
 */
export async function runWarmStartSolve(
  spot: PreparedSpot,
  ws: WarmStartSettings,
  opts: {
    small?: RunOptions;
    large?: RunOptions;
    /** Called once the small tree is built, before its solve. */
    onSmallSpot?: (smallSpot: PreparedSpot) => void;
    /** Called after the transfer, before the full tree's first iteration. */
    onTransfer?: (small: SolveOutcome, transfer: WarmStartTransfer) => void;
  } = {},
): Promise<WarmStartSolveOutcome> {
  expandSpot(spot);
  const smallSpot = prepareSpot(smallTreeConfig(spot.config, ws));
  validateWarmStartGames(smallSpot.game, spot.game);
  opts.onSmallSpot?.(smallSpot);
  const small = await runSolve(smallSpot, opts.small);
  let transfer: WarmStartTransfer | null = null;
  const own = spot.config.solver.maxIterations;
  const config = { ...spot.config, solver: { ...spot.config.solver } };
  const outcome = await runSolve({ ...spot, config }, {
    ...opts.large,
    beforeSolve: (solver) => {
      const pair = [{ solver: small.solver, game: smallSpot.game }, {
        solver,
        game: spot.game,
      }] as const;
      const coverage = warmStartCoverage(
        { tree: small.solver.tree, game: smallSpot.game },
        { tree: solver.tree, game: spot.game },
        { interpolation: ws.interpolation },
      );
      const auto = ws.method === "auto";
      const method = auto ? autoWarmStartMethod(coverage) : ws.method;
      if (method === "values") {
        const r = warmStartPostflopValues(pair[0], pair[1], {
          weight: ws.weight,
          interpolation: ws.interpolation,
          smallIterations: small.iterations,
          smallPct: small.exploitability.percent,
        });
        transfer = {
          method: "values",
          auto,
          coverage,
          weight: r.weight,
          startIteration: r.startIteration,
          nodes: r.paired,
          unmatched: r.playerNodes - r.paired,
          profilePct: r.profilePct,
          resetFrom: r.resetFrom,
          warnings: [],
        };
      } else {
        const weight = ws.weight === "auto" ? REGRETS_AUTO_WEIGHT : ws.weight;
        const r = warmStartPostflop(pair[0], pair[1], {
          weight,
          interpolation: ws.interpolation,
        });
        transfer = {
          method: "regrets",
          auto,
          coverage,
          weight,
          startIteration: r.startIteration,
          nodes: r.nodes,
          unmatched: r.unmatched,
          profilePct: NaN,
          resetFrom: solver.discount.resetFrom ?? 0,
          warnings: r.warnings,
        };
      }
      // runSolve reads this config object: the full tree runs its own max_iterations after t = W.
      config.solver.maxIterations = own + solver.iteration;
      opts.onTransfer?.(small, transfer);
    },
  });
  return { smallSpot, small, transfer: transfer!, outcome };
}

/** Checkpoints of `deno task solve`: where to write them, and the one to continue from. */
export interface SolveCheckpoints {
  settings?: CheckpointSettings;
  resume?: OpenedCheckpoint;
}

/** The run options that continue the phase a checkpoint holds. */
function resumeOptions(resume: OpenedCheckpoint): RunOptions {
  const h = resume.header;
  return {
    restore: resume.restore,
    carry: { seconds: h.seconds, reached: { ...h.reached }, gridFrom: h.gridFrom },
  };
}

/**
 * The solve function of `deno task solve`: plain runSolve, or, when `[solver] use_warmstart` is on,
 * the three warm-start phases with the same run options, printing each phase through `info`; with
 * checkpoints, each phase writes them, and a resume continues the phase its checkpoint holds.
 */
export function warmStartRunner(
  spot: PreparedSpot,
  info: (line: string) => void,
  ck: SolveCheckpoints = {},
): (opts: RunOptions) => Promise<SolveOutcome> {
  const ws = spot.config.solver.warmStart;
  const { settings, resume } = ck;
  const sink = (phase: CheckpointPhase, record?: () => WarmStartRecord) =>
    settings ? { checkpoint: checkpointSink(settings, phase, record) } : {};
  const phase = resume?.header.phase;
  if (phase !== undefined && (phase === "solve") !== !ws?.enabled) {
    throw new KibitzError(
      "bad_checkpoint",
      `${resume!.path}: written by a ${
        phase === "solve" ? "plain" : "warm-started"
      } solve, but its config ${ws?.enabled ? "warm starts" : "does not warm start"}`,
    );
  }
  if (!ws?.enabled) {
    return (opts) =>
      runSolve(spot, { ...opts, ...(resume ? resumeOptions(resume) : {}), ...sink("solve") });
  }
  if (phase === "full") {
    const w = resume!.header.warmStart!;
    return (opts) => {
      info(
        `phase 3 resumed: the full tree, warm-started ("${w.method}", W = ${w.weight}) from ${w.smallIterations} small-tree iterations at ${
          w.smallPct.toFixed(3)
        }% of the pot; max_iterations counts from iteration ${w.startIteration}`,
      );
      expandSpot(spot);
      const own = spot.config.solver.maxIterations;
      const config = {
        ...spot.config,
        solver: { ...spot.config.solver, maxIterations: own + w.startIteration },
      };
      return runSolve({ ...spot, config }, {
        ...opts,
        ...resumeOptions(resume!),
        ...sink("full", () => w),
      });
    };
  }
  return async (opts) => {
    const t0 = performance.now();
    let record: WarmStartRecord | null = null;
    const r = await runWarmStartSolve(spot, ws, {
      small: { ...opts, ...(resume ? resumeOptions(resume) : {}), ...sink("small") },
      large: { ...opts, ...sink("full", () => record!) },
      onSmallSpot: (s) =>
        info(
          `phase 1: small tree (bet sizes ${ws.sizes.bet.map(betSizeToString).join(", ")}; raises ${
            ws.sizes.raise.map(betSizeToString).join(", ")
          }): betting tree ${s.actionTree.size} nodes, expanded ${s.size.publicNodes} nodes; up to ${ws.minimalMaxIters} iterations or ${ws.minimalExploitabilityPct}% of the pot`,
        ),
      onTransfer: (small, t) => {
        record = {
          startIteration: t.startIteration,
          smallIterations: small.iterations,
          smallPct: small.exploitability.percent,
          method: t.method,
          weight: t.weight,
        };
        info(
          `phase 1 done: ${small.iterations} iterations, exploitability ${
            small.exploitability.percent.toFixed(3)
          }% of the pot, ${((performance.now() - t0) / 1000).toFixed(1)} s on the ${small.backend}`,
        );
        for (const w of t.warnings) info(`warning: ${w}`);
        if (t.auto) {
          info(
            `warm-start method auto: ${
              (100 * t.coverage).toFixed(1)
            }% of the full tree's decision nodes have a small-tree counterpart (regrets from ${
              (100 * AUTO_REGRETS_COVERAGE).toFixed(0)
            }%), so "${t.method}"`,
          );
        }
        if (t.method === "values") {
          const how = Number.isNaN(t.profilePct)
            ? "given"
            : `auto: the mapped strategy is ${t.profilePct.toFixed(2)}% of the pot exploitable`;
          info(
            `phase 2: full tree warm-started from the small tree's strategy (${t.nodes} decision nodes mapped, ${t.unmatched} play uniformly): regrets set from its counterfactual values, W = ${t.weight} (${how}); average resets from t = ${t.resetFrom}; continuing at iteration ${t.startIteration}`,
          );
        } else {
          info(
            `phase 2: full tree warm-started: regrets of ${t.nodes} decision nodes transferred (${t.unmatched} without a counterpart start at 0), W = ${t.weight}, ${ws.interpolation} interpolation; continuing at iteration ${t.startIteration}`,
          );
        }
      },
    });
    return r.outcome;
  };
}
