import type { QuantFormat, QuantStore } from "../quant/mod.ts";
import type { NodeValues } from "./evaluate.ts";
import type { CfrGame } from "./game.ts";
import type { ChanceTasks, WorkerEntry } from "./tasks.ts";
import type { PublicTree } from "./tree.ts";

/**
 * A game's own runner of CfrSolver's whole training walk (the Wasm walk of the postflop game):
 * DCFR on f32 or quantized regrets and strategy (TrainerStorage), one thread, no pruning, locks or
 * reach-weighted average, with results bit-identical to the solver's TypeScript walk. It owns the
 * stores it updates.
 */
export interface CfrTrainer {
  /** The regret and cumulative-strategy stores (views of the trainer's memory). */
  readonly regrets: QuantStore;
  readonly strategy: QuantStore;
  /** Bytes of memory the trainer holds, its stores included. */
  readonly bytes: number;
  /**
   * One traversal for p from the root with the game's initial weights and the iteration's
   * discounts: regrets and strategy of p's nodes updated. Returns the node-hand visits.
   */
  traverse(p: 0 | 1, alphaPos: number, betaNeg: number, gamma: number): number;
  /**
   * Sets the iteration the next traversals key their stochastic rounding with (CfrSolver's
   * rounding keys); optional: a trainer of f32 stores does not round.
   */
  setIteration?(t: number): void;
  /**
   * Root values of p's hands for p's best response to the average strategy (`best`) and under the
   * average strategy (`profile`): TreeEvaluator.rootValues in both modes with CfrSolver's average
   * policy, bit-identical.
   */
  rootValues(p: 0 | 1, best: Float32Array, profile: Float32Array): void;
  /**
   * CfrSolver's average strategy of block `b` (A actions x H hands) into out[0, A * H), bit-identical.
   * Optional: without it the solver normalizes the strategy store in TypeScript.
   */
  average?(b: number, A: number, H: number, out: Float32Array): void;
  /**
   * rootValues started at node `n` (of depth `d` in the tree) with the opponent's reach `opp`
   * there: TreeEvaluator's walk from that node in both modes, bit-identical. Optional: without it,
   * evaluations below the root walk in TypeScript.
   */
  nodeValues?: NodeValues;
}

/**
 * A CfrTrainer whose walks run on several threads over one shared memory: `traverse` and
 * `rootValues` walk the nodes above the chance-subtree tasks (cfr/tasks.ts) on the calling thread
 * and hand each round of tasks to `run` (the solver's worker pool, which takes tasks on every
 * thread through runTask and runEvalTask, and on the other threads through `workerEntry`).
 */
export interface TaskTrainer extends CfrTrainer {
  /** The tasks, their rows in the shared memory (null: a one-thread trainer). */
  readonly tasks: ChanceTasks | null;
  /** Sets the runner of a round of tasks (training or evaluation mode) on every thread. */
  setRunner(run: (p: 0 | 1, mode: number) => number): void;
  /** Runs training task k for traverser p on the calling thread; returns the node-hand visits. */
  runTask(k: number, p: 0 | 1): number;
  /** Runs evaluation task k for p (both modes at once) on the calling thread. */
  runEvalTask(k: number, p: 0 | 1): void;
  /** The worker module and data that run tasks on the other threads. */
  workerEntry(): WorkerEntry;
}

/**
 * The stores a trainer keeps, as CfrSolver keys them: formats, and for quantized ones the
 * stochastic-rounding seeds (the solver's rounding keys) and whether each rounds stochastically.
 */
export interface TrainerStorage {
  regretFormat: QuantFormat;
  strategyFormat: QuantFormat;
  regretSeed: number;
  strategySeed: number;
  regretStochastic: boolean;
  strategyStochastic: boolean;
}

/** f32 regrets and strategy: what a trainer keeps when not told otherwise. */
export const F32_STORAGE: TrainerStorage = {
  regretFormat: "f32",
  strategyFormat: "f32",
  regretSeed: 0,
  strategySeed: 0,
  regretStochastic: false,
  strategyStochastic: false,
};

/** A game that offers a CfrTrainer for its trees. */
export interface TrainerGame extends CfrGame {
  /** A trainer of `tree`, or null where it cannot run (no Wasm SIMD, game options, formats). */
  trainer(tree: PublicTree, storage?: TrainerStorage): CfrTrainer | null;
  /** A trainer of `tree` on `threads` threads (shared memory), or null where it cannot run. */
  taskTrainer?(tree: PublicTree, threads: number, storage?: TrainerStorage): TaskTrainer | null;
}

/** The trainer `game` offers for `tree`, or null (a game without one, or it declines). */
export function gameTrainer(
  game: CfrGame,
  tree: PublicTree,
  storage: TrainerStorage = F32_STORAGE,
): CfrTrainer | null {
  const g = game as Partial<TrainerGame>;
  return typeof g.trainer === "function" ? g.trainer.call(game, tree, storage) : null;
}

/** The threaded trainer `game` offers for `tree` on `threads` threads, or null. */
export function gameTaskTrainer(
  game: CfrGame,
  tree: PublicTree,
  threads: number,
  storage: TrainerStorage = F32_STORAGE,
): TaskTrainer | null {
  const g = game as Partial<TrainerGame>;
  return typeof g.taskTrainer === "function"
    ? g.taskTrainer.call(game, tree, threads, storage)
    : null;
}
