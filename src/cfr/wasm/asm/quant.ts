// AssemblyScript source of the quantized storage codec of the Wasm walk (imported by
// src/poker/wasm/asm/walk.ts). Twin of src/quant/store.ts's decodeBlock and encodeBlockWithMax
// with the same f32 operations, rounding hash and packing, so the stores come out bit-identical:
// decode x = f32(level) * f32(scale * f32(1 / levels)); encode scale = max |x| (0 below 2^-100),
// t = x * f32(levels / scale), level = floor(t) + [u < frac(t)] (stochastic, u from
// quant/hash.ts's hash of seed, iteration, block, element) or round half to even (nearest),
// clamped. Format codes are quant/format.ts's (1 i16, 2 u16, 3 i8, 4 u8, 5 i4, 6 u4).
// Arguments are byte offsets into the module's memory; `start` and `len` are element counts.

/** quant/store.ts ZERO_BLOCK: 2^-100, exact in f32. */
const ZERO_BLOCK: f32 = 7.888609052210118e-31;

/** Largest integer level of format f. */
function levelsOf(f: i32): i32 {
  return f == 1 ? 32767 : f == 2 ? 65535 : f == 3 ? 127 : f == 4 ? 255 : f == 5 ? 7 : 15;
}

function mix32(x: u32): u32 {
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  return x ^ (x >> 16);
}

/** quant/store.ts hashPrefix: the rounding hash's state after (seed, iteration, block). */
function hashPrefix(seed: u32, iteration: u32, block: u32): u32 {
  let h = mix32(seed * 0x9e3779b9 + 0x632be5ab);
  h = mix32(h ^ iteration);
  return mix32(h ^ block);
}

/**
 * Decodes block b (elements [start, start + len) of the store at `words`, scale at scales + 4b)
 * of format f into f32 at `out`: a zero scale gives zeros without reading the payload.
 */
export function decodeBlock(
  f: i32,
  words: usize,
  scales: usize,
  b: u32,
  start: u32,
  len: i32,
  out: usize,
): void {
  const scale = load<f32>(scales + (<usize> b << 2));
  if (scale == 0) {
    memory.fill(out, 0, <usize> len << 2);
    return;
  }
  const d = scale * (<f32> 1 / <f32> levelsOf(f));
  const d4 = f32x4.splat(d);
  const n4 = len & ~3;
  let i = 0;
  if (f <= 2) {
    const src = words + (<usize> start << 1);
    if (f == 1) {
      for (; i < n4; i += 4) {
        const q = v128.load16x4_s(src + (<usize> i << 1));
        v128.store(out + (<usize> i << 2), f32x4.mul(f32x4.convert_i32x4_s(q), d4));
      }
      for (; i < len; i++) {
        store<f32>(out + (<usize> i << 2), <f32> load<i16>(src + (<usize> i << 1)) * d);
      }
    } else {
      for (; i < n4; i += 4) {
        const q = v128.load16x4_u(src + (<usize> i << 1));
        v128.store(out + (<usize> i << 2), f32x4.mul(f32x4.convert_i32x4_s(q), d4));
      }
      for (; i < len; i++) {
        store<f32>(out + (<usize> i << 2), <f32> load<u16>(src + (<usize> i << 1)) * d);
      }
    }
    return;
  }
  if (f <= 4) {
    const src = words + <usize> start;
    if (f == 3) {
      for (; i < n4; i += 4) {
        const q = i32x4.extend_low_i16x8_s(i16x8.extend_low_i8x16_s(v128.load32_zero(src + i)));
        v128.store(out + (<usize> i << 2), f32x4.mul(f32x4.convert_i32x4_s(q), d4));
      }
      for (; i < len; i++) store<f32>(out + (<usize> i << 2), <f32> load<i8>(src + i) * d);
    } else {
      for (; i < n4; i += 4) {
        const q = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(src + i)));
        v128.store(out + (<usize> i << 2), f32x4.mul(f32x4.convert_i32x4_s(q), d4));
      }
      for (; i < len; i++) store<f32>(out + (<usize> i << 2), <f32> load<u8>(src + i) * d);
    }
    return;
  }
  // 4 bits: element e is the nibble (e & 7) of word e >> 3 (the low nibble of byte e >> 1 when
  // e is even). Up to a word boundary one at a time, then 8 per word: the bytes' low and high
  // nibbles interleaved into one byte each, sign-extended for i4.
  const end = start + <u32> len;
  let e = start;
  const head = min<u32>((8 - (start & 7)) & 7, <u32> len);
  for (; e < start + head; e++) {
    store<f32>(out + (<usize> (e - start) << 2), nibble(f, words, e) * d);
  }
  const low = i8x16.splat(0x0f);
  for (; e + 8 <= end; e += 8) {
    const by = v128.load32_zero(words + (<usize> e >> 1));
    let n = i8x16.shuffle(
      v128.and(by, low),
      i8x16.shr_u(by, 4),
      0,
      16,
      1,
      17,
      2,
      18,
      3,
      19,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
    );
    let h: v128;
    if (f == 5) h = i16x8.extend_low_i8x16_s(i8x16.shr_s(i8x16.shl(n, 4), 4));
    else h = i16x8.extend_low_i8x16_u(n);
    const o = out + (<usize> (e - start) << 2);
    v128.store(o, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(h)), d4));
    v128.store(o + 16, f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(h)), d4));
  }
  for (; e < end; e++) store<f32>(out + (<usize> (e - start) << 2), nibble(f, words, e) * d);
}

