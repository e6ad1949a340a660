// Tic-tac-toe on the search's game interface: a solved game for the AlphaZero oracles.
import type { Game, GameSpec, Outcome } from "../../mcts/game.ts";

const LINES = [
  [0, 1, 2],
  [3, 4, 5],
  [6, 7, 8],
  [0, 3, 6],
  [1, 4, 7],
  [2, 5, 8],
  [0, 4, 8],
  [2, 4, 6],
];
const POW3 = [1, 3, 9, 27, 81, 243, 729, 2187, 6561];

/** A tic-tac-toe position; moves are cell numbers 0..8 (row-major). */
export class TicTacToe implements Game<number> {
  /** 0 empty, 1 first player (X), 2 second player (O). */
  readonly cells = new Uint8Array(9);
  private readonly history: number[] = [];
  private key = 0;

  /** Side to move. */
  toMove(): 0 | 1 {
    return (this.history.length & 1) as 0 | 1;
  }

  /** Moves made. */
  ply(): number {
    return this.history.length;
  }

  /** Empty cells, none once the game is over. */
  legalMoves(): number[] {
    if (this.result() !== null) return [];
    const out: number[] = [];
    for (let i = 0; i < 9; i++) if (this.cells[i] === 0) out.push(i);
    return out;
  }

  /** Marks `cell` for the side to move. */
  play(cell: number): void {
    const who = this.toMove() + 1;
    this.cells[cell] = who;
    this.key += who * POW3[cell];
    this.history.push(cell);
  }

  /** Clears the last marked cell. */
  undo(): void {
    const cell = this.history.pop()!;
    this.key -= this.cells[cell] * POW3[cell];
    this.cells[cell] = 0;
  }

  /** -1 when the player who just moved made a line, 0 on a full board, else null. */
  result(): Outcome | null {
    const n = this.history.length;
    if (n === 0) return null;
    const last = this.cells[this.history[n - 1]];
    for (const [a, b, c] of LINES) {
      if (this.cells[a] === last && this.cells[b] === last && this.cells[c] === last) return -1;
    }
    return n === 9 ? 0 : null;
  }

  /** Base-3 board number (the side to move follows from the mark count). */
  hash(): number {
    return this.key;
  }

  /** Planes: side to move's marks, the opponent's marks, ones. */
  encode(out: Float32Array | Float16Array, offset: number): void {
    const me = this.toMove() + 1;
    for (let i = 0; i < 9; i++) {
      const c = this.cells[i];
      out[offset + i] = c === me ? 1 : 0;
      out[offset + 9 + i] = c !== 0 && c !== me ? 1 : 0;
      out[offset + 18 + i] = 1;
    }
  }

  /** The cell is the policy index. */
  moveIndex(cell: number): number {
    return cell;
  }

  /** "a1".."c3" (column letter, row number from the top). */
  moveText(cell: number): string {
    return `${"abc"[cell % 3]}${Math.floor(cell / 3) + 1}`;
  }

  /** A copy with its history. */
  clone(): TicTacToe {
    const g = new TicTacToe();
    for (const m of this.history) g.play(m);
    return g;
  }
}

/** Tic-tac-toe's shapes for the network: 3 planes of 3 x 3, 9 moves. */
export const TICTACTOE: GameSpec<number> = {
  name: "tictactoe",
  planes: 3,
  height: 3,
  width: 3,
  moves: 9,
  create: () => new TicTacToe(),
};
