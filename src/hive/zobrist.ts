// Zobrist keys for Hive positions, drawn from a fixed-seed PRNG so hashes are the same in every run.
import { MAX_STACK, NUM_CELLS } from "./grid.ts";
import { NUM_PIECES } from "./pieces.ts";

/** Index of the key for piece `p` at `cell`, stack level `level`. */
export function zobristIndex(p: number, cell: number, level: number): number {
  return (p * NUM_CELLS + cell) * MAX_STACK + level;
}

/** splitmix32: a small, well-mixed deterministic generator for the key tables. */
function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

const rand = splitmix32(0x48495645); // "HIVE"
const size = NUM_PIECES * NUM_CELLS * MAX_STACK;

/** Low and high 32 bits of the piece-placement keys, indexed by zobristIndex. */
export const Z_PIECE_LO: Uint32Array = new Uint32Array(size);
/** High 32 bits of the piece-placement keys. */
export const Z_PIECE_HI: Uint32Array = new Uint32Array(size);
for (let i = 0; i < size; i++) {
  Z_PIECE_LO[i] = rand();
  Z_PIECE_HI[i] = rand();
}
/** Key toggled when the side to move changes. */
export const Z_TURN_LO: number = rand(), Z_TURN_HI: number = rand();
/** Keys for "last piece moved" (index piece + 1; 0 = none), which changes the legal moves. */
export const Z_LAST_LO: Uint32Array = new Uint32Array(NUM_PIECES + 1);
/** High halves of the last-moved keys. */
export const Z_LAST_HI: Uint32Array = new Uint32Array(NUM_PIECES + 1);
for (let i = 1; i <= NUM_PIECES; i++) {
  Z_LAST_LO[i] = rand();
  Z_LAST_HI[i] = rand();
}
