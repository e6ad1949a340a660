import { KibitzError } from "../cli/error.ts";
import {
  defaultRounding,
  formatInfo,
  payloadWords,
  type QuantFormat,
  type Rounding,
} from "./format.ts";
import { divF32, invLevels, roundHalfEven } from "./f32math.ts";
import { roundingUniform } from "./hash.ts";

const fround = Math.fround;

/** Blocks whose max |x| is below this (2^-100) are stored as zero. */
export const ZERO_BLOCK = 7.888609052210118e-31;

/** Where the stochastic-rounding noise comes from: a hash of (seed, iteration, block, element). */
export interface RoundingKey {
  seed: number;
  iteration: number;
  /** Defaults to nearest for f32/16-bit and stochastic for 8/4-bit. */
  mode?: Rounding;
}

/**
 * Many blocks of one format in one flat payload. Elements are packed contiguously (a block may start
 * inside a word); sub-word element k of a word sits at bits [k*bits, (k+1)*bits), so with 4 bits the
 * even element is the low nibble of each byte (seed 001 section 7.1).
 */
export interface QuantStore {
  format: QuantFormat;
  n: number;
  blocks: number;
  /** blocks+1 element offsets: block b holds elements [offsets[b], offsets[b+1]). */
  offsets: Uint32Array;
  /** One f32 scale per block = the block's max |x| (unused for f32). */
  scales: Float32Array;
  /** Packed payload; for f32 the raw bits. */
  words: Uint32Array;
  /** Float view of `words` when the format is f32. */
  f32: Float32Array | null;
}

/** Allocates a zeroed store with one block per entry of `blockSizes`. */
export function createQuantStore(format: QuantFormat, blockSizes: ArrayLike<number>): QuantStore {
  const info = formatInfo(format);
  const blocks = blockSizes.length;
  const offsets = new Uint32Array(blocks + 1);
  for (let b = 0; b < blocks; b++) {
    const size = blockSizes[b];
    if (!Number.isInteger(size) || size < 0) {
      throw new KibitzError("bad_block", `block ${b} has invalid size ${size}`);
    }
    offsets[b + 1] = offsets[b] + size;
  }
  const n = offsets[blocks];
  if (n > 0x7fffffff) throw new KibitzError("too_large", `store of ${n} elements exceeds 2^31`);
  const words = new Uint32Array(payloadWords(format, n));
  return {
    format,
    n,
    blocks,
    offsets,
    scales: new Float32Array(info.levels === 0 ? 0 : blocks),
    words,
    f32: format === "f32" ? new Float32Array(words.buffer) : null,
  };
}

/** Reads the integer level of element `e` (signed formats sign-extended). */
export function loadLevel(s: QuantStore, e: number): number {
  const { bits, perWord, signed } = formatInfo(s.format);
  const w = s.words[(e / perWord) | 0];
  const shift = (e % perWord) * bits;
  const up = 32 - bits - shift;
  return signed ? (w << up) >> (32 - bits) : ((w << up) >>> (32 - bits));
}

function storeLevel(words: Uint32Array, e: number, q: number, bits: number, perWord: number): void {
  const wi = (e / perWord) | 0;
  const shift = (e % perWord) * bits;
  const mask = bits === 32 ? 0xffffffff : ((1 << bits) - 1) << shift;
  words[wi] = ((words[wi] & ~mask) | ((q << shift) & mask)) >>> 0;
}

/** Decodes block `b` into `out[outOffset ...]` as q * scale / levels (exact f32 twin of the WGSL decode). */
export function decodeBlock(s: QuantStore, b: number, out: Float32Array, outOffset = 0): void {
  const start = s.offsets[b], end = s.offsets[b + 1];
  if (s.f32) {
    out.set(s.f32.subarray(start, end), outOffset);
    return;
  }
  const { bits, perWord, signed, levels } = formatInfo(s.format);
  const d = fround(s.scales[b] * invLevels(levels));
  const words = s.words;
  const down = 32 - bits;
  for (let e = start, o = outOffset; e < end; e++, o++) {
    const w = words[(e / perWord) | 0];
    const up = down - (e % perWord) * bits;
    const q = signed ? (w << up) >> down : (w << up) >>> down;
    out[o] = fround(q * d);
  }
}

/** Throws the error every encoder raises on NaN or infinite input. */
export function nonFinite(s: QuantStore, b: number, i: number, v: number): KibitzError {
  return new KibitzError(
    "non_finite",
    `cannot encode ${v} into ${s.format} storage (block ${b}, element ${i}): values must be finite`,
  );
}

/**
 * Encodes `values[valuesOffset ...]` (the block's new f32 contents) into block `b`: scale = max |x|,
 * q = x * levels / scale rounded by `key` (stochastic: floor(t) + [u < frac(t)], unbiased), clamped.
 */
export function encodeBlock(
  s: QuantStore,
  b: number,
  values: Float32Array,
  valuesOffset: number,
  key: RoundingKey,
): void {
  const start = s.offsets[b], end = s.offsets[b + 1], len = end - start;
  let max = 0;
  for (let i = 0; i < len; i++) {
    const v = values[valuesOffset + i];
    if (!Number.isFinite(v)) throw nonFinite(s, b, i, v);
    const a = Math.abs(v);
    if (a > max) max = a;
  }
  if (s.f32) {
    s.f32.set(values.subarray(valuesOffset, valuesOffset + len), start);
    return;
  }
  const { bits, perWord, signed, levels } = formatInfo(s.format);
  const words = s.words;
  // Blocks below 2^-100 count as zero, so levels / scale stays finite on every device.
  if (max < ZERO_BLOCK) max = 0;
  s.scales[b] = max;
  if (max === 0) {
    for (let e = start; e < end; e++) storeLevel(words, e, 0, bits, perWord);
    return;
  }
  const inv = divF32(levels, max);
  const lo = signed ? -levels : 0;
  const stochastic = (key.mode ?? defaultRounding(s.format)) === "stochastic";
  const { seed, iteration } = key;
  for (let i = 0; i < len; i++) {
    const t = fround(values[valuesOffset + i] * inv);
    let q: number;
    if (stochastic) {
      const f = Math.floor(t);
      q = roundingUniform(seed, iteration, b, i) < t - f ? f + 1 : f;
    } else {
      q = roundHalfEven(t);
    }
    if (q > levels) q = levels;
    else if (q < lo) q = lo;
    storeLevel(words, start + i, q, bits, perWord);
  }
}

/** Size of block `b` in elements. */
export function blockSize(s: QuantStore, b: number): number {
  return s.offsets[b + 1] - s.offsets[b];
}

/** Decodes the whole store into one f32 array (for export and tests). */
export function decodeAll(s: QuantStore): Float32Array {
  const out = new Float32Array(s.n);
  for (let b = 0; b < s.blocks; b++) decodeBlock(s, b, out, s.offsets[b]);
  return out;
}

/** Encodes a whole f32 array (one value per element) into the store. */
export function encodeAll(s: QuantStore, values: Float32Array, key: RoundingKey): void {
  if (values.length !== s.n) {
    throw new KibitzError(
      "bad_length",
      `expected ${s.n} values for the store, got ${values.length}`,
    );
  }
  for (let b = 0; b < s.blocks; b++) encodeBlock(s, b, values, s.offsets[b], key);
}
