// The built-in UHP player: iterative-deepening alpha-beta with a queen-surround + mobility score and
// a transposition table (Zobrist keys: pieces, side to move and the last piece moved, which the
// Pillbug rule reads) that supplies cutoffs and the move tried first.
import type { HiveGame } from "../hive/game.ts";
import { PASS } from "../hive/move.ts";

/** Search limits: stop after `depth` plies, or when `timeMs` has passed (whichever comes first). */
export interface SearchLimits {
  depth?: number;
  timeMs?: number;
  /** Use the transposition table (default true; false gives plain alpha-beta, for comparison). */
  transposition?: boolean;
  /** Search only these root moves (each must be legal); default all legal moves. */
  rootMoves?: number[];
}

/** The chosen move and what the search saw. */
export interface SearchResult {
  move: number;
  score: number;
  depth: number;
  nodes: number;
}

const WIN = 1_000_000;
/** Scores beyond this are wins or losses at a known distance (WIN - ply). */
const MATE = WIN - 1000;
const PLY_STRIDE = 2048;
const MAX_DEPTH = 64;
const EXACT = 1, LOWER = 2, UPPER = 3;

/**
 * A fixed-size table of search results keyed by the 64-bit Zobrist hash (index from the low bits,
 * both halves checked); deeper results replace shallower ones, equal depth replaces (newer).
 */
export class TranspositionTable {
  readonly size: number;
  private readonly lo: Uint32Array;
  private readonly hi: Uint32Array;
  private readonly depth: Int8Array;
  private readonly flag: Uint8Array;
  private readonly score: Int32Array;
  private readonly move: Int32Array;

  constructor(bits = 18) {
    this.size = 1 << bits;
    this.lo = new Uint32Array(this.size);
    this.hi = new Uint32Array(this.size);
    this.depth = new Int8Array(this.size).fill(-1);
    this.flag = new Uint8Array(this.size);
    this.score = new Int32Array(this.size);
    this.move = new Int32Array(this.size);
  }

  /** Slot of the key, or -1 when the table holds another position there. */
  find(lo: number, hi: number): number {
    const i = lo & (this.size - 1);
    return this.depth[i] >= 0 && this.lo[i] === lo >>> 0 && this.hi[i] === hi >>> 0 ? i : -1;
  }

  store(lo: number, hi: number, depth: number, flag: number, score: number, move: number): void {
    const i = lo & (this.size - 1);
    if (this.depth[i] > depth && (this.lo[i] !== lo >>> 0 || this.hi[i] !== hi >>> 0)) return;
    this.lo[i] = lo >>> 0, this.hi[i] = hi >>> 0, this.depth[i] = depth;
    this.flag[i] = flag, this.score[i] = score, this.move[i] = move;
  }

  entryDepth(i: number): number {
    return this.depth[i];
  }
  entryFlag(i: number): number {
    return this.flag[i];
  }
  entryScore(i: number): number {
    return this.score[i];
  }
  entryMove(i: number): number {
    return this.move[i];
  }
}

/** Table form of a score at `ply`: wins and losses counted from the node, not from the root. */
export function toTable(score: number, ply: number): number {
  return score > MATE ? score + ply : score < -MATE ? score - ply : score;
}

/** A table score read back at `ply` (the same position may sit at another distance from the root). */
export function fromTable(score: number, ply: number): number {
  return score > MATE ? score - ply : score < -MATE ? score + ply : score;
}

class Timeout extends Error {}

/**
 * Score of a finished game `ply` plies below the root, from the side to move's view: the result
 * read from the position (a move can surround the mover's own queen, or both queens: a draw),
 * a win or loss counted nearer when it comes sooner.
 */
export function terminalScore(g: HiveGame, ply: number): number {
  const o = g.outcomeForSideToMove();
  return o === null || o === 0 ? 0 : o * (WIN - ply);
}

/** Static score from the side to move's view: surround the enemy queen, free our own, keep mobile. */
export function evaluate(g: HiveGame, buf: Int32Array, at: number): number {
  const me = g.turn & 1;
  const surround = g.queenNeighbors(1 - me) - g.queenNeighbors(me);
  const mine = g.generate(buf, at);
  // Count the opponent's moves as if it were to move (Mzinga's metrics do the same).
  g.turn++;
  const theirs = g.generate(buf, at);
  g.turn--;
  const mobility = (buf[at] === PASS && mine === 1 ? 0 : mine) - theirs;
  return 100 * surround + mobility;
}

