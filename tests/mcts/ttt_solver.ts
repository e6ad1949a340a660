// An exact tic-tac-toe solver for the oracles: negamax over every position, memoized by hash.
import { TicTacToe } from "../../src/alphazero/games/tictactoe.ts";

const memo = new Map<number, number>();

/** Exact value of the position for the side to move (1 win, 0 draw, -1 loss). */
export function solveTtt(g: TicTacToe): number {
  const r = g.result();
  if (r !== null) return r;
  const key = g.hash();
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  let best = -1;
  for (const m of g.legalMoves()) {
    g.play(m);
    best = Math.max(best, 0 - solveTtt(g));
    g.undo();
    if (best === 1) break;
  }
  memo.set(key, best);
  return best;
}

/** Exact value of each legal move for the side to move. */
export function moveValues(g: TicTacToe): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of g.legalMoves()) {
    g.play(m);
    out.set(m, 0 - solveTtt(g));
    g.undo();
  }
  return out;
}

/** A perfect player: the first move of best exact value. */
export function perfectMove(g: TicTacToe): number {
  let best = -2, move = -1;
  for (const [m, v] of moveValues(g)) if (v > best) [best, move] = [v, m];
  return move;
}

/** Every position reachable from the start (each once), depth-first. */
export function allPositions(): TicTacToe[] {
  const seen = new Set<number>(), out: TicTacToe[] = [];
  const walk = (g: TicTacToe) => {
    if (seen.has(g.hash())) return;
    seen.add(g.hash());
    out.push(g.clone());
    for (const m of g.legalMoves()) {
      g.play(m);
      walk(g);
      g.undo();
    }
  };
  walk(new TicTacToe());
  return out;
}
