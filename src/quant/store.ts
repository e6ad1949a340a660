import { KibitzError } from "../errors.ts";
import {
  defaultRounding,
  formatInfo,
  payloadWords,
  type QuantFormat,
  type Rounding,
} from "./format.ts";
import { divF32, invLevels } from "./f32math.ts";
import { mix32 } from "./hash.ts";

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
  /** Int32 view of `words` (V8 stores packed words into it without a float conversion). */
  ints: Int32Array;
  /**
   * Element views of `words` for the byte-aligned formats on little-endian hosts (element e of
   * i16 is `i16[e]`, of u8 `u8[e]`, ...): reads and writes of one element without shifts or
   * masks, and without touching a neighbouring block's bytes. Null when the format differs.
   */
  i16: Int16Array | null;
  u16: Uint16Array | null;
  i8: Int8Array | null;
  u8: Uint8Array | null;
}

/** Little-endian host: sub-word element k of a word is the k-th 16- or 8-bit lane in memory. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Allocates a zeroed store with one block per entry of `blockSizes`; with `shared`, payload and
 * scales live in SharedArrayBuffers so worker threads can update disjoint blocks in place. With
 * `at`, payload and scales are views of that (zeroed) memory instead, e.g. a Wasm walk's: the
 * payload at byteOffset, the scales (quantized formats) at scalesOffset.
 */
export function createQuantStore(
  format: QuantFormat,
  blockSizes: ArrayLike<number>,
  shared = false,
  at?: { buffer: ArrayBufferLike; byteOffset: number; scalesOffset?: number },
): QuantStore {
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
  const Buf = shared ? SharedArrayBuffer : ArrayBuffer;
  if (at && info.levels !== 0 && at.scalesOffset === undefined) {
    throw new KibitzError(
      "bad_format",
      `a ${format} store in a given buffer needs its scales' offset`,
    );
  }
  // `at`: the payload is a view of that (zeroed) memory, e.g. a Wasm memory's (cfr/trainer.ts).
  const words = at
    ? new Uint32Array(at.buffer, at.byteOffset, payloadWords(format, n))
    : new Uint32Array(new Buf(payloadWords(format, n) * 4));
  return {
    format,
    n,
    blocks,
    offsets,
    scales: at && info.levels !== 0
      ? new Float32Array(at.buffer, at.scalesOffset, blocks)
      : new Float32Array(new Buf(info.levels === 0 ? 0 : blocks * 4)),
    words,
    f32: format === "f32" ? new Float32Array(words.buffer, words.byteOffset, words.length) : null,
    ints: new Int32Array(words.buffer, words.byteOffset, words.length),
    i16: LITTLE_ENDIAN && format === "i16" ? lanes(Int16Array, words, 2) : null,
    u16: LITTLE_ENDIAN && format === "u16" ? lanes(Uint16Array, words, 2) : null,
    i8: LITTLE_ENDIAN && format === "i8" ? lanes(Int8Array, words, 4) : null,
    u8: LITTLE_ENDIAN && format === "u8" ? lanes(Uint8Array, words, 4) : null,
  };
}

/** An element view of `words` (its own offset and length: element e is view[e]). */
function lanes<T>(
  View: new (b: ArrayBufferLike, offset: number, length: number) => T,
  words: Uint32Array,
  perWord: number,
): T {
  return new View(words.buffer, words.byteOffset, words.length * perWord);
}

/** Reads the integer level of element `e` (signed formats sign-extended). */
export function loadLevel(s: QuantStore, e: number): number {
  const { bits, perWord, signed } = formatInfo(s.format);
  const w = s.words[(e / perWord) | 0];
  const shift = (e % perWord) * bits;
  const up = 32 - bits - shift;
  return signed ? (w << up) >> (32 - bits) : ((w << up) >>> (32 - bits));
}

