// AssemblyScript source of the network's convolution kernels (built by `deno task build-wasm` into
// ../conv_wasm.ts). Twins of conv2dFast's inner loops in ../fast.ts with 128-bit SIMD: four output
// pixels per step. All arguments are byte offsets into this module's memory, which the JS side
// lays out (see ../conv_simd.ts): input planes zero-padded (rows of `rowW` values, `stride` values
// per plane, slack after the last), outputs in the same padded-width rows (`len` values per
// channel, a multiple of 4); nothing is allocated here.

/**
 * out[o] += sum over c and the k x k taps of w[o, c, tap] * x[c] shifted by the tap, for every
 * output channel o < co (out holds `co` rows of `len` values, initialised by the caller).
 */
export function convAcc(
  x: usize,
  ci: i32,
  stride: i32,
  w: usize,
  co: i32,
  k: i32,
  rowW: i32,
  len: i32,
  out: usize,
): void {
  const kk = k * k;
  const r1 = <usize> (rowW << 2), r2 = <usize> (rowW << 3);
  for (let o = 0; o < co; o++) {
    const acc = out + <usize> (o * len) * 4;
    for (let c = 0; c < ci; c++) {
      const xo = x + <usize> (c * stride) * 4;
      const wo = w + <usize> ((o * ci + c) * kk) * 4;
      if (k == 3) {
        const w0 = f32x4.splat(load<f32>(wo)), w1 = f32x4.splat(load<f32>(wo, 4));
        const w2 = f32x4.splat(load<f32>(wo, 8)), w3 = f32x4.splat(load<f32>(wo, 12));
        const w4 = f32x4.splat(load<f32>(wo, 16)), w5 = f32x4.splat(load<f32>(wo, 20));
        const w6 = f32x4.splat(load<f32>(wo, 24)), w7 = f32x4.splat(load<f32>(wo, 28));
        const w8 = f32x4.splat(load<f32>(wo, 32));
        for (let i = 0; i < len; i += 4) {
          const p = xo + (<usize> i << 2);
          const q = p + r1, s = p + r2;
          let a = v128.load(acc + (<usize> i << 2));
          a = f32x4.add(a, f32x4.mul(w0, v128.load(p)));
          a = f32x4.add(a, f32x4.mul(w1, v128.load(p, 4)));
          a = f32x4.add(a, f32x4.mul(w2, v128.load(p, 8)));
          a = f32x4.add(a, f32x4.mul(w3, v128.load(q)));
          a = f32x4.add(a, f32x4.mul(w4, v128.load(q, 4)));
          a = f32x4.add(a, f32x4.mul(w5, v128.load(q, 8)));
          a = f32x4.add(a, f32x4.mul(w6, v128.load(s)));
          a = f32x4.add(a, f32x4.mul(w7, v128.load(s, 4)));
          a = f32x4.add(a, f32x4.mul(w8, v128.load(s, 8)));
          v128.store(acc + (<usize> i << 2), a);
        }
        continue;
      }
      for (let ky = 0; ky < k; ky++) {
        for (let kx = 0; kx < k; kx++) {
          const wv = f32x4.splat(load<f32>(wo + <usize> (ky * k + kx) * 4));
          const xs = xo + <usize> (ky * rowW + kx) * 4;
          for (let i = 0; i < len; i += 4) {
            const ao = acc + (<usize> i << 2);
            v128.store(
              ao,
              f32x4.add(v128.load(ao), f32x4.mul(wv, v128.load(xs + (<usize> i << 2)))),
            );
          }
        }
      }
    }
  }
}

/**
 * A 3 x 3 convolution with its epilogue at listed output cells only, four output channels per
 * SIMD lane group and two cells at a time (the weights loaded once for both): for each cell i of
 * cells[0 .. ncell) (i32 output indices, as convAcc's) and each o < co (a multiple of 16),
 * v = bias[o] + sum over c < ci, then the 9 taps in order, of w[c][tap][o] * x[c][i + tap offset]
 * (wT: the weights as [c][tap][o]); then + res[o * ostride + i] where res != 0, negatives to 0
 * where relu, stored at out[o * ostride + i]. The same operations in the same order as convAcc
 * then convFinish, so the same bits; the cells may be any set, with no rounding to groups of four.
 */
