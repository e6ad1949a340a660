// Why a move is illegal, in the reference engine's (Mzinga's) words and order of checks.
import type { HiveBoard } from "./board.ts";
import { movePiece, moveTo, PASS } from "./move.ts";
import { NEIGHBOR } from "./grid.ts";
import { PIECE_BUG, PIECE_COLOR, PIECE_PREV, PIECES_PER_COLOR, QUEEN } from "./pieces.ts";

/** Mzinga's fallback reason for an illegal move. */
export const GENERIC_INVALID = "You can't move that piece there.";

function breaksHive(g: HiveBoard, p: number): boolean {
  const c = g.pieceCell[p];
  if (g.pieceLevel[p] !== 0) return false;
  // Flood fill the occupied cells without `c`, starting from any neighbour of it.
  const H = g.height;
  H[c]--;
  try {
    let startCell = -1, total = 0;
    for (let q = 0; q < g.pieceCell.length; q++) {
      const qc = g.pieceCell[q];
      if (qc >= 0 && g.pieceLevel[q] === 0 && q !== p) {
        total++;
        if (startCell < 0) startCell = qc;
      }
    }
    if (startCell < 0) return false;
    const seen = new Set<number>([startCell]);
    const todo = [startCell];
    while (todo.length) {
      const x = todo.pop()!;
      for (let d = 0; d < 6; d++) {
        const y = NEIGHBOR[x * 6 + d];
        if (H[y] !== 0 && !seen.has(y)) {
          seen.add(y);
          todo.push(y);
        }
      }
    }
    return seen.size !== total;
  } finally {
    H[c]++;
  }
}

/**
 * Returns null when `move` (landing at stack level `toLevel`) is legal in `g`, else the reason
 * Mzinga gives ("You can't play your Queen Bee on your first turn.", ...).
 */
export function invalidMoveReason(g: HiveBoard, move: number, toLevel: number): string | null {
  if (move === PASS) {
    if (g.isOver()) return "You can't pass, the game is over.";
    return g.isValid(PASS) ? null : "You can't pass when you have valid moves.";
  }
  if (g.isOver()) return "You can't play, the game is over.";
  const p = movePiece(move), to = moveTo(move);
  const landing = g.height[to] - (g.pieceCell[p] === to ? 1 : 0);
  if (landing === toLevel && g.isValid(move)) return null;
  const color = g.turn & 1;
  if (PIECE_COLOR[p] !== color) return "It's not that player's turn.";
  if (!g.enabled[p]) return "That piece is not enabled in this game.";
  const isQueen = PIECE_BUG[p] === QUEEN;
  if (g.playerTurn === 1 && isQueen) return "You can't play your Queen Bee on your first turn.";
  if (g.pieceCell[color * PIECES_PER_COLOR] < 0) {
    if (g.playerTurn === 4 && !isQueen) {
      return "You must play your Queen Bee on or before your fourth turn.";
    }
    if (g.inPlay(p)) return "You can't move a piece in play until you've played your Queen Bee.";
  }
  const prev = PIECE_PREV[p];
  if (!g.inPlay(p) && prev >= 0 && !g.inPlay(prev)) {
    return "When there are multiple pieces of the same bug type, you must play the pieces in order.";
  }
  if (g.height[to] > toLevel) {
    return "You can't move there because a piece already exists at that position.";
  }
  if (g.inPlay(p)) {
    if (!g.isOnTop(p)) {
      return "You can't move that piece because it has another piece on top of it.";
    }
    if (breaksHive(g, p)) return "You can't move that piece because it will break the hive.";
  }
  return GENERIC_INVALID;
}
