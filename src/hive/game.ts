// The Hive game state: flat board arrays, play/undo without copying, incremental Zobrist hash.
import { KibitzError } from "../errors.ts";
import { cellQ, cellR, DIR_DQ, DIR_DR, MAX_STACK, NEIGHBOR, NUM_CELLS } from "./grid.ts";
import type { HiveBoard } from "./board.ts";
import { MoveGenerator } from "./movegen.ts";
import { makeMove, movePiece, moveTo, PASS } from "./move.ts";
import type { HiveMove } from "./move.ts";
import {
  BLACK,
  gameTypeString,
  NUM_PIECES,
  parseGameType,
  PIECE_BUG,
  PIECE_COLOR,
  pieceEnabled,
  pieceName,
  PIECES_PER_COLOR,
  WHITE,
} from "./pieces.ts";
import {
  Z_LAST_HI,
  Z_LAST_LO,
  Z_PIECE_HI,
  Z_PIECE_LO,
  Z_TURN_HI,
  Z_TURN_LO,
  zobristIndex,
} from "./zobrist.ts";
import { formatMove, gameStringOf, parseGameString, parseMoveString } from "./notation.ts";
import { invalidMoveReason } from "./rules.ts";
import { BLACK_WINS, DRAW, IN_PROGRESS, NOT_STARTED, outcomeFor, WHITE_WINS } from "./state.ts";

const SHARED_GENERATOR = new MoveGenerator();

/** One piece on the board as `HiveGame.pieces()` reports it. */
export interface PieceOnBoard {
  /** Piece id 0..27 (white 0..13, black 14..27). */
  piece: number;
  /** UHP name, e.g. `wA2`. */
  name: string;
  /** 0 white, 1 black. */
  color: number;
  /** Bug type (QUEEN, SPIDER, ... PILLBUG). */
  bug: number;
  /** Cell index on the 32x32 torus. */
  cell: number;
  /** Axial coordinates (pointy-top: E is q+1, SE is r+1), consistent across the whole hive. */
  q: number;
  r: number;
  /** Stack level, 0 = on the ground. */
  level: number;
  /** Height of the stack the piece is in. */
  stackHeight: number;
  /** True when nothing is on top of it. */
  onTop: boolean;
}

/**
 * A Hive game of one game type. Create with `new HiveGame("Base+MLP")` or
 * `HiveGame.fromGameString(s)`; play moves as UHP strings (`playString`) or packed moves (`play`);
 * list legal moves (`validMoves`, or `generate` into a buffer for hot loops); `undo`; read the
 * board (`pieces`, `top`, `height`, `turn`, `colorToMove`, `state`); hash with `hashKey`.
 */
export class HiveGame implements HiveBoard {
  /** Expansion mask (EXP_M | EXP_L | EXP_P). */
  readonly gameType: number;
  /** 1 for pieces that take part in this game type. */
  readonly enabled: Uint8Array = new Uint8Array(NUM_PIECES);
  /** Stack height per cell. */
  readonly height: Uint8Array = new Uint8Array(NUM_CELLS);
  /** Piece id at [cell * MAX_STACK + level], valid below height[cell]. */
  readonly stack: Int8Array = new Int8Array(NUM_CELLS * MAX_STACK).fill(-1);
  /** Cell of each piece, -1 in hand. */
  readonly pieceCell: Int16Array = new Int16Array(NUM_PIECES).fill(-1);
  /** Stack level of each piece, -1 in hand. */
  readonly pieceLevel: Int8Array = new Int8Array(NUM_PIECES).fill(-1);
  /** Plies played so far (Mzinga's CurrentTurn): even = White to move. */
  turn = 0;
  /** The piece moved by the last move (-1 after a pass or at the start). */
  lastMoved = -1;
  /** Low/high 32 bits of the Zobrist hash. */
  hashLo = 0;
  hashHi = 0;
  /** Current state (NOT_STARTED ... BLACK_WINS). */
  state = NOT_STARTED;