export function convCells(
  x: usize,
  ci: i32,
  stride: i32,
  wT: usize,
  co: i32,
  rowW: i32,
  bias: usize,
  cells: usize,
  ncell: i32,
  out: usize,
  ostride: i32,
  res: usize,
  relu: i32,
): void {
  const r1 = <usize> (rowW << 2), r2 = <usize> (rowW << 3);
  const os = <usize> ostride << 2, cs = <usize> stride << 2, wTap = <usize> co << 2;
  for (let ob = 0; ob < co; ob += 16) {
    const bo = bias + (<usize> ob << 2), wb = wT + (<usize> ob << 2);
    const ob4 = <usize> ob * os;
    for (let k = 0; k < ncell; k += 2) {
      const i = <usize> load<i32>(cells + (<usize> k << 2)) << 2;
      // A lone last cell is paired with itself (computed twice, stored once).
      const j = k + 1 < ncell ? <usize> load<i32>(cells + (<usize> (k + 1) << 2)) << 2 : i;
      let a0 = v128.load(bo), a1 = v128.load(bo, 16), a2 = v128.load(bo, 32);
      let a3 = v128.load(bo, 48);
      let b0 = a0, b1 = a1, b2 = a2, b3 = a3;
      let xp = x + i, xq = x + j, wp = wb;
      for (let c = 0; c < ci; c++) {
        {
          // tap 0
          const u = v128.load32_splat(xp, 0), v = v128.load32_splat(xq, 0);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 1
          const u = v128.load32_splat(xp, 4), v = v128.load32_splat(xq, 4);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 2
          const u = v128.load32_splat(xp, 8), v = v128.load32_splat(xq, 8);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 3
          const u = v128.load32_splat(xp + r1), v = v128.load32_splat(xq + r1);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 4
          const u = v128.load32_splat(xp + r1 + 4), v = v128.load32_splat(xq + r1 + 4);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 5
          const u = v128.load32_splat(xp + r1 + 8), v = v128.load32_splat(xq + r1 + 8);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 6
          const u = v128.load32_splat(xp + r2), v = v128.load32_splat(xq + r2);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 7
          const u = v128.load32_splat(xp + r2 + 4), v = v128.load32_splat(xq + r2 + 4);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        {
          // tap 8
          const u = v128.load32_splat(xp + r2 + 8), v = v128.load32_splat(xq + r2 + 8);
          const w0 = v128.load(wp), w1 = v128.load(wp, 16), w2 = v128.load(wp, 32);
          const w3 = v128.load(wp, 48);
          a0 = f32x4.add(a0, f32x4.mul(w0, u));
          a1 = f32x4.add(a1, f32x4.mul(w1, u));
          a2 = f32x4.add(a2, f32x4.mul(w2, u));
          a3 = f32x4.add(a3, f32x4.mul(w3, u));
          b0 = f32x4.add(b0, f32x4.mul(w0, v));
          b1 = f32x4.add(b1, f32x4.mul(w1, v));
          b2 = f32x4.add(b2, f32x4.mul(w2, v));
          b3 = f32x4.add(b3, f32x4.mul(w3, v));
          wp += wTap;
        }
        xp += cs;
        xq += cs;
      }
      const oi = out + ob4 + i, ri = res != 0 ? res + ob4 + i : 0;
      put4(a0, oi, ri, os, relu);
      put4(a1, oi + 4 * os, ri != 0 ? ri + 4 * os : 0, os, relu);
      put4(a2, oi + 8 * os, ri != 0 ? ri + 8 * os : 0, os, relu);
      put4(a3, oi + 12 * os, ri != 0 ? ri + 12 * os : 0, os, relu);
      if (j != i) {
        const oj = out + ob4 + j, rj = res != 0 ? res + ob4 + j : 0;
        put4(b0, oj, rj, os, relu);
        put4(b1, oj + 4 * os, rj != 0 ? rj + 4 * os : 0, os, relu);
        put4(b2, oj + 8 * os, rj != 0 ? rj + 8 * os : 0, os, relu);
        put4(b3, oj + 12 * os, rj != 0 ? rj + 12 * os : 0, os, relu);
      }
    }
  }
}

// Stores the four lanes of v at q, q + os, q + 2 os, q + 3 os, each plus the value at the same
// place from r (when r != 0), then negatives to 0 (relu): convFinish's steps, lane by lane.
// @ts-ignore: decorator
function put4(v: v128, q: usize, r: usize, os: usize, relu: i32): void {
  put1(f32x4.extract_lane(v, 0), q, r, relu);
  put1(f32x4.extract_lane(v, 1), q + os, r != 0 ? r + os : 0, relu);
  put1(f32x4.extract_lane(v, 2), q + 2 * os, r != 0 ? r + 2 * os : 0, relu);
  put1(f32x4.extract_lane(v, 3), q + 3 * os, r != 0 ? r + 3 * os : 0, relu);
}

// One value of put4 (v < 0 ? 0 : v is f32x4.pmax(v, 0): NaN and -0 kept).
// @ts-ignore: decorator
function put1(v: f32, q: usize, r: usize, relu: i32): void {
  if (r != 0) v = v + load<f32>(r);
  if (relu != 0 && v < 0) v = 0;
  store<f32>(q, v);
}

/**
 * For c < co planes of `ostride` values from `out`: fills[f] = (start, count, src) i32 triples,
 * each writing plane value src over [start, start + count) (a row's cells that equal one of its
 * computed cells).
 */
export function fillSegs(out: usize, co: i32, ostride: i32, fills: usize, nfill: i32): void {
  for (let o = 0; o < co; o++) {
    const q = out + <usize> (o * ostride) * 4;
    for (let f = 0; f < nfill; f++) {
      const e = fills + <usize> (f * 12);
      const i0 = load<i32>(e), i1 = i0 + load<i32>(e, 4);
      const v = load<f32>(q + (<usize> load<i32>(e, 8) << 2));
      const vv = f32x4.splat(v);
      let i = i0;
      for (; i + 4 <= i1; i += 4) v128.store(q + (<usize> i << 2), vv);
      for (; i < i1; i++) store<f32>(q + (<usize> i << 2), v);
    }
  }
}

/**
 * The epilogue of convAcc's sums kept in this memory: for o < co and i < len (a multiple of 4),
 * out[o * ostride + i] = acc[o * len + i] (+ res[o * ostride + i] where res != 0; then
 * negatives to 0 where relu; then and-ed with mask[i] where mask != 0, so scratch columns come
 * out as exact zeros and the output can serve as the next layer's zero-padded input). `res` may
 * be `out` (each value is read by the step that overwrites it).
 */
export function convFinish(
  acc: usize,
  co: i32,
  len: i32,
  out: usize,
  ostride: i32,
  res: usize,
  relu: i32,
  mask: usize,
): void {
  const zero = f32x4.splat(0);
  for (let o = 0; o < co; o++) {
    const a = acc + <usize> (o * len) * 4, q = out + <usize> (o * ostride) * 4;
    const r = res + <usize> (o * ostride) * 4;
    for (let i = 0; i < len; i += 4) {
      const at = <usize> i << 2;
      let v = v128.load(a + at);
      if (res != 0) v = f32x4.add(v, v128.load(r + at));
      // pmax(v, 0) is v < 0 ? 0 : v, as the TypeScript epilogue (NaN and -0 kept).
      if (relu != 0) v = f32x4.pmax(v, zero);
      if (mask != 0) v = v128.and(v, v128.load(mask + at));
      v128.store(q + at, v);
    }
  }
}

/**
 * Copies c planes of h x w values stored one after another from `src` into a zero-padded layout
 * at `dst`: plane ch from dst + ch * stride, rows of rowW values, value (r, q) at row r + pad,
 * column q + pad; everything else in the c * stride values is zeroed.
 */
export function padPlanes(
  src: usize,
  c: i32,
  h: i32,
  w: i32,
  dst: usize,
  stride: i32,
  rowW: i32,
  pad: i32,
): void {
  memory.fill(dst, 0, <usize> (c * stride) << 2);
  for (let ch = 0; ch < c; ch++) {
    for (let r = 0; r < h; r++) {
      const s = src + (<usize> ((ch * h + r) * w) << 2);
      const d = dst + (<usize> (ch * stride + (r + pad) * rowW + pad) << 2);
      copyRow(s, d, w);
    }
  }
}

/**
 * The inverse of padPlanes with pad 0: copies value (r, q) of plane ch, at
 * src + ch * stride + r * rowW + q, to dst's c planes of h x w values one after another.
 */
export function unpadPlanes(
  src: usize,
  c: i32,
  h: i32,
  w: i32,
  stride: i32,
  rowW: i32,
  dst: usize,
): void {
  for (let ch = 0; ch < c; ch++) {
    for (let r = 0; r < h; r++) {
      const s = src + (<usize> (ch * stride + r * rowW) << 2);
      const d = dst + (<usize> ((ch * h + r) * w) << 2);
      copyRow(s, d, w);
    }
  }
}

/**
 * dw[o, c, tap] += sum over i < len of g[o][i] * x[c][i + tap offset] (g in padded-width rows,
 * zero in the scratch columns and past the last row), for o < co and c < ci.
 */
export function convWeightAcc(
  x: usize,
  ci: i32,
  stride: i32,
  g: usize,
  co: i32,
  k: i32,
  rowW: i32,
  len: i32,
  dw: usize,
): void {
  const kk = k * k;
  for (let o = 0; o < co; o++) {
    const go = g + <usize> (o * len) * 4;
    for (let c = 0; c < ci; c++) {
      const xo = x + <usize> (c * stride) * 4;
      const wo = dw + <usize> ((o * ci + c) * kk) * 4;
      for (let ky = 0; ky < k; ky++) {
        const xr = xo + <usize> (ky * rowW) * 4;
        if (k == 3) {
          let s0 = f32x4.splat(0), s1 = f32x4.splat(0), s2 = f32x4.splat(0);
          for (let i = 0; i < len; i += 4) {
            const gv = v128.load(go + (<usize> i << 2));
            const p = xr + (<usize> i << 2);
            s0 = f32x4.add(s0, f32x4.mul(gv, v128.load(p)));
            s1 = f32x4.add(s1, f32x4.mul(gv, v128.load(p, 4)));
            s2 = f32x4.add(s2, f32x4.mul(gv, v128.load(p, 8)));
          }
          const t = wo + <usize> (ky * 3) * 4;
          store<f32>(t, load<f32>(t) + hsum(s0));
          store<f32>(t, load<f32>(t, 4) + hsum(s1), 4);
          store<f32>(t, load<f32>(t, 8) + hsum(s2), 8);
          continue;
        }
        for (let kx = 0; kx < k; kx++) {
          let s = f32x4.splat(0);
          const xs = xr + <usize> kx * 4;
          for (let i = 0; i < len; i += 4) {
            s = f32x4.add(
              s,
              f32x4.mul(v128.load(go + (<usize> i << 2)), v128.load(xs + (<usize> i << 2))),
            );
          }
          const t = wo + <usize> (ky * k + kx) * 4;
          store<f32>(t, load<f32>(t) + hsum(s));
        }
      }
    }
  }
}

/** Copies w floats from s to d, four at a time, then one at a time (nothing written past d + w). */
// @ts-ignore: decorator

function copyRow(s: usize, d: usize, w: i32): void {
  let q = 0;
  for (; q + 4 <= w; q += 4) v128.store(d + (<usize> q << 2), v128.load(s + (<usize> q << 2)));
  for (; q < w; q++) store<f32>(d + (<usize> q << 2), load<f32>(s + (<usize> q << 2)));
}

/** Sum of the four lanes of an f32x4. */
function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) +
    f32x4.extract_lane(v, 3);
}
