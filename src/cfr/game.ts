/**
 * The game interface of the CFR engine. A game describes its PUBLIC tree (what both players see:
 * actions, public chance cards, terminals) and evaluates terminals over vectors of private hands.
 * The engine never knows what a card is: hands are indices 0..numHands[p]-1, card removal is the
 * game's business, expressed through `blocked` lists at chance outcomes and through the
 * compatibility built into `compatibleSums` and `terminalValues`.
 *
 * Conventions every implementation must follow:
 * - Hands are fixed for the whole tree (the initial ranges). A hand that becomes impossible after a
 *   public chance outcome is listed in that outcome's `blocked` list; the engine then zeroes its reach
 *   and ignores the values the game writes for it below that outcome.
 * - `terminalValues` returns UNNORMALIZED counterfactual values: out[h] = sum over opponent hands o
 *   compatible with h (and with the public cards) of oppReach[o] * payoff_player(h, o). The engine
 *   divides by the total compatible deal mass (from `compatibleSums` at the root) when it reports EVs.
 *   It should run in O(hands) for fold and showdown (inclusion-exclusion over cards, sorted strengths).
 * - Payoffs are the player's net chips won at the terminal (the game need not be zero-sum; the engine
 *   computes NashConv as BR_0 + BR_1 - EV_0 - EV_1).
 */

/** A public node as the game describes it while the engine builds the flat tree. */
export type CfrNode = CfrPlayerNode | CfrChanceNode | CfrTerminalNode;

/** A decision of `player` over `actions` (labels for display; children follow in the same order). */
export interface CfrPlayerNode {
  kind: "player";
  player: 0 | 1;
  actions: readonly string[];
}

/** A public chance event (a board card): one child per outcome, in order. */
export interface CfrChanceNode {
  kind: "chance";
  outcomes: readonly CfrChanceOutcome[];
}

/** One public chance outcome. */
export interface CfrChanceOutcome {
  /** Display label, e.g. "Qs". */
  label: string;
  /**
   * Probability of this outcome for any pair of hands it does not block (for a card dealt from the
   * rest of the deck: 1 / (cards left after the board and both players' hole cards)).
   */
  weight: number;
  /** Hands of player 0 and of player 1 that this outcome makes impossible (card removal). */
  blocked: readonly [ArrayLike<number>, ArrayLike<number>];
  /**
   * Outcomes equivalent to this one under a suit exchange (suit isomorphism): the engine does not
   * build their subtrees, it adds this outcome's values with hands relabelled. Valid only when the
   * ranges, the public cards and hence the reach arriving here are invariant under the exchange.
   */
  isomorphs?: readonly CfrIsomorph[];
}

/** An outcome solved through a representative one (see CfrChanceOutcome.isomorphs). */
export interface CfrIsomorph {
  /** Display label of the equivalent outcome (e.g. "Jh" for representative "Js"). */
  label: string;
  /** Its probability weight, as CfrChanceOutcome.weight. */
  weight: number;
  /**
   * Per player, hand h here plays the role of hand permutation[p][h] under the representative: the
   * value of h here is the representative's value of permutation[p][h]. Pass the same array object
   * for every outcome that uses the same exchange: the tree stores each distinct array once.
   */
  permutation: readonly [Uint32Array, Uint32Array];
}

/** A leaf; `terminal` is the game's own id, handed back to `terminalValues`. */
export interface CfrTerminalNode {
  kind: "terminal";
  terminal: number;
}

/** A two-player game the CFR engine can solve. `S` is the game's own public-state type. */
export interface CfrGame<S = unknown> {
  /** Short name for reports ("kuhn", "leduc", "holdem"). */
  readonly name: string;
  /** Number of private hands of player 0 and player 1. */
  readonly numHands: readonly [number, number];
  /** Chips in the pot at the root (exploitability is also reported as a percentage of it). */
  readonly startingPot: number;
  /** Initial weight (range frequency) of each hand of `player`; length numHands[player]. */
  initialWeights(player: 0 | 1): Float32Array;
  /** Optional display name of a hand (e.g. "Ks", "AhKd"). */
  handLabel?(player: 0 | 1, hand: number): string;
  /** The root public state. */
  root(): S;
  /** What kind of node `state` is. */
  describe(state: S): CfrNode;
  /** The state reached by action (or chance outcome) number `index` from `state`. */
  child(state: S, index: number): S;
  /**
   * out[h] = sum over opponent hands o compatible with hand h of `player` of oppReach[o], with the
   * public cards of the root (used once, to normalize EVs). O(hands).
   */
  compatibleSums(player: 0 | 1, oppReach: Float32Array, out: Float32Array): void;
  /**
   * Counterfactual values of terminal `terminal` for every hand of `player`, written to
   * out[outOffset + h]: sum over compatible opponent hands o of oppReach[o] * payoff(h, o). O(hands).
   * oppReach is already zero for hands blocked by the public cards on the path.
   */
  terminalValues(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void;
  /**
   * Optional: where worker threads find this game's class, for multi-threaded solves (the
   * `threads` solver option). Each worker imports `module`, takes its export `name`, and copies the
   * game's own fields (a structured clone) onto an object with that class's prototype; so every own
   * field must be cloneable data, and the methods must live on the prototype.
   */
  workerSource?(): { module: string; name: string };
  /**
   * Optional: moves the game's read-only tables (built by tree expansion) into SharedArrayBuffers,
   * so worker threads view them instead of cloning a copy each.
   */
  shareTables?(): void;
  /**
   * Optional: like terminalValues, but with the share of the pot that hand h wins against o (1 for a
   * win or the opponent's fold, 0.5 for a tie, 0 otherwise); the engine derives per-hand equity.
   */
  terminalEquity?(
    terminal: number,
    player: 0 | 1,
    oppReach: Float32Array,
    out: Float32Array,
    outOffset: number,
  ): void;
}