  private histMove = new Int32Array(256);
  private histFrom = new Int16Array(256);
  private histLast = new Int8Array(256);
  private histStr: (string | null)[] = [];
  private histLen = 0;
  private scratch = new Int32Array(4096);
  /** The move generator whose scratch arrays this game uses (see the constructor). */
  readonly generator: MoveGenerator;

  /**
   * Creates an empty game of a GameTypeString (`Base+MLP`) or expansion mask (0..7). Games share
   * one MoveGenerator by default: a generate call runs to completion and leaves nothing behind that
   * the next call reads, so interleaved searches over many games are safe. Pass your own generator
   * to keep a game's scratch memory apart (e.g. one per search).
   */
  constructor(gameType: string | number = 0, generator: MoveGenerator = SHARED_GENERATOR) {
    this.generator = generator;
    this.gameType = typeof gameType === "string" ? parseGameType(gameType) : gameType & 7;
    for (let p = 0; p < NUM_PIECES; p++) this.enabled[p] = pieceEnabled(p, this.gameType) ? 1 : 0;
  }

  /** Builds a game from a UHP GameString by replaying its moves (the state and turn parts are derived). */
  static fromGameString(s: string): HiveGame {
    return parseGameString(s, (t) => new HiveGame(t));
  }

  /** A copy of this game, history included. */
  clone(): HiveGame {
    const g = new HiveGame(this.gameType, this.generator);
    for (let i = 0; i < this.histLen; i++) g.play(this.histMove[i], this.histStr[i]);
    return g;
  }

  /** The GameTypeString, e.g. `Base+MLP`. */
  get gameTypeString(): string {
    return gameTypeString(this.gameType);
  }

  /** 0 when White is to move, 1 for Black. */
  get colorToMove(): number {
    return this.turn & 1;
  }

  /** The UHP turn number of the side to move (1 + plies / 2). */
  get playerTurn(): number {
    return 1 + (this.turn >> 1);
  }

  /** True when the game has ended (a win or a draw). */
  isOver(): boolean {
    return this.state >= DRAW;
  }

  /**
   * The outcome for the side to move: 1 it has won, -1 it has lost, 0 a draw, null while the game
   * goes on. Read from the position (the queens), so a move that surrounds the mover's own queen
   * counts as the mover's loss. Searches (alpha-beta, MCTS) score terminal nodes with this.
   */
  outcomeForSideToMove(): 1 | 0 | -1 | null {
    return outcomeFor(this.state, this.turn & 1);
  }

  /** The top piece at `cell`, or -1 when empty. */
  top(cell: number): number {
    const h = this.height[cell];
    return h === 0 ? -1 : this.stack[cell * MAX_STACK + h - 1];
  }

  /** True when piece `p` is on the board. */
  inPlay(p: number): boolean {
    return this.pieceCell[p] >= 0;
  }

  /** True when piece `p` is on the board with nothing on top of it. */
  isOnTop(p: number): boolean {
    const c = this.pieceCell[p];
    return c >= 0 && this.height[c] === this.pieceLevel[p] + 1;
  }

  /** The number of moves played. */
  get historyLength(): number {
    return this.histLen;
  }

  /** The packed moves played so far, oldest first. */
  history(): number[] {
    return Array.from(this.histMove.subarray(0, this.histLen));
  }

  /** The 64-bit Zobrist hash as a bigint (pieces, side to move, last piece moved). */
  hash(): bigint {
    return (BigInt(this.hashHi >>> 0) << 32n) | BigInt(this.hashLo >>> 0);
  }

  /** A 53-bit slice of the hash as a plain number, for Map keys and transposition tables. */
  hashKey(): number {
    return (this.hashHi >>> 11) * 4294967296 + (this.hashLo >>> 0);
  }

  /** Writes the legal moves into `out` from `start`; returns the count (hot-loop API). */
  generate(out: Int32Array, start = 0): number {
    return this.generator.generate(this, out, start);
  }

  /** The legal moves as packed numbers (a lone PASS when nothing else is legal; none when over). */
  validMoves(): number[] {
    const n = this.generator.generate(this, this.scratch, 0);
    return Array.from(this.scratch.subarray(0, n));
  }

