// The built-in UHP player: iterative-deepening alpha-beta with a queen-surround + mobility score.
import type { HiveGame } from "../hive/game.ts";
import { PASS } from "../hive/move.ts";
import { DRAW } from "../hive/state.ts";

/** Search limits: stop after `depth` plies, or when `timeMs` has passed (whichever comes first). */
export interface SearchLimits {
  depth?: number;
  timeMs?: number;
}

/** The chosen move and what the search saw. */
export interface SearchResult {
  move: number;
  score: number;
  depth: number;
  nodes: number;
}

const WIN = 1_000_000;
const PLY_STRIDE = 2048;
const MAX_DEPTH = 64;

class Timeout extends Error {}

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
  const root = Array.from(buf.subarray(0, rootCount));
  if (root.length === 0) return { move: PASS, score: 0, depth: 0, nodes: 0 };
  let best: SearchResult = { move: root[0], score: 0, depth: 0, nodes: 0 };
  const base = PLY_STRIDE;
  let timed = false; // depth 1 always completes, so there is always a searched move

  const negamax = (depth: number, ply: number, alpha: number, beta: number): number => {
    if ((++nodes & 1023) === 0 && timed && performance.now() > deadline) throw new Timeout();
    if (g.isOver()) return g.state === DRAW ? 0 : -(WIN - ply); // the side that just moved won
    const at = base + ply * PLY_STRIDE;
    if (depth === 0) return evaluate(g, buf, at);
    const n = g.generate(buf, at);
    let bestScore = -Infinity;
    for (let i = 0; i < n; i++) {
      g.play(buf[at + i]);
      let s: number;
      try {
        s = -negamax(depth - 1, ply + 1, -beta, -alpha);
      } finally {
        g.undo();
      }
      if (s > bestScore) bestScore = s;
      if (s > alpha) alpha = s;
      if (alpha >= beta) break;
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