/** Decodes block `b` into `out[outOffset ...]` as q * scale / levels (exact f32 twin of the WGSL decode). */
export function decodeBlock(s: QuantStore, b: number, out: Float32Array, outOffset = 0): void {
  const start = s.offsets[b] | 0, end = s.offsets[b + 1] | 0;
  const f = s.f32;
  if (f) {
    for (let e = start, o = outOffset; e < end; e++, o++) out[o] = f[e];
    return;
  }
  const { bits, perWord, signed, levels } = formatInfo(s.format);
  const scale = s.scales[b];
  if (scale === 0) {
    // A zero block's levels are all 0 (encoders write 0 for scale 0): zeros without reading the
    // payload, whose pages a new store has not even touched yet (the first solver iteration).
    out.fill(0, outOffset, outOffset + end - start);
    return;
  }
  const d = fround(scale * invLevels(levels));
  // Byte-aligned formats read their element views (the same integer levels as the shifts below).
  if (bits === 16) {
    if (s.i16) {
      const v = s.i16;
      for (let e = start, o = outOffset; e < end; e++, o++) out[o] = v[e] * d;
      return;
    }
    if (s.u16) {
      const v = s.u16;
      for (let e = start, o = outOffset; e < end; e++, o++) out[o] = v[e] * d;
      return;
    }
  } else if (bits === 8) {
    if (s.i8) {
      const v = s.i8;
      for (let e = start, o = outOffset; e < end; e++, o++) out[o] = v[e] * d;
      return;
    }
    if (s.u8) {
      const v = s.u8;
      for (let e = start, o = outOffset; e < end; e++, o++) out[o] = v[e] * d;
      return;
    }
  }
  const words = s.ints;
  const down = 32 - bits, lg = perWord === 2 ? 1 : perWord === 4 ? 2 : 3, sub = perWord - 1;
  // Shifts instead of division per element; the product rounds to f32 on the store into `out`.
  if (signed) {
    for (let e = start, o = outOffset; e < end; e++, o++) {
      out[o] = ((words[e >>> lg] << (down - (e & sub) * bits)) >> down) * d;
    }
  } else {
    for (let e = start, o = outOffset; e < end; e++, o++) {
      out[o] = ((words[e >>> lg] << (down - (e & sub) * bits)) >>> down) * d;
    }
  }
}

/**
 * decodeBlock into `out[0 ...]` that also adds max(x, 0) of each decoded element x to
 * `sums[e % width]` in f32 (the block read as rows of `width`, rows in order): one pass where the
 * format has element lanes, for callers that need both the values and per-column positive sums.
 */
