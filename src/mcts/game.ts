// The game interface the search and the AlphaZero loop are written against. A game adapter
// (tic-tac-toe, Connect Four, Hive) implements `Game` for one mutable position and `GameSpec` for
// the network's shapes; nothing in src/mcts knows any particular game.

/** Result of a finished game from the side to move's view: 1 win, -1 loss, 0 draw. */
export type Outcome = 1 | -1 | 0;

/**
 * One mutable position of a two-player, zero-sum, perfect-information game. `M` is the adapter's
 * move type (a number, an object: the search only stores and passes moves back).
 */
export interface Game<M> {
  /** Side to move: 0 for the first player, 1 for the second. */
  toMove(): 0 | 1;
  /** Moves made since the start position (the temperature schedule counts these). */
  ply(): number;
  /** Legal moves of the side to move; empty only at terminal positions. */
  legalMoves(): M[];
  /** Plays a legal move in place. */
  play(move: M): void;
  /** Takes back the last move played. */
  undo(): void;
  /** `null` while the game goes on; else the result from the side to move's view. */
  result(): Outcome | null;
  /** A hash of the position (53 bits at most, so it is exact as a number); the evaluation cache key. */
  hash(): number;
  /**
   * Writes the network input planes ([planes, height, width], side to move's view) at `offset`:
   * into f32, or f16 for a network that takes halves (PolicyValueNet.halfPlanes).
   */
  encode(out: Float32Array | Float16Array, offset: number): void;
  /** Index of a legal move in the network's policy vector, in [0, spec.moves). */
  moveIndex(move: M): number;
  /** A move as text (logs, game records). */
  moveText(move: M): string;
  /**
   * Optional, for networks with the cells policy head (docs/cells_head.md; only Hive has one): the
   * (a, b, slot) head-plane cells and bias slot of each move, 3 ints per move aligned with `moves`,
   * in the same view (symmetry) as `encode` and `moveIndex`. Used only when the network has `cells`.
   */
  moveCells?(moves: M[]): Int32Array;
  /** An independent copy of the position (the history needed by `undo` included). */
  clone(): Game<M>;
}

/** What the network needs to know about a game, and how to make its start position. */
export interface GameSpec<M> {
  /** Short name used by tasks and state folders ("tictactoe", "connect4"). */
  readonly name: string;
  /** Network input planes. */
  readonly planes: number;
  readonly height: number;
  readonly width: number;
  /** Size of the policy vector (every move index is below it). */
  readonly moves: number;
  /** A new game at the start position. */
  create(): Game<M>;
}

/** Floats of one encoded position. */
export function inputSize(spec: GameSpec<unknown>): number {
  return spec.planes * spec.height * spec.width;
}
