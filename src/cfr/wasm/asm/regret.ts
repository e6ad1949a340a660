// AssemblyScript source of the CFR engine's regret matching (built by `deno task build-wasm` into
// ../regret_wasm.ts). Twin of CfrSolver.current's f32-storage path: max(r, 0) summed per hand over
// the actions in order in f32, then sigma = max(r, 0) / sum (or f32(1 / A) where no regret is
// positive) in f32, so the results are bit-identical. Four hands per f32x4. Arguments are byte offsets into this module's memory (../regret.ts lays it out).

/**
 * Regret matching of an A x H block (action-major f32 at `reg`, row stride H) into `sig` (same
 * layout). Four hands at a time, the actions of each in order: their f32 sums stay in registers,
 * then the same four hands' probabilities are written. The last chunk of a row whose length is
 * not a multiple of 4 reads up to 3 elements past it (the next row's, or past the block's end: the
 * caller leaves 3 spare elements) and writes only its own lanes. `sum` and `den` are unused (kept
 * for the callers' layout).
 */
export function regretMatch(reg: usize, sig: usize, A: i32, H: i32, sum: usize, den: usize): void {
  match(reg, sig, A, H, 0, false);
}

/**
 * regretMatch fused with the opponent's reach step (the walk's actionReach for every action):
 * writes opp[h] * sigma[a * H + h] (f32 products of the same f32 probabilities, so bit-identical
 * to regretMatch then actionReach) into `out` (A x H), for a walk node whose acting player is not
 * the traverser: sigma itself is not kept, and the probabilities are multiplied while in registers
 * instead of stored and read back once per action. `opp` is read up to 3 elements past H.
 */
export function regretMatchReach(reg: usize, out: usize, A: i32, H: i32, opp: usize): void {
  match(reg, out, A, H, opp, true);
}

// One body for both: `reach` is a per-call flag (a well-predicted branch per chunk and action).
// max(r, 0) is f32x4.pmax(0, r) (0 < r ? r : 0: one x86 maxps, where Wasm's NaN-propagating
// f32x4.max takes several instructions; 16 % of regret matching on T1's blocks). It equals the
// twin's (r + |r|) * 0.5 for every r but NaN (+0 instead of NaN), which no solve reads: every
// update path refuses a non-finite result (`non_finite`) and the solve stops there.
function match(reg: usize, sig: usize, A: i32, H: i32, opp: usize, reach: bool): void {
  if (A == 2) {
    match2(reg, sig, H, opp, reach);
    return;
  }
  if (A == 3) {
    match3(reg, sig, H, opp, reach);
    return;
  }
  const zero4 = f32x4.splat(0);
  const uniform = f32x4.splat(<f32> (1 / <f64> A)), inf = f32x4.splat(Infinity);
  const stride = <usize> H << 2;
  for (let h = 0; h < H; h += 4) {
    const col = <usize> h << 2;
    const rest = H - h;
    if (reach && !v128.any_true(v128.load(opp + col))) {
      // No reach for these four hands (+0 bits): opp * sigma is +0 for every action (sigma is
      // finite and nonnegative while the regrets are finite), so the sums and divisions are
      // skipped. Deep in the tree most opponent reaches are 0.
      let q = sig + col;
      for (let a = 0; a < A; a++, q += stride) {
        if (rest >= 4) v128.store(q, zero4);
        else {
          store<f32>(q, 0);
          if (rest > 1) store<f32>(q, 0, 4);
          if (rest > 2) store<f32>(q, 0, 8);
        }
      }
      continue;
    }
    let sum = zero4;
    let p = reg + col;
    for (let a = 0; a < A; a++, p += stride) sum = f32x4.add(sum, f32x4.pmax(zero4, v128.load(p)));
    // f32 division is correctly rounded: it equals the twin's f64 division rounded to f32.
    const pos = f32x4.gt(sum, zero4);
    const d = v128.bitselect(sum, inf, pos), u = v128.bitselect(zero4, uniform, pos);
    p = reg + col;
    let q = sig + col;
    for (let a = 0; a < A; a++, p += stride, q += stride) {
      let v = f32x4.add(f32x4.div(f32x4.pmax(zero4, v128.load(p)), d), u);
      if (reach) v = f32x4.mul(v128.load(opp + col), v);
      if (rest >= 4) v128.store(q, v);
      else {
        store<f32>(q, f32x4.extract_lane(v, 0));
        if (rest > 1) store<f32>(q, f32x4.extract_lane(v, 1), 4);
        if (rest > 2) store<f32>(q, f32x4.extract_lane(v, 2), 8);
      }
    }
  }
}