export function decodeBlockPositiveSums(
  s: QuantStore,
  b: number,
  out: Float32Array,
  width: number,
  sums: Float64Array,
): void {
  const start = s.offsets[b] | 0, end = s.offsets[b + 1] | 0;
  const v = s.scales.length > 0 && s.scales[b] !== 0 ? s.i16 : null;
  if (v) {
    const d = fround(s.scales[b] * invLevels(formatInfo(s.format).levels));
    for (let row = start, o = 0; row < end; row += width) {
      for (let h = 0; h < width; h++, o++) {
        const x = fround(v[row + h] * d);
        out[o] = x;
        sums[h] = fround(sums[h] + (x + Math.abs(x)) * 0.5); // f32 sum of max(x, 0), branch-free
      }
    }
    return;
  }
  decodeBlock(s, b, out, 0);
  for (let row = 0; row < end - start; row += width) {
    for (let h = 0; h < width; h++) {
      const x = out[row + h];
      sums[h] = fround(sums[h] + (x + Math.abs(x)) * 0.5);
    }
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
 * Words shared with a neighbouring block are merged atomically, so threads encoding different blocks
 * of a shared store never lose each other's bits.
 */
export function encodeBlock(
  s: QuantStore,
  b: number,
  values: Float32Array,
  valuesOffset: number,
  key: RoundingKey,
): void {
  const start = s.offsets[b] | 0, end = s.offsets[b + 1] | 0, len = end - start;
  let max = 0;
  for (let i = 0; i < len; i++) {
    const v = values[valuesOffset + i];
    if (v - v !== 0) throw nonFinite(s, b, i, v);
    const a = v < 0 ? -v : v;
    if (a > max) max = a;
  }
  encodeBlockWithMax(s, b, values, valuesOffset, key, max);
}

/**
 * encodeBlock for a caller that already knows `max` = max |x| over the block's values and that
 * they are all finite (a fused update computes it in its own loop): skips the scan.
 */
export function encodeBlockWithMax(
  s: QuantStore,
  b: number,
  values: Float32Array,
  valuesOffset: number,
  key: RoundingKey,
  max: number,
): void {
  const f = s.f32;
  if (f) {
    const start = s.offsets[b] | 0, end = s.offsets[b + 1] | 0;
    for (let i = valuesOffset, e = start; e < end; i++, e++) f[e] = values[i];
    return;
  }
  // Blocks below 2^-100 count as zero, so levels / scale stays finite on every device.
  if (max < ZERO_BLOCK) max = 0;
  s.scales[b] = max;
  const stochastic = (key.mode ?? defaultRounding(s.format)) === "stochastic";
  encodeLevels(s, b, values, valuesOffset, max, stochastic, key.seed, key.iteration);
}

/** Rounding-hash state after (seed, iteration, block): roundingHash = mix32(prefix ^ element). */
function hashPrefix(seed: number, iteration: number, block: number): number {
  let h = mix32((Math.imul(seed >>> 0, 0x9e3779b9) + 0x632be5ab) >>> 0);
  h = mix32((h ^ iteration) >>> 0);
  return mix32((h ^ block) >>> 0);
}

/**
 * Writes the integer levels of block `b` for scale `max` (already stored), word by word: whole
 * words with a plain store, the first and last words (which may hold a neighbour's elements) with
 * an atomic and/or that touches only this block's bits.
 */
function encodeLevels(
  s: QuantStore,
  b: number,
  values: Float32Array,
  valuesOffset: number,
  max: number,
  stochastic: boolean,
  seed: number,
  iteration: number,
): void {
  const start = s.offsets[b] | 0, end = s.offsets[b + 1] | 0;
  if (end === start) return;
  const { bits, perWord, signed, levels } = formatInfo(s.format);
  const words = s.ints;
  const inv = max === 0 ? 0 : divF32(levels, max);
  const lo = signed ? -levels : 0;
  const prefix = hashPrefix(seed, iteration, b);
  const lg = perWord === 2 ? 1 : perWord === 4 ? 2 : 3, sub = perWord - 1;
  const elMask = bits === 16 ? 0xffff : bits === 8 ? 0xff : 0xf;
  // Levels first (one tight loop), then packing (a second loop with no rounding logic).
  const len = end - start;
  if (levelScratch.length < len) {
    levelScratch = new Int32Array(Math.max(len, 2 * levelScratch.length));
  }
  const lv = levelScratch;
  if (max === 0) lv.fill(0, 0, len);
  else if (stochastic) {
    for (let i = 0; i < len; i++) {
      const t = fround(values[valuesOffset + i] * inv);
      const fl = Math.floor(t);
      // mix32(prefix ^ i) inlined; u = x / 2^24 < frac  <=>  x < ceil(frac * 2^24) for integer x
      // (branch-free: a random branch per element costs more than the arithmetic).
      let x = prefix ^ i;
      x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
      x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
      x = (x ^ (x >>> 16)) >>> 8;
      const q = (fl | 0) + ((x - Math.ceil((t - fl) * 16777216)) >>> 31);
      lv[i] = q > levels ? levels : q < lo ? lo : q;
    }
  } else {
    for (let i = 0; i < len; i++) {
      const t = fround(values[valuesOffset + i] * inv);
      // Round half to even: half up, then ties that landed on an odd level step back.
      let q = Math.floor(t + 0.5) | 0;
      if (q - t === 0.5 && (q & 1) !== 0) q--;
      lv[i] = q > levels ? levels : q < lo ? lo : q;
    }
  }
  // Byte-aligned formats store each level in its own lanes: no word is shared with a neighbour.
  if (bits === 16 || bits === 8) {
    const v = s.i16 ?? s.u16 ?? s.i8 ?? s.u8;
    if (v) {
      // A native converting copy (the levels are in range, so each lands unchanged).
      v.set(lv.subarray(0, len), start);
      return;
    }
  }
  // Whole words get a plain store; the first and last words may hold a neighbouring block's
  // elements, so only this block's bits are replaced there (atomically: threads may share them).
  let e = start, i = 0;
  const head = (perWord - (start & sub)) & sub;
  if (head > 0) {
    const n = head < len ? head : len;
    packPartial(words, lv, 0, start, n, bits, elMask, lg, sub);
    e += n, i += n;
  }
  const whole = (end - e) >>> lg;
  let w = e >>> lg;
  if (bits === 16) {
    for (let k = 0; k < whole; k++, i += 2) words[w++] = (lv[i] & 0xffff) | (lv[i + 1] << 16);
  } else if (bits === 8) {
    for (let k = 0; k < whole; k++, i += 4) {
      words[w++] = (lv[i] & 0xff) | ((lv[i + 1] & 0xff) << 8) | ((lv[i + 2] & 0xff) << 16) |
        (lv[i + 3] << 24);
    }
  } else {
    for (let k = 0; k < whole; k++, i += 8) {
      words[w++] = (lv[i] & 0xf) | ((lv[i + 1] & 0xf) << 4) | ((lv[i + 2] & 0xf) << 8) |
        ((lv[i + 3] & 0xf) << 12) | ((lv[i + 4] & 0xf) << 16) | ((lv[i + 5] & 0xf) << 20) |
        ((lv[i + 6] & 0xf) << 24) | (lv[i + 7] << 28);
    }
  }
  e += whole << lg;
  if (e < end) packPartial(words, lv, i, e, end - e, bits, elMask, lg, sub);
}

let levelScratch = new Int32Array(1024);

/** Packs `n` levels (lv[i ...]) into the word holding elements [e, e + n): only their bits change. */
function packPartial(
  words: Int32Array,
  lv: Int32Array,
  i: number,
  e: number,
  n: number,
  bits: number,
  elMask: number,
  lg: number,
  sub: number,
): void {
  let acc = 0, mask = 0;
  for (let k = 0; k < n; k++) {
    const shift = ((e + k) & sub) * bits;
    acc |= (lv[i + k] & elMask) << shift;
    mask |= elMask << shift;
  }
  const w = e >>> lg;
  Atomics.and(words, w, ~mask);
  Atomics.or(words, w, acc);
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
