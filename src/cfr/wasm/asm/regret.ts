// AssemblyScript source of the CFR engine's regret matching (built by `deno task build-wasm` into
// ../regret_wasm.ts). Twin of CfrSolver.current's f32-storage path: max(r, 0) summed per hand over
// the actions in order in f64, then sigma = max(r, 0) / sum (or 1 / A where no regret is positive)
// in f64 and rounded to f32, so the results are bit-identical. Two hands per f64x2 lane pair, four
// per f32x4 load. Arguments are byte offsets into this module's memory (../regret.ts lays it out).

/**
 * Regret matching of an A x H block (action-major f32 at `reg`, row stride H) into `sig` (same
 * layout); `sum` and `den` are f64 scratch of H rounded up to 4. Rows are read and written four
 * hands at a time: a row's last chunk spills up to 3 lanes into the next row (read: junk lanes of
 * the scratch; written: rewritten when that row comes, rows go in order) and past the block's end
 * (the caller leaves 3 spare elements after both blocks).
 */
export function regretMatch(reg: usize, sig: usize, A: i32, H: i32, sum: usize, den: usize): void {
  const zero4 = f32x4.splat(0);
  const zero2 = f64x2.splat(0);
  const H4 = (H + 3) & ~3;
  for (let h = 0; h < H4; h += 2) store<v128>(sum + (<usize> h << 3), zero2);
  for (let a = 0; a < A; a++) {
    const row = reg + (<usize> (a * H) << 2);
    for (let h = 0; h < H4; h += 4) {
      const m = f32x4.max(v128.load(row + (<usize> h << 2)), zero4);
      const lo = f64x2.promote_low_f32x4(m);
      const hi = f64x2.promote_low_f32x4(v128.shuffle<u32>(m, m, 2, 3, 0, 1));
      const s = sum + (<usize> h << 3);
      store<v128>(s, f64x2.add(load<v128>(s), lo));
      store<v128>(s + 16, f64x2.add(load<v128>(s + 16), hi));
    }
  }
  const uniform = f64x2.splat(1 / <f64> A), inf = f64x2.splat(Infinity);
  for (let h = 0; h < H4; h += 2) {
    const s = load<v128>(sum + (<usize> h << 3));
    const pos = f64x2.gt(s, zero2);
    store<v128>(den + (<usize> h << 3), v128.bitselect(s, inf, pos));
    store<v128>(sum + (<usize> h << 3), v128.bitselect(zero2, uniform, pos));
  }
  for (let a = 0; a < A; a++) {
    const off = <usize> (a * H) << 2;
    const row = reg + off, out = sig + off;
    for (let h = 0; h < H4; h += 4) {
      const m = f32x4.max(v128.load(row + (<usize> h << 2)), zero4);
      const lo = f64x2.promote_low_f32x4(m);
      const hi = f64x2.promote_low_f32x4(v128.shuffle<u32>(m, m, 2, 3, 0, 1));
      const d = den + (<usize> h << 3), u = sum + (<usize> h << 3);
      const x = f32x4.demote_f64x2_zero(f64x2.add(f64x2.div(lo, load<v128>(d)), load<v128>(u)));
      const y = f32x4.demote_f64x2_zero(
        f64x2.add(f64x2.div(hi, load<v128>(d + 16)), load<v128>(u + 16)),
      );
      v128.store(out + (<usize> h << 2), v128.shuffle<u32>(x, y, 0, 1, 4, 5));
    }
  }
}

/**
 * The fused f32 update of n elements in place at `old` with `input` (twin of quant/update.ts's
 * updateBlock on f32 storage, each product and sum rounded to f32 as there): op 0 dcfr
 * (old * (old > 0 ? a : c) + input), 1 plus (max(0, old * a + input), NaN kept), 2 strategy
 * (old * a + input * c). n is a multiple of 4 (the caller pads). Returns max |x| over the results
 * (NaN when one is NaN, as Math.max does).
 */
export function update(op: i32, old: usize, input: usize, n: i32, a: f32, c: f32): f32 {
  const va = f32x4.splat(a), vc = f32x4.splat(c), zero = f32x4.splat(0);
  let mx = zero;
  const end = old + (<usize> n << 2);
  let q = input;
  if (op == 0) {
    for (let p = old; p < end; p += 16, q += 16) {
      const o = v128.load(p);
      const f = v128.bitselect(va, vc, f32x4.gt(o, zero));
      const r = f32x4.add(f32x4.mul(o, f), v128.load(q));
      v128.store(p, r);
      mx = nanMax(mx, f32x4.abs(r));
    }
  } else if (op == 1) {
    for (let p = old; p < end; p += 16, q += 16) {
      const r = f32x4.add(f32x4.mul(v128.load(p), va), v128.load(q));
      const x = v128.bitselect(zero, r, f32x4.lt(r, zero));
      v128.store(p, x);
      mx = nanMax(mx, f32x4.abs(x));
    }
  } else {
    for (let p = old; p < end; p += 16, q += 16) {
      const r = f32x4.add(f32x4.mul(v128.load(p), va), f32x4.mul(v128.load(q), vc));
      v128.store(p, r);
      mx = nanMax(mx, f32x4.abs(r));
    }
  }
  const m01 = nanMaxF(f32x4.extract_lane(mx, 0), f32x4.extract_lane(mx, 1));
  const m23 = nanMaxF(f32x4.extract_lane(mx, 2), f32x4.extract_lane(mx, 3));
  return nanMaxF(m01, m23);
}