// match for two and three actions (most of a postflop tree's nodes), straight-line: each chunk's
// regrets are loaded once and kept in registers for the sums and the probabilities (the generic
// loop reads them twice), with no loop over the actions. The same operations in the same order.

function match2(reg: usize, sig: usize, H: i32, opp: usize, reach: bool): void {
  const zero4 = f32x4.splat(0);
  const uniform = f32x4.splat(<f32> 0.5), inf = f32x4.splat(Infinity);
  const s1 = <usize> H << 2;
  for (let h = 0; h < H; h += 4) {
    const col = <usize> h << 2;
    const rest = H - h;
    let o = zero4;
    if (reach) {
      o = v128.load(opp + col);
      if (!v128.any_true(o)) {
        store4(sig + col, zero4, rest);
        store4(sig + col + s1, zero4, rest);
        continue;
      }
    }
    const p0 = f32x4.pmax(zero4, v128.load(reg + col));
    const p1 = f32x4.pmax(zero4, v128.load(reg + col + s1));
    const sum = f32x4.add(f32x4.add(zero4, p0), p1);
    const pos = f32x4.gt(sum, zero4);
    const d = v128.bitselect(sum, inf, pos), u = v128.bitselect(zero4, uniform, pos);
    let v0 = f32x4.add(f32x4.div(p0, d), u), v1 = f32x4.add(f32x4.div(p1, d), u);
    if (reach) v0 = f32x4.mul(o, v0), v1 = f32x4.mul(o, v1);
    store4(sig + col, v0, rest);
    store4(sig + col + s1, v1, rest);
  }
}

function match3(reg: usize, sig: usize, H: i32, opp: usize, reach: bool): void {
  const zero4 = f32x4.splat(0);
  const uniform = f32x4.splat(<f32> (1 / <f64> 3)), inf = f32x4.splat(Infinity);
  const s1 = <usize> H << 2, s2 = s1 << 1;
  for (let h = 0; h < H; h += 4) {
    const col = <usize> h << 2;
    const rest = H - h;
    let o = zero4;
    if (reach) {
      o = v128.load(opp + col);
      if (!v128.any_true(o)) {
        store4(sig + col, zero4, rest);
        store4(sig + col + s1, zero4, rest);
        store4(sig + col + s2, zero4, rest);
        continue;
      }
    }
    const p0 = f32x4.pmax(zero4, v128.load(reg + col));
    const p1 = f32x4.pmax(zero4, v128.load(reg + col + s1));
    const p2 = f32x4.pmax(zero4, v128.load(reg + col + s2));
    const sum = f32x4.add(f32x4.add(f32x4.add(zero4, p0), p1), p2);
    const pos = f32x4.gt(sum, zero4);
    const d = v128.bitselect(sum, inf, pos), u = v128.bitselect(zero4, uniform, pos);
    let v0 = f32x4.add(f32x4.div(p0, d), u), v1 = f32x4.add(f32x4.div(p1, d), u);
    let v2 = f32x4.add(f32x4.div(p2, d), u);
    if (reach) v0 = f32x4.mul(o, v0), v1 = f32x4.mul(o, v1), v2 = f32x4.mul(o, v2);
    store4(sig + col, v0, rest);
    store4(sig + col + s1, v1, rest);
    store4(sig + col + s2, v2, rest);
  }
}

