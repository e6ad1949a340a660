// Moves as packed integers: (piece << 10) | destination cell. The source is the piece's current
// cell, so (piece, destination) identifies a move in a given position, as Mzinga compares them.
import { NUM_PIECES } from "./pieces.ts";

/** The pass move. */
export const PASS: number = NUM_PIECES << 10;

/** Packs a move of `piece` to `cell`. */
export function makeMove(piece: number, cell: number): number {
  return (piece << 10) | cell;
}

/** The moving piece of a packed move (NUM_PIECES for pass). */
export function movePiece(m: number): number {
  return m >> 10;
}

/** The destination cell of a packed move. */
export function moveTo(m: number): number {
  return m & 1023;
}

/** A move as an object: piece id, source cell (-1 from hand), destination cell and stack level. */
export interface HiveMove {
  /** Piece id 0..27, or -1 for pass. */
  piece: number;
  /** Source cell, or -1 when the piece comes from the hand (or for pass). */
  from: number;
  /** Destination cell, or -1 for pass. */
  to: number;
  /** Stack level the piece lands on (0 = ground), or -1 for pass. */
  toLevel: number;
}