  /** True when the packed move is legal here. */
  isValid(move: number): boolean {
    const n = this.generator.generate(this, this.scratch, 0);
    for (let i = 0; i < n; i++) if (this.scratch[i] === move) return true;
    return false;
  }

  /** Plays a packed move without checking it (use validMoves/isValid first); `str` is kept for the GameString. */
  play(move: number, str: string | null = null): void {
    const last = this.lastMoved;
    let from = -1;
    if (move === PASS) {
      this.setLast(-1);
    } else {
      const p = movePiece(move);
      from = this.pieceCell[p];
      if (from >= 0) this.lift(p);
      this.drop(p, moveTo(move));
      this.setLast(p);
    }
    this.push(move, from, last, str);
    this.turn++;
    this.hashLo ^= Z_TURN_LO;
    this.hashHi ^= Z_TURN_HI;
    this.updateState();
  }

  /** Undoes the last move; false when there is none. Restores board, turn, state and hash exactly. */
  undo(): boolean {
    if (this.histLen === 0) return false;
    const i = --this.histLen;
    this.histStr.length = i;
    const move = this.histMove[i];
    if (move !== PASS) {
      const p = movePiece(move);
      this.lift(p);
      const from = this.histFrom[i];
      if (from >= 0) this.drop(p, from);
    }
    this.setLast(this.histLast[i]);
    this.turn--;
    this.hashLo ^= Z_TURN_LO;
    this.hashHi ^= Z_TURN_HI;
    this.updateState();
    return true;
  }

  /** Parses a UHP MoveString against this position into a packed move (throws KibitzError on bad syntax). */
  parseMove(s: string): number {
    return parseMoveString(this, s).move;
  }

  /**
   * Plays a UHP MoveString (`wA1 -bQ`, `pass`). Throws KibitzError `invalid_move` with the
   * reference engine's reason when it is not legal, `bad_move` when it does not parse.
   */
  playString(s: string): number {
    const parsed = parseMoveString(this, s);
    const reason = invalidMoveReason(this, parsed.move, parsed.toLevel);
    if (reason !== null) throw new KibitzError("invalid_move", reason);
    this.play(parsed.move, parsed.normalized);
    return parsed.move;
  }

  /** Formats a packed move as a UHP MoveString, choosing the reference piece the way Mzinga does. */
  moveString(move: number): string {
    return formatMove(this, move);
  }

  /** The UHP GameString of this game (`Base+MLP;InProgress;White[3];wS1;bG1 -wS1;...`). */
  gameString(): string {
    return gameStringOf(
      this,
      this.histMove.subarray(0, this.histLen),
      this.histStr,
      () => new HiveGame(this.gameType),
    );
  }

  /** A packed move as an object with its source and landing level (in this position). */
  describeMove(move: number): HiveMove {
    if (move === PASS) return { piece: -1, from: -1, to: -1, toLevel: -1 };
    const p = movePiece(move), to = moveTo(move);
    const from = this.pieceCell[p];
    return { piece: p, from, to, toLevel: this.height[to] - (from === to ? 1 : 0) };
  }

  /** Packs a move of piece `p` to `cell` (see makeMove). */
  move(p: number, cell: number): number {
    return makeMove(p, cell);
  }