/** The 4-bit level of element e (f 5: signed), as an f32. */
function nibble(f: i32, words: usize, e: u32): f32 {
  const w = load<u32>(words + (<usize> (e >> 3) << 2));
  const up = 28 - ((e & 7) << 2);
  return <f32> (f == 5 ? (<i32> (w << up)) >> 28 : <i32> ((w << up) >> 28));
}

/** One element's level (see the file comment): x at element i of the block, scalar. */
function level1(
  x: f32,
  inv: f32,
  i: u32,
  prefix: u32,
  stochastic: bool,
  lo: i32,
  hi: i32,
): i32 {
  const t = x * inv;
  let q: i32;
  if (stochastic) {
    const fl = floor<f32>(t);
    const c = <i32> ceil<f32>((t - fl) * 16777216);
    const u = <i32> (mix32(prefix ^ i) >> 8);
    q = <i32> fl + (u < c ? 1 : 0);
  } else q = <i32> nearest<f32>(t);
  return q > hi ? hi : q < lo ? lo : q;
}

/**
 * Encodes the f32 values at `vals` (all finite) into block b of format f (see decodeBlock):
 * stores the scale, then the levels. Byte-aligned formats write only their own lanes; with 4
 * bits, a word shared with a neighbouring block gets only this block's bits (atomically in the
 * threaded build, where another thread may encode the neighbour).
 */
