// Quantized storage codec shared by every kernel that reads or writes regrets and strategies.
// Twin of src/quant/{format,hash,store}.ts: results must match bit for bit.
// FMT: 0 f32, 1 i16, 2 u16, 3 i8, 4 u8, 5 i4, 6 u4.

override FMT: u32 = 0u;

fn fmt_bits() -> u32 {
  switch FMT {
    case 1u, 2u: { return 16u; }
    case 3u, 4u: { return 8u; }
    case 5u, 6u: { return 4u; }
    default: { return 32u; }
  }
}

fn fmt_signed() -> bool { return FMT == 1u || FMT == 3u || FMT == 5u; }

fn fmt_levels() -> f32 {
  switch FMT {
    case 1u: { return 32767.0; }
    case 2u: { return 65535.0; }
    case 3u: { return 127.0; }
    case 4u: { return 255.0; }
    case 5u: { return 7.0; }
    case 6u: { return 15.0; }
    default: { return 0.0; }
  }
}

fn fmt_per_word() -> u32 { return 32u / fmt_bits(); }

// lowbias32 (Chris Wellons), the finalizer of the rounding hash.
fn mix32(v: u32) -> u32 {
  var x = v;
  x = x ^ (x >> 16u);
  x = x * 0x7feb352du;
  x = x ^ (x >> 15u);
  x = x * 0x846ca68bu;
  return x ^ (x >> 16u);
}

fn rounding_uniform(seed: u32, iteration: u32, block: u32, element: u32) -> f32 {
  var h = mix32(seed * 0x9e3779b9u + 0x632be5abu);
  h = mix32(h ^ iteration);
  h = mix32(h ^ block);
  h = mix32(h ^ element);
  return f32(h >> 8u) * 5.9604644775390625e-8;
}

// Integer level of sub-element k of word w (sign-extended for signed formats).
fn level_of(w: u32, k: u32) -> i32 {
  let bits = fmt_bits();
  let up = 32u - bits - k * bits;
  if (fmt_signed()) { return bitcast<i32>(w << up) >> (32u - bits); }
  return i32((w << up) >> (32u - bits));
}

fn put_level(w: u32, k: u32, q: i32) -> u32 {
  let bits = fmt_bits();
  let shift = k * bits;
  let mask = ((1u << bits) - 1u) << shift;
  return (w & ~mask) | ((bitcast<u32>(q) << shift) & mask);
}

// f32(1 / levels) as exact literals (a runtime division could be off by 2.5 ULP).
fn fmt_inv_levels() -> f32 {
  switch FMT {
    case 1u: { return 0.000030518509447574615; }
    case 2u: { return 0.000015259021893143654; }
    case 3u: { return 0.0078740157186985016; }
    case 4u: { return 0.0039215688593685627; }
    case 5u: { return 0.14285714924335480; }
    case 6u: { return 0.066666670143604279; }
    default: { return 0.0; }
  }
}

// Decode factor scale * f32(1 / levels).
fn decode_factor(scale: f32, zero: u32) -> f32 { return nofuse(scale * fmt_inv_levels(), zero); }

fn is_finite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }

// Breaks a * b + c patterns so no compiler fuses them into fma: `zero` is a runtime 0 the compiler
// cannot see through, keeping every product rounded on its own as the TypeScript twin does.
fn nofuse(x: f32, zero: u32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ zero); }

// Correctly rounded a / b for positive normal operands with a normal quotient, in integer
// arithmetic: WGSL allows the division 2.5 ULP of error, and float tricks that recover the exact
// quotient (Dekker residuals) depend on the driver not rewriting them, which NVIDIA's Vulkan
// compiler was seen to do. A 24-step restoring division of the mantissas needs neither.
fn div_rn(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  let mb = (ub & 0x7fffffu) | 0x800000u;
  var r = (ua & 0x7fffffu) | 0x800000u;
  var e = i32(ua >> 23u) - i32(ub >> 23u) + 127;
  if (r < mb) {
    r = r << 1u;
    e = e - 1;
  }
  var q = 0u;
  for (var i = 0u; i < 24u; i++) {
    q = q << 1u;
    if (r >= mb) {
      r = r - mb;
      q = q | 1u;
    }
    r = r << 1u;
  }
  // r is twice the remainder: round half to even.
  if (r > mb || (r == mb && (q & 1u) == 1u)) { q = q + 1u; }
  if (q == 0x1000000u) {
    q = 0x800000u;
    e = e + 1;
  }
  if (e <= 0 || e >= 255) { return a / b; }
  return bitcast<f32>((u32(e) << 23u) | (q & 0x7fffffu));
}

// Level for value v under scale inverse inv: stochastic floor(t) + [u < frac(t)] or round-half-even.
fn encode_level(v: f32, inv: f32, u: f32, stochastic: bool, zero: u32) -> i32 {
  let t = nofuse(v * inv, zero);
  let levels = fmt_levels();
  var q: f32;
  if (stochastic) {
    let f = floor(t);
    // u < frac(t), exactly as the CPU twin (which works in f64): t - f is exact in f32 except for
    // f = -1 with t in (-0.5, 0), where t + 1 would round; there compare u - 1 < t (u - 1 is exact).
    q = select(f, f + 1.0, select(u < t - f, nofuse(u - 1.0, zero) < t, f == -1.0));
  } else {
    q = round(t);
  }
  let lo = select(0.0, -levels, fmt_signed());
  return i32(clamp(q, lo, levels));
}
