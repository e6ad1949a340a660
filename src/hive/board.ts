// What move generation, notation and the rule checks read from a game. HiveGame implements it; the
// interface sits below game.ts so that those modules never import the game (no import cycle).

/** A Hive position: flat board arrays plus the few queries the rules need. */
export interface HiveBoard {
  /** Expansion mask (EXP_M | EXP_L | EXP_P). */
  readonly gameType: number;
  /** 1 for pieces that take part in this game type. */
  readonly enabled: Uint8Array;
  /** Stack height per cell. */
  readonly height: Uint8Array;
  /** Piece id at [cell * MAX_STACK + level], valid below height[cell]. */
  readonly stack: Int8Array;
  /** Cell of each piece, -1 in hand. */
  readonly pieceCell: Int16Array;
  /** Stack level of each piece, -1 in hand. */
  readonly pieceLevel: Int8Array;
  /** Plies played so far: even = White to move. */
  readonly turn: number;
  /** The piece moved by the last move (-1 after a pass or at the start). */
  readonly lastMoved: number;
  /** Current state (NOT_STARTED ... BLACK_WINS). */
  readonly state: number;
  /** The UHP turn number of the side to move (1 + plies / 2). */
  readonly playerTurn: number;
  /** True when the game has ended. */
  isOver(): boolean;
  /** True when piece `p` is on the board. */
  inPlay(p: number): boolean;
  /** True when piece `p` is on the board with nothing on top of it. */
  isOnTop(p: number): boolean;
  /** True when the packed move is legal here. */
  isValid(move: number): boolean;
}
