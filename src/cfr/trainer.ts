import type { QuantStore } from "../quant/mod.ts";
import type { CfrGame } from "./game.ts";
import type { PublicTree } from "./tree.ts";

/**
 * A game's own runner of CfrSolver's whole training walk (the Wasm walk of the postflop game):
 * DCFR on f32 regrets and strategy, one thread, no pruning, locks or reach-weighted average, with
 * results bit-identical to the solver's TypeScript walk. It owns the stores it updates.
 */
export interface CfrTrainer {
  /** The f32 regret and cumulative-strategy stores (views of the trainer's memory). */
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
  nodeValues?(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    best: Float32Array,
    profile: Float32Array,
  ): void;
}

/** A game that offers a CfrTrainer for its trees. */
export interface TrainerGame extends CfrGame {
  /** A trainer of `tree`, or null where it cannot run (no Wasm SIMD, game options). */
  trainer(tree: PublicTree): CfrTrainer | null;
}

/** The trainer `game` offers for `tree`, or null (a game without one, or it declines). */
export function gameTrainer(game: CfrGame, tree: PublicTree): CfrTrainer | null {
  const g = game as Partial<TrainerGame>;
  return typeof g.trainer === "function" ? g.trainer.call(game, tree) : null;
}
