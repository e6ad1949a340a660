// Connect Four on a configurable board (k in a row, gravity), for the AlphaZero oracles: small
// boards are solved exactly by an alpha-beta in the tests.
import type { Game, GameSpec, Outcome } from "../../mcts/game.ts";
import { mulberry32 } from "../../mcts/random.ts";

/** A Connect Four position; moves are column numbers. Cells are column-major, row 0 the bottom. */
export class ConnectFour implements Game<number> {
  /** 0 empty, 1 first player, 2 second player; index col * height + row. */
  readonly cells: Uint8Array;
  readonly heights: Uint8Array;
  private readonly history: number[] = [];
  private lo = 0;
  private hi = 0;
  private winner = 0;

  constructor(
    readonly width = 7,
    readonly height = 6,
    readonly k = 4,
    private readonly zobrist = zobristTable(width * height),
  ) {
    this.cells = new Uint8Array(width * height);
    this.heights = new Uint8Array(width);
  }

  /** Side to move. */
  toMove(): 0 | 1 {
    return (this.history.length & 1) as 0 | 1;
  }

  /** Moves made. */
  ply(): number {
    return this.history.length;
  }

  /** Columns with room, none once the game is over. */
  legalMoves(): number[] {
    if (this.result() !== null) return [];
    const out: number[] = [];
    for (let c = 0; c < this.width; c++) if (this.heights[c] < this.height) out.push(c);
    return out;
  }

  /** Drops a disc of the side to move into column `col`. */
  play(col: number): void {
    const who = this.toMove() + 1;
    const row = this.heights[col]++;
    const i = col * this.height + row;
    this.cells[i] = who;
    this.lo ^= this.zobrist[(i * 2 + who - 1) * 2];
    this.hi ^= this.zobrist[(i * 2 + who - 1) * 2 + 1];
    this.history.push(col);
    this.winner = this.lineThrough(col, row, who) ? who : 0;
  }

  /** Lifts the last disc. */
  undo(): void {
    const col = this.history.pop()!;
    const row = --this.heights[col];
    const i = col * this.height + row;
    const who = this.cells[i];
    this.lo ^= this.zobrist[(i * 2 + who - 1) * 2];
    this.hi ^= this.zobrist[(i * 2 + who - 1) * 2 + 1];
    this.cells[i] = 0;
    this.winner = 0; // a finished game has no moves after it, so the previous position had no winner
  }

  private lineThrough(col: number, row: number, who: number): boolean {
    const dirs = [[1, 0], [0, 1], [1, 1], [1, -1]];
    for (const [dc, dr] of dirs) {
      let run = 1;
      for (const s of [1, -1]) {
        let c = col + s * dc, r = row + s * dr;
        while (
          c >= 0 && c < this.width && r >= 0 && r < this.height &&
          this.cells[c * this.height + r] === who
        ) {
          run++;
          c += s * dc;
          r += s * dr;
        }
      }
      if (run >= this.k) return true;
    }
    return false;
  }

  /** -1 when the player who just moved connected k, 0 on a full board, else null. */
  result(): Outcome | null {
    if (this.winner) return -1;
    return this.history.length === this.width * this.height ? 0 : null;
  }

  /** Zobrist hash of the discs (53 bits). */
  hash(): number {
    return (this.hi & 0x1fffff) * 4294967296 + (this.lo >>> 0);
  }

  /** Planes: side to move's discs, the opponent's, ones; [height, width] with row 0 at the top. */
  encode(out: Float32Array | Float16Array, offset: number): void {
    const me = this.toMove() + 1, hw = this.width * this.height;
    for (let c = 0; c < this.width; c++) {
      for (let r = 0; r < this.height; r++) {
        const v = this.cells[c * this.height + r];
        const at = offset + (this.height - 1 - r) * this.width + c;
        out[at] = v === me ? 1 : 0;
        out[at + hw] = v !== 0 && v !== me ? 1 : 0;
        out[at + 2 * hw] = 1;
      }
    }
  }

  /** The column is the policy index. */
  moveIndex(col: number): number {
    return col;
  }

  /** Column letter. */
  moveText(col: number): string {
    return String.fromCharCode(97 + col);
  }

  /** A copy with its history (sharing the Zobrist table). */
  clone(): ConnectFour {
    const g = new ConnectFour(this.width, this.height, this.k, this.zobrist);
    for (const m of this.history) g.play(m);
    return g;
  }
}

function zobristTable(cells: number): Int32Array {
  const next = mulberry32(0xc4c4);
  const t = new Int32Array(cells * 2 * 2);
  for (let i = 0; i < t.length; i++) t[i] = Math.floor(next() * 4294967296) | 0;
  return t;
}

/** Connect Four's network shapes for a `width` x `height` board with `k` in a row to win. */
export function connectFourSpec(width = 7, height = 6, k = 4): GameSpec<number> {
  const zobrist = zobristTable(width * height);
  return {
    name: width === 7 && height === 6 && k === 4 ? "connect4" : `connect4-${width}x${height}k${k}`,
    planes: 3,
    height,
    width,
    moves: width,
    create: () => new ConnectFour(width, height, k, zobrist),
  };
}