// Wasm's f32x4.max and f32.max return NaN when either operand is NaN (like Math.max).
function nanMax(x: v128, y: v128): v128 {
  return f32x4.max(x, y);
}

function nanMaxF(x: f32, y: f32): f32 {
  return max<f32>(x, y);
}

/**
 * The traverser's node of a DCFR walk on f32 storage, fused (twin of CfrSolver.visit's tail:
 * mixValues, the instant regrets, the dcfr regret update and the strategy update, in that order
 * and with the same roundings, so bit-identical): `sig` and `vals` are A x H blocks (row stride
 * H), `act` H bytes (1: hand active), `reg` and `strat` the node's storage blocks (same layout),
 * `out` H f32 and `acc` H f64 scratch. out[h] = f32(sum over a in order of f64 sig * vals);
 * inst = act ? vals - out : 0 (f32); reg = reg * (reg > 0 ? alphaPos : betaNeg) + inst;
 * strat = strat * gamma + sig (each product and sum rounded to f32). `vals` is overwritten with
 * the instant regrets. Returns max |x| over the updated regrets and strategy (NaN when one is NaN).
 */
export function traverserDcfr(
  sig: usize,
  vals: usize,
  act: usize,
  out: usize,
  reg: usize,
  strat: usize,
  A: i32,
  H: i32,
  alphaPos: f32,
  betaNeg: f32,
  gamma: f32,
  acc: usize,
): f32 {
  const H4 = H & ~3;
  for (let h = 0; h < H; h++) store<f64>(acc + (<usize> h << 3), 0);
  for (let a = 0; a < A; a++) {
    const row = <usize> (a * H) << 2;
    const s0 = sig + row, v0 = vals + row;
    let h = 0;
    for (; h < H4; h += 4) {
      const o = <usize> h << 2;
      const s = v128.load(s0 + o), v = v128.load(v0 + o);
      const p = acc + (<usize> h << 3);
      const lo = f64x2.mul(f64x2.promote_low_f32x4(s), f64x2.promote_low_f32x4(v));
      const hi = f64x2.mul(
        f64x2.promote_low_f32x4(v128.shuffle<u32>(s, s, 2, 3, 0, 1)),
        f64x2.promote_low_f32x4(v128.shuffle<u32>(v, v, 2, 3, 0, 1)),
      );
      store<v128>(p, f64x2.add(load<v128>(p), lo));
      store<v128>(p + 16, f64x2.add(load<v128>(p + 16), hi));
    }
    for (; h < H; h++) {
      const o = <usize> h << 2, p = acc + (<usize> h << 3);
      store<f64>(p, load<f64>(p) + <f64> load<f32>(s0 + o) * <f64> load<f32>(v0 + o));
    }
  }
  for (let h = 0; h < H; h++) {
    store<f32>(out + (<usize> h << 2), <f32> load<f64>(acc + (<usize> h << 3)));
  }
  const zero = f32x4.splat(0), va = f32x4.splat(alphaPos), vb = f32x4.splat(betaNeg);
  const vg = f32x4.splat(gamma);
  let mx = zero;
  let ms: f32 = 0;
  for (let a = 0; a < A; a++) {
    const row = <usize> (a * H) << 2;
    const v0 = vals + row, r0 = reg + row, t0 = strat + row, s0 = sig + row;
    let h = 0;
    for (; h < H4; h += 4) {
      const o = <usize> h << 2;
      const on = i32x4.ne(
        i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(act + <usize> h))),
        i32x4.splat(0),
      );
      const inst = v128.and(f32x4.sub(v128.load(v0 + o), v128.load(out + o)), on);
      v128.store(v0 + o, inst);
      const old = v128.load(r0 + o);
      const f = v128.bitselect(va, vb, f32x4.gt(old, zero));
      const r = f32x4.add(f32x4.mul(old, f), inst);
      v128.store(r0 + o, r);
      mx = f32x4.max(mx, f32x4.abs(r));
      const st = f32x4.add(f32x4.mul(v128.load(t0 + o), vg), v128.load(s0 + o));
      v128.store(t0 + o, st);
      mx = f32x4.max(mx, f32x4.abs(st));
    }
    for (; h < H; h++) {
      const o = <usize> h << 2;
      const inst: f32 = load<u8>(act + <usize> h) != 0 ? load<f32>(v0 + o) - load<f32>(out + o) : 0;
      store<f32>(v0 + o, inst);
      const old = load<f32>(r0 + o);
      const r = old * (old > 0 ? alphaPos : betaNeg) + inst;
      store<f32>(r0 + o, r);
      ms = max<f32>(ms, abs<f32>(r));
      const st = load<f32>(t0 + o) * gamma + load<f32>(s0 + o);
      store<f32>(t0 + o, st);
      ms = max<f32>(ms, abs<f32>(st));
    }
  }
  const m01 = max<f32>(f32x4.extract_lane(mx, 0), f32x4.extract_lane(mx, 1));
  const m23 = max<f32>(f32x4.extract_lane(mx, 2), f32x4.extract_lane(mx, 3));
  return max<f32>(max<f32>(m01, m23), ms);
}