/** Stores the first min(rest, 4) lanes of v at q (all four with one v128 store when rest >= 4). */
// @ts-ignore: decorator
function store4(q: usize, v: v128, rest: i32): void {
  if (rest >= 4) v128.store(q, v);
  else {
    store<f32>(q, f32x4.extract_lane(v, 0));
    if (rest > 1) store<f32>(q, f32x4.extract_lane(v, 1), 4);
    if (rest > 2) store<f32>(q, f32x4.extract_lane(v, 2), 8);
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
 * `out` H f32. out[h] = sum over a in order of sig * vals in f32; inst = act ? vals - out : 0
 * (f32); reg = reg * (reg > 0 ? alphaPos : betaNeg) + inst; strat = strat * gamma + sig (each
 * product and sum rounded to f32). The values four hands at a time through all the actions (the
 * sums in registers), then the updates row by row; `vals` is read only, `acc` scratch (4 * H
 * bytes rounded up to 16: each hand's active mask). Returns a finite value (0 or a max |x|) when
 * every updated regret and strategy value is finite, Infinity or NaN otherwise (the callers only
 * test `< Infinity`).
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
  const H4 = H & ~3, stride = <usize> H << 2;
  const zero = f32x4.splat(0);
  const va = f32x4.splat(alphaPos), vb = f32x4.splat(betaNeg), vg = f32x4.splat(gamma);
  // Lanes all ones while every result is finite (|x| <= the largest f32 is false for NaN and
  // infinity): cheaper than a NaN-propagating f32x4.max over |x|.
  const big = f32x4.splat(F32.MAX_VALUE);
  let fin = i32x4.splat(-1);
  // First the node's values, four hands at a time through the actions (the sums in registers),
  // and each chunk's active mask into `acc` (i32 per hand).
  // Two or three actions (most nodes) without the loop over them.
  const few = A == 2 || A == 3, s2 = stride << 1;
  let h = 0;
  for (; h < H4; h += 4) {
    const col = <usize> h << 2;
    let o = zero;
    if (few) {
      const s0 = sig + col, v0 = vals + col;
      o = f32x4.add(o, f32x4.mul(v128.load(s0), v128.load(v0)));
      o = f32x4.add(o, f32x4.mul(v128.load(s0 + stride), v128.load(v0 + stride)));
      if (A == 3) o = f32x4.add(o, f32x4.mul(v128.load(s0 + s2), v128.load(v0 + s2)));
    } else {
      let s0 = sig + col, v0 = vals + col;
      for (let a = 0; a < A; a++, s0 += stride, v0 += stride) {
        o = f32x4.add(o, f32x4.mul(v128.load(s0), v128.load(v0)));
      }
    }
    v128.store(out + col, o);
    v128.store(
      acc + col,
      i32x4.ne(
        i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(act + <usize> h))),
        i32x4.splat(0),
      ),
    );
  }
  // Then both updates row by row: the block's regrets and strategy (rows are consecutive) stream
  // through memory in address order, two long sequential streams instead of 2A short ones that
  // the hardware prefetchers pick up late. Each element takes the same operations as before.
  const rowEnd = <usize> H4 << 2;
  for (let a = 0; a < A; a++) {
    const ro = <usize> a * stride;
    const s0 = sig + ro, v0 = vals + ro, r0 = reg + ro, t0 = strat + ro;
    for (let col: usize = 0; col < rowEnd; col += 16) {
      const inst = v128.and(
        f32x4.sub(v128.load(v0 + col), v128.load(out + col)),
        v128.load(acc + col),
      );
      const old = v128.load(r0 + col);
      const f = v128.bitselect(va, vb, f32x4.gt(old, zero));
      const r = f32x4.add(f32x4.mul(old, f), inst);
      v128.store(r0 + col, r);
      const st = f32x4.add(f32x4.mul(v128.load(t0 + col), vg), v128.load(s0 + col));
      v128.store(t0 + col, st);
      fin = v128.and(fin, v128.and(f32x4.le(f32x4.abs(r), big), f32x4.le(f32x4.abs(st), big)));
    }
  }
  let ms: f32 = 0;
  for (; h < H; h++) {
    const col = <usize> h << 2;
    let ov: f32 = 0;
    for (let a = 0; a < A; a++) {
      const e = col + <usize> a * stride;
      ov += load<f32>(sig + e) * load<f32>(vals + e);
    }
    store<f32>(out + col, ov);
    const on = load<u8>(act + <usize> h) != 0;
    for (let a = 0; a < A; a++) {
      const e = col + <usize> a * stride;
      const inst: f32 = on ? load<f32>(vals + e) - ov : 0;
      const old = load<f32>(reg + e);
      const r = old * (old > 0 ? alphaPos : betaNeg) + inst;
      store<f32>(reg + e, r);
      ms = max<f32>(ms, abs<f32>(r));
      const st = load<f32>(strat + e) * gamma + load<f32>(sig + e);
      store<f32>(strat + e, st);
      ms = max<f32>(ms, abs<f32>(st));
    }
  }
  return i32x4.all_true(fin) ? ms : Infinity;
}
