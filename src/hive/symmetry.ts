// The 12 symmetries of the hex board (6 rotations x mirror) applied to Hive games on axial
// coordinates: a symmetry maps every cell of the 32 x 32 torus to another, keeps neighbours
// neighbours, and so maps a game's moves to the moves of an equally legal game. Used for training
// augmentation before encoding (seed 003), never on the encoded planes.
import { HiveGame } from "./game.ts";
import { cellAt, cellQ, cellR } from "./grid.ts";
import { makeMove, movePiece, moveTo, PASS } from "./move.ts";

/** Number of symmetries: rotations 0..5 (by 60 degrees), then the same after the mirror. */
export const HEX_SYMMETRIES = 12;

/**
 * Axial coordinates under symmetry `s` (0..11): mirror (q, r) -> (r, q) when s >= 6, then rotate
 * (s mod 6) times by 60 degrees, (q, r) -> (-r, q + r). Both are integer maps of determinant +-1,
 * so they are well defined on the torus (coordinates mod 32) and keep the six directions a set.
 */
export function hexTransform(q: number, r: number, s: number): [number, number] {
  if (s >= 6) [q, r] = [r, q];
  for (let k = s % 6; k > 0; k--) [q, r] = [-r, q + r];
  return [q, r];
}

/** The cell that symmetry `s` maps `cell` to (the origin stays the origin). */
export function transformCell(cell: number, s: number): number {
  const [q, r] = hexTransform(cellQ(cell), cellR(cell), s);
  return cellAt(q, r);
}

/** A packed move under symmetry `s` (pass stays pass). */
export function transformMove(move: number, s: number): number {
  if (move === PASS) return PASS;
  return makeMove(movePiece(move), transformCell(moveTo(move), s));
}

/** The inverse symmetry of `s`: mirrors are their own inverse, rotation k undoes with 6 - k. */
export function inverseSymmetry(s: number): number {
  return s >= 6 ? s : (6 - s) % 6;
}

/** A new game with the moves of `g` under symmetry `s` (same game type, same move count). */
export function transformGame(g: HiveGame, s: number): HiveGame {
  const out = new HiveGame(g.gameType);
  for (const m of g.history()) out.play(transformMove(m, s));
  return out;
}