export function encodeBlock(
  f: i32,
  words: usize,
  scales: usize,
  b: u32,
  start: u32,
  len: i32,
  vals: usize,
  seed: u32,
  iteration: u32,
  stochastic: bool,
): void {
  const n4 = len & ~3;
  let i = 0;
  let m4 = f32x4.splat(0);
  for (; i < n4; i += 4) m4 = f32x4.max(m4, f32x4.abs(v128.load(vals + (<usize> i << 2))));
  let mx = max<f32>(
    max<f32>(f32x4.extract_lane(m4, 0), f32x4.extract_lane(m4, 1)),
    max<f32>(f32x4.extract_lane(m4, 2), f32x4.extract_lane(m4, 3)),
  );
  for (; i < len; i++) mx = max<f32>(mx, abs<f32>(load<f32>(vals + (<usize> i << 2))));
  if (mx < ZERO_BLOCK) mx = 0;
  store<f32>(scales + (<usize> b << 2), mx);
  if (len == 0) return;
  const hi = levelsOf(f), lo = f & 1 ? -hi : 0;
  const inv: f32 = mx == 0 ? 0 : <f32> hi / mx;
  const prefix = hashPrefix(seed, iteration, b);
  const inv4 = f32x4.splat(inv), two24 = f32x4.splat(16777216), one = f32x4.splat(1);
  const lo4 = f32x4.splat(<f32> lo), hi4 = f32x4.splat(<f32> hi), pre4 = i32x4.splat(prefix);
  // An integer-valued f32 q with |q| < 2^22 plus 1.5 * 2^23 has the bits 0x4b400000 + q.
  const magic = f32x4.splat(12582912), magicBits = i32x4.splat(0x4b400000);
  const iota = i32x4(0, 1, 2, 3);
  const wide = f <= 2, nib = f >= 5;
  const base = words + (<usize> start << (wide ? 1 : 0));
  i = 0;
  for (; i < n4; i += 4) {
    const at = vals + (<usize> i << 2);
    const t = f32x4.mul(v128.load(at), inv4);
    let q: v128;
    if (stochastic) {
      // floor(t) + [u < ceil(frac * 2^24)], u the hash's top 24 bits: all exact in f32.
      const fl = f32x4.floor(t);
      const c = f32x4.ceil(f32x4.mul(f32x4.sub(t, fl), two24));
      let x = v128.xor(pre4, i32x4.add(i32x4.splat(i), iota));
      x = i32x4.mul(v128.xor(x, i32x4.shr_u(x, 16)), i32x4.splat(0x7feb352d));
      x = i32x4.mul(v128.xor(x, i32x4.shr_u(x, 15)), i32x4.splat(<i32> 0x846ca68b));
      x = i32x4.shr_u(v128.xor(x, i32x4.shr_u(x, 16)), 8);
      q = f32x4.add(fl, v128.and(f32x4.lt(f32x4.convert_i32x4_s(x), c), one));
    } else q = f32x4.nearest(t);
    q = f32x4.pmax(lo4, f32x4.pmin(hi4, q));
    q = i32x4.sub(f32x4.add(q, magic), magicBits);
    if (wide) {
      const h = f == 1 ? i16x8.narrow_i32x4_s(q, q) : i16x8.narrow_i32x4_u(q, q);
      v128.store64_lane(base + (<usize> i << 1), h, 0);
    } else if (!nib) {
      const h = i16x8.narrow_i32x4_s(q, q);
      const y = f == 3 ? i8x16.narrow_i16x8_s(h, h) : i8x16.narrow_i16x8_u(h, h);
      v128.store32_lane(base + <usize> i, y, 0);
    } else v128.store(at, q); // 4 bits: the levels over the values, packed below
  }
  for (; i < len; i++) {
    const at = vals + (<usize> i << 2);
    const q = level1(load<f32>(at), inv, i, prefix, stochastic, lo, hi);
    if (wide) store<u16>(base + (<usize> i << 1), q);
    else if (!nib) store<u8>(base + <usize> i, q);
    else store<i32>(at, q);
  }
  if (!nib) return;
  // 4 bits, one word (8 elements) at a time from the levels now at `vals`.
  const end = start + <u32> len;
  let e = start, k: u32 = 0;
  while (e < end) {
    const w = e >> 3, wEnd = min<u32>((w + 1) << 3, end);
    const p = words + (<usize> w << 2);
    if ((e & 7) == 0 && wEnd - e == 8) {
      const l = vals + (<usize> k << 2);
      store<u32>(
        p,
        (load<u32>(l) & 0xf) | ((load<u32>(l, 4) & 0xf) << 4) | ((load<u32>(l, 8) & 0xf) << 8) |
          ((load<u32>(l, 12) & 0xf) << 12) | ((load<u32>(l, 16) & 0xf) << 16) |
          ((load<u32>(l, 20) & 0xf) << 20) | ((load<u32>(l, 24) & 0xf) << 24) |
          (load<u32>(l, 28) << 28),
      );
      e += 8, k += 8;
      continue;
    }
    let acc: u32 = 0, mask: u32 = 0;
    for (; e < wEnd; e++, k++) {
      const sh = (e & 7) << 2;
      acc |= (load<u32>(vals + (<usize> k << 2)) & 0xf) << sh;
      mask |= <u32> 0xf << sh;
    }
    if (ASC_FEATURE_THREADS) {
      atomic.and<u32>(p, ~mask);
      atomic.or<u32>(p, acc);
    } else store<u32>(p, (load<u32>(p) & ~mask) | acc);
  }
}
