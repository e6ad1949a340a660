import {
  type CfrExploitability,
  type CfrPolicy,
  policyExploitability,
  TreeEvaluator,
} from "../cfr/evaluate.ts";
import { CfrSolver } from "../cfr/solver.ts";
import { buildTree, type PublicTree } from "../cfr/tree.ts";
import { KibitzError } from "../cli/error.ts";
import { type ActionTree, buildActionTree } from "./action_tree.ts";
import type { SolveConfig } from "./config.ts";
import { type PostflopGame, WorkerPostflopGame } from "./game.ts";
import {
  checkMemoryLimit,
  estimateMemory,
  type GameSize,
  gameSize,
  type MemoryEstimate,
  treeShape,
} from "./memory.ts";

/** A postflop spot ready to solve: betting tree, game, public tree and the memory estimate. */
export interface PreparedSpot {
  config: SolveConfig;
  actionTree: ActionTree;
  game: PostflopGame;
  size: GameSize;
  memory: MemoryEstimate;
  /** Built by `expand` (null until then). */
  tree: PublicTree | null;
}

/** Builds the betting tree and game and estimates memory; refuses above `maxMemory` bytes. */
export function prepareSpot(config: SolveConfig, maxMemory = Infinity): PreparedSpot {
  const actionTree = buildActionTree(config.tree);
  const game = new WorkerPostflopGame(actionTree, config.board, config.rangeWeights, {
    isomorphism: config.solver.suitIsomorphism,
  });
  const size = gameSize(
    actionTree,
    config.board.length,
    game.numHands,
    game.streetMultipliers(),
  );
  // Showdown tables once: with threads, they move to memory every worker shares.
  const memory = estimateMemory(
    size,
    config.solver,
    game.numHands,
    game.estimateShowdownBytes(),
    treeShape(actionTree, Math.max(1, config.solver.threads)),
  );
  checkMemoryLimit(memory, maxMemory);
  return { config, actionTree, game, size, memory, tree: null };
}

/** Expands the public tree (turn and river cards) of a prepared spot. */
export function expandSpot(spot: PreparedSpot): PublicTree {
  if (!spot.tree) spot.tree = buildTree(spot.game, 200_000_000);
  return spot.tree;
}

/** One progress report of a running solve. */
export interface SolveProgress {
  iteration: number;
  exploitabilityPct: number;
  exploitabilityChips: number;
  seconds: number;
  iterationsPerSecond: number;
  memoryBytes: number;
  /** Resident set size of the process. */
  rssBytes: number;
}

/** The outcome of a solve. */
export interface SolveOutcome {
  solver: CfrSolver;
  iterations: number;
  exploitability: CfrExploitability;
  seconds: number;
  /** Why it stopped: target reached, max iterations, or interrupted. */
  stoppedBy: "target" | "max_iterations" | "interrupted";
  /** First iteration (checked every `every`) at or below each reported target, in %. */
  reached: Record<string, number>;
}

/** Options of runSolve. */
export interface RunOptions {
  /** Exploitability is measured every this many iterations (default 10). */
  every?: number;
  onProgress?: (p: SolveProgress) => void;
  /** Polled between chunks: return true to stop (Ctrl-C). */
  shouldStop?: () => boolean;
  /** Extra thresholds (in %) whose first crossing is recorded in `reached`. */
  milestones?: number[];
  /** Called with the new solver before its first iteration (the warm start fills its regrets). */
  beforeSolve?: (solver: CfrSolver) => void;
}

/** Runs CFR on a prepared spot until the target exploitability or max iterations. */
export async function runSolve(spot: PreparedSpot, opts: RunOptions = {}): Promise<SolveOutcome> {
  const s = spot.config.solver;
  if (s.backend === "gpu") {
    throw new KibitzError(
      "no_gpu_backend",
      `solver.backend = "gpu": the postflop game runs on the CPU backend of the CFR engine only for now; use "cpu" or "auto"`,
    );
  }
  const tree = expandSpot(spot);
  const solver = new CfrSolver(tree, spot.game, {
    algorithm: s.algorithm,
    regretBits: s.regretBits,
    strategyBits: s.strategyBits,
    regretFormat: s.regretFormat ?? undefined,
    seed: s.seed,
    pruning: s.enablePruning ? 1 : 0,
    threads: s.threads,
  });
  opts.beforeSolve?.(solver);
  const firstIteration = solver.iteration;
  const every = opts.every ?? 10;
  const start = performance.now();
  const reached: Record<string, number> = {};
  const milestones = [...(opts.milestones ?? []), s.targetExploitabilityPct];
  let ex = solver.exploitability();
  let stoppedBy: SolveOutcome["stoppedBy"] = "max_iterations";
  try {
    while (solver.iteration < s.maxIterations) {
      const n = Math.min(every, s.maxIterations - solver.iteration);
      solver.run(n);
      ex = solver.exploitability();
      const seconds = (performance.now() - start) / 1000;
      for (const m of milestones) {
        if (ex.percent <= m && reached[String(m)] === undefined) {
          reached[String(m)] = solver.iteration;
        }
      }
      opts.onProgress?.({
        iteration: solver.iteration,
        exploitabilityPct: ex.percent,
        exploitabilityChips: ex.chips,
        seconds,
        iterationsPerSecond: (solver.iteration - firstIteration) / seconds,
        memoryBytes: solver.storageBytes(),
        rssBytes: Deno.memoryUsage().rss,
      });
      if (ex.percent <= s.targetExploitabilityPct) {
        stoppedBy = "target";
        break;
      }
      // Yield so a Ctrl-C handler can run between chunks.
      await new Promise((r) => setTimeout(r, 0));
      if (opts.shouldStop?.()) {
        stoppedBy = "interrupted";
        break;
      }
    }
  } finally {
    // Stop the worker threads; later reads of the strategy run on this thread.
    solver.close();
  }
  return {
    solver,
    iterations: solver.iteration,
    exploitability: ex,
    seconds: (performance.now() - start) / 1000,
    stoppedBy,
    reached,
  };
}

/** A fixed strategy profile read from saved per-block strategies (for --load). */
export function savedPolicy(tree: PublicTree, strategies: Float32Array): CfrPolicy {
  const offsets = new Float64Array(tree.blockNode.length + 1);
  for (let b = 0; b < tree.blockNode.length; b++) offsets[b + 1] = offsets[b] + tree.blockSize[b];
  if (offsets[tree.blockNode.length] !== strategies.length) {
    throw new KibitzError(
      "bad_save",
      `the saved strategy has ${strategies.length} values but the tree needs ${
        offsets[tree.blockNode.length]
      }`,
    );
  }
  return (node, out) => {
    const b = tree.block[node];
    out.set(strategies.subarray(offsets[b], offsets[b + 1]));
  };
}

/** Exploitability of a fixed profile on a spot. */
export function profileExploitability(spot: PreparedSpot, policy: CfrPolicy): CfrExploitability {
  return policyExploitability(new TreeEvaluator(expandSpot(spot), spot.game), policy);
}
