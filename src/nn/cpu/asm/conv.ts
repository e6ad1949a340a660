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
 * A 3 x 3 convolution, c -> c channels, with its epilogue at listed output cells only, on
 * cell-major planes (a cell's c values side by side, cells in padded rows of rowW): for each cell
 * i of cells[0 .. ncell) (i32 output indices, row * rowW + column) and each o < c (a multiple of
 * 16), v = bias[o] + sum over ch < c, then the 9 taps in order, of w[ch][tap][o] times the input
 * at padded cell i + ky * rowW + kx, channel ch (wT: the weights as [ch][tap][o]); then
 * + res[i][o] where res != 0 (may be out), negatives to 0 where relu, stored at out[i][o]. Four
 * output channels per SIMD step and two cells at a time (each weight loaded once for both): the
 * same operations in the same order as convAcc then convFinish, so the same bits, for any set of
 * cells.
 */
export function convCells(
  x: usize,
  c: i32,
  rowW: i32,
  wT: usize,
  bias: usize,
  cells: usize,
  ncell: i32,
  out: usize,
  res: usize,
  relu: i32,
): void {
  const cb = <usize> c << 2;
  const r1 = <usize> rowW * cb, wTap = cb;
  const zero = f32x4.splat(0);
  for (let ob = 0; ob < c; ob += 16) {
    const bo = bias + (<usize> ob << 2), wb = wT + (<usize> ob << 2), oo = <usize> ob << 2;
    for (let k = 0; k < ncell; k += 2) {
      const i = <usize> load<i32>(cells + (<usize> k << 2)) * cb;
      // A lone last cell is paired with itself (computed twice, stored once).
      const j = k + 1 < ncell ? <usize> load<i32>(cells + (<usize> (k + 1) << 2)) * cb : i;
      let a0 = v128.load(bo), a1 = v128.load(bo, 16), a2 = v128.load(bo, 32);
      let a3 = v128.load(bo, 48);
      let b0 = a0, b1 = a1, b2 = a2, b3 = a3;
      let xp = x + i, xq = x + j, wp = wb;
      for (let ch = 0; ch < c; ch++) {
        // The taps in convAcc's order: kernel rows, then columns.
        for (let ky: usize = 0; ky < 3; ky++) {
          const rp = xp + ky * r1, rq = xq + ky * r1;
          for (let kx: usize = 0; kx < 3; kx++) {
            const u = v128.load32_splat(rp + kx * cb), v = v128.load32_splat(rq + kx * cb);
            a0 = f32x4.add(a0, f32x4.mul(v128.load(wp), u));
            a1 = f32x4.add(a1, f32x4.mul(v128.load(wp, 16), u));
            a2 = f32x4.add(a2, f32x4.mul(v128.load(wp, 32), u));
            a3 = f32x4.add(a3, f32x4.mul(v128.load(wp, 48), u));
            b0 = f32x4.add(b0, f32x4.mul(v128.load(wp), v));
            b1 = f32x4.add(b1, f32x4.mul(v128.load(wp, 16), v));
            b2 = f32x4.add(b2, f32x4.mul(v128.load(wp, 32), v));
            b3 = f32x4.add(b3, f32x4.mul(v128.load(wp, 48), v));
            wp += wTap;
          }
        }
        xp += 4;
        xq += 4;
      }
      put16(a0, a1, a2, a3, out + i + oo, res != 0 ? res + i + oo : 0, relu, zero);
      if (j != i) put16(b0, b1, b2, b3, out + j + oo, res != 0 ? res + j + oo : 0, relu, zero);
    }
  }
}

// Stores 16 consecutive outputs at q: each plus the value at the same place from r (r != 0),
// then negatives to 0 (relu), as convFinish.
// @ts-ignore: decorator
function put16(
  a0: v128,
  a1: v128,
  a2: v128,
  a3: v128,
  q: usize,
  r: usize,
  relu: i32,
  zero: v128,
): void {
  if (r != 0) {
    a0 = f32x4.add(a0, v128.load(r));
    a1 = f32x4.add(a1, v128.load(r, 16));
    a2 = f32x4.add(a2, v128.load(r, 32));
    a3 = f32x4.add(a3, v128.load(r, 48));
  }
  if (relu != 0) {
    a0 = f32x4.pmax(a0, zero);
    a1 = f32x4.pmax(a1, zero);
    a2 = f32x4.pmax(a2, zero);
    a3 = f32x4.pmax(a3, zero);
  }
  v128.store(q, a0);
  v128.store(q, a1, 16);
  v128.store(q, a2, 32);
  v128.store(q, a3, 48);
}

/**
 * On cell-major planes of c values a cell (c a multiple of 4): fills[f] = (start, count, src) i32
 * triples, each copying cell src's values to the cells [start, start + count) (a row's cells that
 * equal one of its computed cells).
 */
export function fillCells(out: usize, c: i32, fills: usize, nfill: i32): void {
  const cb = <usize> c << 2;
  for (let f = 0; f < nfill; f++) {
    const e = fills + <usize> (f * 12);
    const s = out + <usize> load<i32>(e, 8) * cb;
    let d = out + <usize> load<i32>(e) * cb;
    for (let n = load<i32>(e, 4); n > 0; n--) {
      for (let k: usize = 0; k < cb; k += 16) v128.store(d + k, v128.load(s + k));
      d += cb;
    }
  }
}

/**
 * Plain planes [c][h][w] at src to cell-major padded planes at dst: value (ch, r, q) at cell
 * (r + 1) * rowW + q + 1, channel ch; the (h + 2) * rowW cells' other values zeroed.
 */
export function padCells(src: usize, c: i32, h: i32, w: i32, dst: usize, rowW: i32): void {
  memory.fill(dst, 0, <usize> ((h + 2) * rowW * c) << 2);
  for (let ch = 0; ch < c; ch++) {
    for (let r = 0; r < h; r++) {
      const s = src + (<usize> ((ch * h + r) * w) << 2);
      const d = dst + (<usize> (((r + 1) * rowW + 1) * c + ch) << 2);
      for (let q = 0; q < w; q++) {
        store<f32>(d + (<usize> (q * c) << 2), load<f32>(s + (<usize> q << 2)));
      }
    }
  }
}

/** The inverse of padCells: cell-major padded planes at src to plain planes [c][h][w] at dst. */
export function unpadCells(src: usize, c: i32, h: i32, w: i32, rowW: i32, dst: usize): void {
  for (let ch = 0; ch < c; ch++) {
    for (let r = 0; r < h; r++) {
      const s = src + (<usize> (((r + 1) * rowW + 1) * c + ch) << 2);
      const d = dst + (<usize> ((ch * h + r) * w) << 2);
      for (let q = 0; q < w; q++) {
        store<f32>(d + (<usize> q << 2), load<f32>(s + (<usize> (q * c) << 2)));
      }
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
