// The legal-move mask as the GPU reads it: one bit a move, each position's row in whole 32-bit
// words (5,489 moves: 172 words, 688 bytes a position against 21,956 as floats). A batch of 256
// positions then uploads 176 KB of mask a call instead of 5.6 MB: the uploads are copied on the
// GPU's queue between one call's work and the next's (session 31, H200: each call at batch 256
// lost about 2.1 ms to the readback drain and these copies).

/** 32-bit words per position of a packed mask of `moves` moves. */
export function maskWords(moves: number): number {
  return Math.ceil(moves / 32);
}

/**
 * Packs a [rows, moves] mask (legal where > 0, as the CPU graph reads it) into `out`: row r's bit
 * i at word r * maskWords(moves) + (i >> 5), bit i & 31.
 */
export function packMask(
  mask: Float32Array,
  rows: number,
  moves: number,
  out: Uint32Array = new Uint32Array(rows * maskWords(moves)),
): Uint32Array {
  const words = maskWords(moves);
  for (let r = 0; r < rows; r++) {
    const row = r * moves;
    for (let w = 0; w < words; w++) {
      const base = row + w * 32, n = Math.min(32, moves - w * 32);
      let bits = 0;
      for (let b = 0; b < n; b++) if (mask[base + b] > 0) bits |= 1 << b;
      out[r * words + w] = bits;
    }
  }
  return out;
}

/** A packed mask of `rows` positions with every one of `moves` moves legal. */
export function allLegalMask(rows: number, moves: number): Uint32Array {
  const row = packMask(new Float32Array(moves).fill(1), 1, moves);
  const out = new Uint32Array(rows * row.length);
  for (let r = 0; r < rows; r++) out.set(row, r * row.length);
  return out;
}

/**
 * A [rows, moves] mask (1 legal, 0 not) with `legal(r)` legal moves in row r (at most `moves`) at
 * places drawn from `next` (uniform in [0, 1)): the synthetic masks of benches and checks.
 */
export function randomMask(
  rows: number,
  moves: number,
  legal: (r: number) => number,
  next: () => number,
): Float32Array {
  const mask = new Float32Array(rows * moves);
  for (let r = 0; r < rows; r++) {
    for (let k = 0, n = Math.min(moves, legal(r)); k < n;) {
      const at = r * moves + Math.floor(next() * moves);
      if (mask[at] === 0) {
        mask[at] = 1;
        k++;
      }
    }
  }
  return mask;
}
