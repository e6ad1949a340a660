import type { QuantFormat, Rounding } from "../quant/mod.ts";
import type { CfrAlgorithm, DiscountParams } from "./schedule.ts";

// The options of a CFR solve, apart from the solver so that the worker threads' setup
// (parallel.ts) can name them without importing the solver.

/** A node whose strategy is fixed: strategy[a * hands + h]; a hand whose column is NaN stays free. */
export interface LockedNode {
  node: number;
  strategy: Float32Array;
}

/** How a solve runs. Every field is optional. */
export interface SolverOptions {
  /** dcfr (default), dcfr+, cfr+ or pdcfr+. */
  algorithm?: CfrAlgorithm;
  /** "reference" (default: the Rust postflop solver's DCFR) or "paper" (alpha 1.5, beta 0, gamma 2, no reset). */
  schedule?: "reference" | "paper";
  /** Overrides of the algorithm's discount parameters. */
  discount?: Partial<DiscountParams>;
  /** Bits of regret storage: 32 (f32, default), 16, 8 or 4. */
  regretBits?: number;
  /** Bits of cumulative-strategy storage: 32 (default), 16, 8 or 4. */
  strategyBits?: number;
  /** Explicit regret format (overrides regretBits); unsigned formats need cfr+/dcfr+/pdcfr+. */
  regretFormat?: QuantFormat;
  /** Seed of the stochastic rounding (default 0): same seed, same result. */
  seed?: number;
  /** Rounding of regrets (and PDCFR+ predictions); default: nearest for 16-bit, stochastic for 8/4-bit. */
  rounding?: Rounding;
  /**
   * Rounding of the cumulative strategy; default stochastic for every quantized format. Nearest
   * rounding of a 16-bit strategy sum stalls (Leduc, 3000 iterations: dcfr 4.9e-4 vs 1.5e-4 chips,
   * cfr+ 6.1e-3 vs 3.1e-4 with 16-bit regrets and strategy): each iteration's addition is small next
   * to the sum, and rounding it to nearest biases it, where stochastic rounding keeps it unbiased.
   */
  strategyRounding?: Rounding;
  /**
   * Regret-based pruning threshold c (0 = off, the default; dcfr only). At the traverser's node, hand h
   * skips action a when R[a][h] < -c * (sum of h's positive regrets) and that sum is positive: such an
   * action has probability 0 now. Regrets of skipped (action, hand) entries, and of that hand in the
   * skipped subtree, stay as they are (as if not visited: no discount, no instant regret).
   */
  pruning?: number;
  /**
   * Regret matching of f32 regrets on the Wasm SIMD kernel (src/cfr/wasm, bit-identical to the
   * TypeScript loop); default true where WebAssembly SIMD is available and KIBITZ_WASM is not "0".
   */
  wasm?: boolean;
  /**
   * Run the whole training walk on the game's trainer where it offers one (the postflop game's
   * Wasm walk, cfr/trainer.ts: dcfr in any storage format, f32 or quantized with the same
   * rounding, no pruning, locks or reach-weighted average; bit-identical to the TypeScript walk). With threads > 1, its threaded form where the
   * game offers one (TaskTrainer: one shared Wasm memory, the tasks on small Wasm workers, the
   * evaluations split the same way; bit-identical too). Default true; needs `wasm`.
   */
  wasmWalk?: boolean;
  /** With pruning, every this many iterations (default 10) one runs unpruned so skipped actions are re-checked. */
  pruningRefresh?: number;
  /** Nodes with a fixed (per-hand) strategy. */
  lockedNodes?: readonly LockedNode[];
  /**
   * Weight the cumulative strategy by the player's own reach (classic CFR averaging). Default false:
   * like the reference solver, each iteration adds the current strategy unweighted.
   */
  reachWeightedAverage?: boolean;
  /**
   * Threads for training (default 1). Above 1, the subtrees below the first chance nodes (the turn
   * or river cards) are shared out to Web Workers over SharedArrayBuffer storage; each subtree's
   * blocks are written by exactly one thread and the parent sums the outcomes in a fixed order, so
   * the result is bit-identical whatever the thread count. Needs a game with `workerSource` (or a
   * threaded trainer, see `wasmWalk`) and a tree with chance nodes; otherwise the solve runs on
   * one thread. Call `close()` when done.
   */
  threads?: number;
}
