// A prepared postflop spot and the shapes of a solve's options and outcome, apart from the solve
// itself so that the CPU and GPU drivers share them without importing each other.
import type { CfrExploitability } from "../cfr/evaluate.ts";
import type { CfrSolver } from "../cfr/solver.ts";
import { buildTree, type PublicTree } from "../cfr/tree.ts";
import type { GpuContext } from "../gpu/device.ts";
import { type ActionTree, buildActionTree } from "./action_tree.ts";
import type { SolveConfig } from "./config.ts";
import { releaseEvalTables, resumeEvalTables } from "./hand_eval.ts";
import { type PostflopGame, WorkerPostflopGame } from "./game.ts";
import { threadedWalkAvailable } from "./wasm/walk.ts";
import { hardwareGpuAbsent } from "../gpu/hardware_nodes.ts";
import {
  checkMemoryLimit,
  estimateMemory,
  type GameSize,
  gameSize,
  type MemoryEstimate,
  treeShape,
} from "./memory.ts";

/** Which backend a solve uses and why (printed by `deno task solve`). */
export interface BackendChoice {
  backend: "cpu" | "gpu";
  reason: string;
  /** The device, when the GPU was chosen. */
  ctx?: GpuContext;
  /** Device bytes the GPU solve needs (estimate), when the GPU was considered. */
  deviceBytes?: number;
}

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
  // Showdown tables once: with threads, they move to memory every worker shares (each worker's
  // Wasm copy is counted per thread).
  const memory = estimateMemory(
    size,
    config.solver,
    game.numHands,
    game.estimateShowdownBytes(),
    {
      ...treeShape(actionTree, Math.max(1, config.solver.threads)),
      kernelBytes: game.estimateKernelBytes(),
      walk: game.wasm && threadedWalkAvailable(),
      gpuProbe: config.solver.backend === "gpu" ||
        (config.solver.backend === "auto" && hardwareGpuAbsent() === null),
    },
  );
  checkMemoryLimit(memory, maxMemory);
  return { config, actionTree, game, size, memory, tree: null };
}

/** Expands the public tree (turn and river cards) of a prepared spot. */
export function expandSpot(spot: PreparedSpot, shared = false): PublicTree {
  if (!spot.tree) {
    resumeEvalTables(); // the 7-card table again, if a solve before this one released it
    spot.tree = buildTree(spot.game, 200_000_000, spot.size.publicNodes, shared);
    // What only the expansion needed: the evaluator's tables, the terminals' growable JS arrays.
    spot.game.compactTables(shared);
    releaseEvalTables();
  }
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
  /** Where the iterations ran (a GPU solve's stores are copied back into `solver` at the end). */
  backend: "cpu" | "gpu";
  iterations: number;
  exploitability: CfrExploitability;
  seconds: number;
  /**
   * Seconds of the exploitability checks made inside `seconds` (the iterations alone took the
   * rest, as the reference solver's `solve_s` counts them); 0 for a GPU solve, which does not
   * report it.
   */
  checkSeconds?: number;
  /** Why it stopped: target reached, max iterations, or interrupted. */
  stoppedBy: "target" | "max_iterations" | "interrupted";
  /** First checked iteration at or below each reported target, in %. */
  reached: Record<string, number>;
}

/** Options of runSolve. */
export interface RunOptions {
  /**
   * The grid of exploitability checks: every this many iterations (default 10), and the last. The
   * solve stops at the first check at or below the target.
   */
  every?: number;
  /**
   * Check at every grid point. Otherwise (the default) grid points where the target cannot be
   * reached yet are skipped, by the decay bound of check_schedule.ts (nextCheck).
   */
  checkEvery?: boolean;
  /** Called after each exploitability check. */
  onProgress?: (p: SolveProgress) => void;
  /** Polled between chunks: return true to stop (Ctrl-C). */
  shouldStop?: () => boolean;
  /** Extra thresholds (in %) whose first crossing is recorded in `reached`. */
  milestones?: number[];
  /** Called with the new solver before its first iteration (the warm start fills its regrets). */
  beforeSolve?: (solver: CfrSolver) => void;
  /** The backend to use (default: `chooseBackend` from solver.backend). */
  backend?: BackendChoice;
  /**
   * Continues a checkpointed solve: reads the checkpoint's state into the new solver (after
   * beforeSolve, before the first iteration and before a GPU solve uploads the stores).
   */
  restore?: (solver: CfrSolver) => Promise<void>;
  /** The time and milestones of the runs before a resumed one (added to this run's). */
  carry?: SolveCarry;
  /** Where and when to write checkpoints. */
  checkpoint?: CheckpointSink;
  /** Warnings of a solve that goes on (a GPU solve on a new device); default: stderr. */
  onWarning?: (line: string) => void;
}

/** Seconds spent and milestones reached by a solve so far (over every run of it). */
export interface SolveCarry {
  seconds: number;
  reached: Record<string, number>;
  /** The iteration the solve started at: its grid of checks counts from there. */
  gridFrom: number;
}

/** Receives a solve's checkpoints: asked after every exploitability check and once at the end. */
export interface CheckpointSink {
  /** Whether a checkpoint is due now (the periodic ones). */
  due(): boolean;
  /** Whether to write one at the end, when the solve stopped for this reason. */
  atEnd(stoppedBy: SolveOutcome["stoppedBy"]): boolean;
  /** Writes `solver`'s state (a GPU solve's stores are copied back first) with the run so far. */
  write(solver: CfrSolver, carry: SolveCarry): Promise<void>;
}