/** Chooses a move for the side to move within the limits (at least depth 1 is always finished). */
export function searchBestMove(g: HiveGame, limits: SearchLimits): SearchResult {
  const maxDepth = Math.max(1, Math.min(MAX_DEPTH, limits.depth ?? MAX_DEPTH));
  const deadline = limits.timeMs !== undefined ? performance.now() + limits.timeMs : Infinity;
  const buf = new Int32Array(PLY_STRIDE * (maxDepth + 2));
  let nodes = 0;
  const rootCount = g.generate(buf, 0);
  const legal = Array.from(buf.subarray(0, rootCount));
  const root = limits.rootMoves ? legal.filter((m) => limits.rootMoves!.includes(m)) : legal;
  if (root.length === 0) return { move: PASS, score: 0, depth: 0, nodes: 0 };
  let best: SearchResult = { move: root[0], score: 0, depth: 0, nodes: 0 };
  const base = PLY_STRIDE;
  let timed = false; // depth 1 always completes, so there is always a searched move

  const tt = limits.transposition === false ? null : new TranspositionTable();
  const negamax = (depth: number, ply: number, alpha: number, beta: number): number => {
    if ((++nodes & 1023) === 0 && timed && performance.now() > deadline) throw new Timeout();
    if (g.isOver()) return terminalScore(g, ply);
    const at = base + ply * PLY_STRIDE;
    if (depth === 0) return evaluate(g, buf, at);
    const alpha0 = alpha, lo = g.hashLo, hi = g.hashHi;
    let first = -1;
    if (tt) {
      const e = tt.find(lo, hi);
      if (e >= 0) {
        first = tt.entryMove(e);
        if (tt.entryDepth(e) >= depth) {
          const v = fromTable(tt.entryScore(e), ply), f = tt.entryFlag(e);
          if (f === EXACT) return v;
          if (f === LOWER && v >= beta) return v;
          if (f === UPPER && v <= alpha) return v;
        }
      }
    }
    const n = g.generate(buf, at);
    if (first >= 0) {
      // The table's move first (when it is still among the legal moves: a hash collision is not).
      for (let i = 1; i < n; i++) {
        if (buf[at + i] === first) {
          buf[at + i] = buf[at];
          buf[at] = first;
          break;
        }
      }
    }
    let bestScore = -Infinity, bestMove = buf[at];
    for (let i = 0; i < n; i++) {
      const m = buf[at + i];
      g.play(m);
      let s: number;
      try {
        s = -negamax(depth - 1, ply + 1, -beta, -alpha);
      } finally {
        g.undo();
      }
      if (s > bestScore) (bestScore = s), (bestMove = m);
      if (s > alpha) alpha = s;
      if (alpha >= beta) break;
    }
    if (tt) {
      const flag = bestScore <= alpha0 ? UPPER : bestScore >= beta ? LOWER : EXACT;
      tt.store(lo, hi, depth, flag, toTable(bestScore, ply), bestMove);
    }
    return bestScore;
  };

  for (let depth = 1; depth <= maxDepth; depth++) {
    let alpha = -Infinity, bestMove = root[0];
    timed = depth > 1;
    try {
      for (const m of root) {
        g.play(m);
        let s: number;
        try {
          s = -negamax(depth - 1, 1, -Infinity, -alpha);
        } finally {
          g.undo();
        }
        if (s > alpha) {
          alpha = s;
          bestMove = m;
        }
      }
    } catch (e) {
      if (e instanceof Timeout) break;
      throw e;
    }
    best = { move: bestMove, score: alpha, depth, nodes };
    // Principal move first at the next depth; stop on a proven result or when time is short.
    root.splice(root.indexOf(bestMove), 1);
    root.unshift(bestMove);
    if (Math.abs(alpha) > WIN - 1000) break;
    // A deeper iteration costs several times this one: do not start it in the last half.
    if (limits.timeMs !== undefined && performance.now() > deadline - limits.timeMs / 2) break;
  }
  return best;
}
