// The compact readback of inference calls: when no position of a batch has more than `width`
// legal moves, the GPU packs each row's legal probabilities to the front of a row of `width`
// values (shaders/nn/compact.wgsl) and the call reads those back instead of every move's; the
// host puts them back in place from the mask it packed (every other probability is 0, as the
// masked softmax writes it). A Hive position has about 50-220 legal moves of 5,489: at batch 256
// the readback copy is 0.5 MB instead of 5.6 MB, copied on the GPU's queue between one call's
// work and the next's. Same values, bit for bit.
import { KibitzError } from "../errors.ts";
import { envValue } from "../env.ts";
import { maskWords } from "./mask_bits.ts";

/** Slots a row of the compact readback holds (Hive: about 2.5 times the most legal moves seen). */
export const COMPACT_WIDTH = 512;

/**
 * Smallest batch whose plans compact their readback. Below it the copy saved is small (batch 8 of
 * Hive: 176 KB less) against one more dispatch a call (about 5.5 us on the H200), where batch 1
 * with 16 calls in flight reached 8.09 calls per readback floor against a target of 8 (session 30).
 */
export const COMPACT_MIN_BATCH = 32;

/**
 * The compact width for a policy of `moves` moves: COMPACT_WIDTH where it reads back at most a
 * quarter of the row, else 0 (off: too little to gain over the full row).
 */
export function defaultCompactWidth(moves: number): number {
  return moves >= 4 * COMPACT_WIDTH ? COMPACT_WIDTH : 0;
}

/**
 * The compact width a net starts with: KIBITZ_NN_COMPACT where set (0 or "off": none; else the
 * slots a row holds, a positive integer), else defaultCompactWidth(moves).
 */
export function compactWidthSetting(moves: number, v = envValue("KIBITZ_NN_COMPACT")): number {
  if (v === undefined || v === "") return defaultCompactWidth(moves);
  if (v === "off") return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    throw new KibitzError(
      "bad_args",
      `KIBITZ_NN_COMPACT must be off, 0 or the compact readback's slots a position (a positive integer), got "${v}"`,
    );
  }
  return n;
}

/** Set bits of a 32-bit word. */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The most legal moves of any of `rows` rows of a packed mask of `moves` moves. */
export function maxLegal(bits: Uint32Array, rows: number, moves: number): number {
  const words = maskWords(moves);
  let most = 0;
  for (let r = 0; r < rows; r++) {
    let n = 0;
    for (let w = r * words, end = w + words; w < end; w++) n += popcount(bits[w]);
    if (n > most) most = n;
  }
  return most;
}

/**
 * The full [rows, moves] probabilities from a compact readback (`packed` [rows, width]) and the
 * packed mask it was made with: each row's legal moves in move order, 0 elsewhere.
 */
export function scatterCompact(
  packed: Float32Array,
  bits: Uint32Array,
  rows: number,
  moves: number,
  width: number,
): Float32Array {
  const words = maskWords(moves), out = new Float32Array(rows * moves);
  for (let r = 0; r < rows; r++) {
    let k = r * width;
    for (let w = 0; w < words; w++) {
      let b = bits[r * words + w];
      const base = r * moves + w * 32;
      while (b !== 0) {
        const low = b & -b;
        out[base + 31 - Math.clz32(low)] = packed[k++];
        b ^= low;
      }
    }
  }
  return out;
}
