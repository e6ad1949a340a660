// A bounded proof search: can the side to move force a win within a few plies? Exact results only
// (no evaluation). Every reply of the defender is tried; the attacker's moves are limited to those
// after which the defender's queen can still be surrounded in time, counting one neighbour per
// attacker move (a move adds at most one piece next to a queen it does not move). So a win it
// reports is proven, and what it misses are wins by other means (throwing the queen into a pocket
// with the pillbug, a defender forced to fill its own queen's cells): the MCTS player's loss check
// reads a reported win as "this move loses", never the other way round.
import type { HiveGame } from "../hive/game.ts";
import { movePiece, PASS } from "../hive/move.ts";
import { PIECES_PER_COLOR, WHITE } from "../hive/pieces.ts";

/** What a proof search may spend: move generations left and a performance.now() deadline. */
export interface ProofBudget {
  nodes: number;
  deadline: number;
}

/**
 * True when the side to move of `g` (restored on return) can force a win within `plies` plies
 * (odd: its moves and the replies between them), found within `budget`; false when no such win
 * was found (none exists among the moves it tries, or the budget ran out).
 */
export function forcedWin(g: HiveGame, plies: number, budget: ProofBudget): boolean {
  return attack(g, plies, budget, new Int32Array(plies + 1).fill(-1));
}

// The attacker to move. `killers[p]` is the last reply that refuted an attack with p plies left:
// tried first next time, since one reply (a queen step, a block) often answers many attacks.
function attack(g: HiveGame, plies: number, budget: ProofBudget, killers: Int32Array): boolean {
  const defender = 1 - g.colorToMove;
  const moves = (plies + 1) >> 1;
  const near = g.queenNeighbors(defender);
  // An unplaced queen (0 neighbours) cannot be surrounded in time either.
  if (near === 0 || near + moves < 6) return false;
  if (budget.nodes <= 0 || performance.now() > budget.deadline) return false;
  budget.nodes--;
  const legal = g.validMoves();
  if (winningMove(g, legal) !== null) return true;
  if (plies < 3) return false;
  // The attacks that can still surround the queen in time, those that close in on it first.
  const closer: number[] = [], level: number[] = [];
  for (const x of legal) {
    g.play(x);
    const n = g.outcomeForSideToMove() === null ? g.queenNeighbors(defender) : -1;
    g.undo();
    if (n + moves - 1 < 6) continue;
    (n > near ? closer : level).push(x);
  }
  for (const x of closer.concat(level)) {
    g.play(x);
    const lost = everyReplyLoses(g, plies - 2, budget, killers);
    g.undo();
    if (lost) return true;
  }
  return false;
}

// The defender to move: true when each of its replies leaves the attacker a forced win within
// `plies` (or ends the game in the attacker's favour). The killer reply goes first, then moves of
// its queen (the usual escape); one escape ends the loop.
function everyReplyLoses(
  g: HiveGame,
  plies: number,
  budget: ProofBudget,
  killers: Int32Array,
): boolean {
  if (budget.nodes <= 0 || performance.now() > budget.deadline) return false;
  budget.nodes--;
  const queen = g.colorToMove === WHITE ? 0 : PIECES_PER_COLOR;
  const killer = killers[plies];
  const rank = (m: number) => (m === killer ? 2 : movePiece(m) === queen ? 1 : 0);
  const replies = g.validMoves().sort((a, b) => rank(b) - rank(a));
  for (const y of replies) {
    g.play(y);
    const r = g.outcomeForSideToMove();
    const lost = r === null ? attack(g, plies, budget, killers) : r === 1;
    g.undo();
    if (!lost) {
      killers[plies] = y;
      return false;
    }
  }
  return true;
}

/**
 * A legal move after which the side that played it has won, or null (the first such in `legal`'s
 * order). Only the moves that can win are played: a move that does not move the opponent's queen
 * (a pillbug throw can) fills at most one cell next to it, so unless the queen already has five
 * neighbours, only the moves of the queen itself need playing.
 */
export function winningMove(g: HiveGame, legal: number[]): number | null {
  const queen = g.colorToMove === WHITE ? PIECES_PER_COLOR : 0;
  const any = g.queenNeighbors(1 - g.colorToMove) >= 5;
  for (const m of legal) {
    if (!any && (m === PASS || movePiece(m) !== queen)) continue;
    g.play(m);
    const r = g.outcomeForSideToMove();
    g.undo();
    if (r === -1) return m;
  }
  return null;
}