  /**
   * All pieces on the board with their cells, coordinates and stack facts. Coordinates are unwrapped
   * by walking the hive from its lowest-numbered piece, so neighbours always differ by one
   * direction step even when the hive straddles the torus seam (a drifted hive may be offset by 32).
   */
  pieces(): PieceOnBoard[] {
    const out: PieceOnBoard[] = [];
    const q = new Map<number, number>(), r = new Map<number, number>();
    const todo: number[] = [];
    for (let p = 0; p < NUM_PIECES && todo.length === 0; p++) {
      const c = this.pieceCell[p];
      if (c < 0) continue;
      q.set(c, cellQ(c));
      r.set(c, cellR(c));
      todo.push(c);
    }
    while (todo.length) {
      const c = todo.pop()!;
      for (let d = 0; d < 6; d++) {
        const n = NEIGHBOR[c * 6 + d];
        if (this.height[n] === 0 || q.has(n)) continue;
        q.set(n, q.get(c)! + DIR_DQ[d]);
        r.set(n, r.get(c)! + DIR_DR[d]);
        todo.push(n);
      }
    }
    for (let p = 0; p < NUM_PIECES; p++) {
      const c = this.pieceCell[p];
      if (c < 0) continue;
      out.push({
        piece: p,
        name: pieceName(p),
        color: PIECE_COLOR[p],
        bug: PIECE_BUG[p],
        cell: c,
        q: q.get(c)!,
        r: r.get(c)!,
        level: this.pieceLevel[p],
        stackHeight: this.height[c],
        onTop: this.height[c] === this.pieceLevel[p] + 1,
      });
    }
    return out;
  }

  /** Pieces of `color` still in hand (enabled ones only). */
  inHand(color: number): number[] {
    const out: number[] = [];
    const base = color === WHITE ? 0 : PIECES_PER_COLOR;
    for (let p = base; p < base + PIECES_PER_COLOR; p++) {
      if (this.enabled[p] && this.pieceCell[p] < 0) out.push(p);
    }
    return out;
  }

  /** Occupied neighbours of the queen of `color` (0 when it is not in play). */
  queenNeighbors(color: number): number {
    const c = this.pieceCell[color === BLACK ? PIECES_PER_COLOR : 0];
    if (c < 0) return 0;
    let n = 0;
    for (let d = 0; d < 6; d++) if (this.height[NEIGHBOR[c * 6 + d]] !== 0) n++;
    return n;
  }

  private lift(p: number): void {
    const c = this.pieceCell[p];
    const level = this.pieceLevel[p];
    const z = zobristIndex(p, c, level);
    this.hashLo ^= Z_PIECE_LO[z];
    this.hashHi ^= Z_PIECE_HI[z];
    this.stack[c * MAX_STACK + level] = -1;
    this.height[c] = level;
    this.pieceCell[p] = -1;
    this.pieceLevel[p] = -1;
  }

  private drop(p: number, c: number): void {
    const level = this.height[c];
    if (level >= MAX_STACK) throw new KibitzError("bad_move", `stack at cell ${c} is full`);
    const z = zobristIndex(p, c, level);
    this.hashLo ^= Z_PIECE_LO[z];
    this.hashHi ^= Z_PIECE_HI[z];
    this.stack[c * MAX_STACK + level] = p;
    this.height[c] = level + 1;
    this.pieceCell[p] = c;
    this.pieceLevel[p] = level;
  }

  private setLast(p: number): void {
    this.hashLo ^= Z_LAST_LO[this.lastMoved + 1] ^ Z_LAST_LO[p + 1];
    this.hashHi ^= Z_LAST_HI[this.lastMoved + 1] ^ Z_LAST_HI[p + 1];
    this.lastMoved = p;
  }

  private push(move: number, from: number, last: number, str: string | null): void {
    if (this.histLen === this.histMove.length) {
      const n = this.histLen * 2;
      const m = new Int32Array(n), f = new Int16Array(n), l = new Int8Array(n);
      m.set(this.histMove);
      f.set(this.histFrom);
      l.set(this.histLast);
      this.histMove = m;
      this.histFrom = f;
      this.histLast = l;
    }
    this.histMove[this.histLen] = move;
    this.histFrom[this.histLen] = from;
    this.histLast[this.histLen] = last;
    this.histStr[this.histLen] = str;
    this.histLen++;
  }

  private updateState(): void {
    const w = this.queenNeighbors(WHITE) === 6, b = this.queenNeighbors(BLACK) === 6;
    this.state = w && b
      ? DRAW
      : w
      ? BLACK_WINS
      : b
      ? WHITE_WINS
      : this.turn === 0
      ? NOT_STARTED
      : IN_PROGRESS;
  }
}
