// Fast CPU twins of the reference convolution and fully connected ops (same signatures and results
// up to f32 rounding). The reference loops read `tensor.data` inside their inner loops and
// accumulate through Float64Array scratch rows; these hoist every array into a local, run the
// 3 x 3 convolution as one contiguous loop per (input, output) channel pair over a zero-padded
// copy of the input (all 9 taps per iteration, no bounds tests), and write gradients in place.
import { type CpuTensor, cpuTensor } from "../tensor.ts";
import { checkConv, convGeometry } from "./conv.ts";
import { KibitzError } from "../../errors.ts";

/**
 * Copies the [n, c, h, w] planes into a zero-padded layout of row width w + 2 pad, one plane every
 * `stride` values (the padded plane plus slack, so every tap of the padded-width output reads in
 * bounds).
 */
function padPlanes(
  src: Float32Array,
  planes: number,
  h: number,
  w: number,
  pad: number,
): { p: Float32Array; wp: number; stride: number } {
  const wp = w + 2 * pad, hp = h + 2 * pad;
  const stride = hp * wp + 2 * pad;
  const p = new Float32Array(planes * stride);
  for (let c = 0; c < planes; c++) {
    const so = c * h * w, po = c * stride + pad * wp + pad;
    for (let r = 0; r < h; r++) {
      p.set(src.subarray(so + r * w, so + r * w + w), po + r * wp);
    }
  }
  return { p, wp, stride };
}

/**
 * Adds conv(x plane, one [k, k] kernel) to `acc` in padded-width layout (h rows of wp values; the
 * columns past w are scratch). `xo` is the padded plane's start, `wo` the kernel's.
 */
function accumulateTaps(
  acc: Float32Array,
  xp: Float32Array,
  xo: number,
  wt: Float32Array,
  wo: number,
  k: number,
  wp: number,
  len: number,
): void {
  if (k === 3) {
    const w0 = wt[wo], w1 = wt[wo + 1], w2 = wt[wo + 2];
    const w3 = wt[wo + 3], w4 = wt[wo + 4], w5 = wt[wo + 5];
    const w6 = wt[wo + 6], w7 = wt[wo + 7], w8 = wt[wo + 8];
    const r1 = xo + wp, r2 = xo + 2 * wp;
    for (let i = 0; i < len; i++) {
      acc[i] += w0 * xp[xo + i] + w1 * xp[xo + i + 1] + w2 * xp[xo + i + 2] +
        w3 * xp[r1 + i] + w4 * xp[r1 + i + 1] + w5 * xp[r1 + i + 2] +
        w6 * xp[r2 + i] + w7 * xp[r2 + i + 1] + w8 * xp[r2 + i + 2];
    }
    return;
  }
  for (let ky = 0; ky < k; ky++) {
    for (let kx = 0; kx < k; kx++) {
      const wv = wt[wo + ky * k + kx], s = xo + ky * wp + kx;
      if (wv === 0) continue;
      for (let i = 0; i < len; i++) acc[i] += wv * xp[s + i];
    }
  }
}

/**
 * Fast 2-D convolution, stride 1, same padding (the twin of conv2d), with an optional per-channel
 * bias, residual and ReLU epilogue (the twin of convFused when given).
 */
export function conv2dFast(
  x: CpuTensor,
  w: CpuTensor,
  bias: Float32Array | null = null,
  res: Float32Array | null = null,
  relu = false,
): CpuTensor {
  const [n, ci, h, wd] = x.shape;
  checkConv(x.shape, w.shape);
  const co = w.shape[0];
  const { k, pad } = convGeometry(w.shape);
  const hw = h * wd, kk = k * k;
  const y = cpuTensor([n, co, h, wd]);
  const yd = y.data, wt = w.data;
  for (let b = 0; b < n; b++) {
    const { p, wp, stride } = padPlanes(
      x.data.subarray(b * ci * hw, (b + 1) * ci * hw),
      ci,
      h,
      wd,
      pad,
    );
    const len = h * wp;
    const acc = new Float32Array(len);
    for (let o = 0; o < co; o++) {
      acc.fill(bias ? bias[o] : 0);
      for (let c = 0; c < ci; c++) {
        accumulateTaps(acc, p, c * stride, wt, (o * ci + c) * kk, k, wp, len);
      }
      const yo = (b * co + o) * hw;
      for (let r = 0; r < h; r++) {
        const ao = r * wp, dst = yo + r * wd;
        for (let c2 = 0; c2 < wd; c2++) {
          let v = acc[ao + c2];
          if (res) v += res[dst + c2];
          yd[dst + c2] = relu && v < 0 ? 0 : v;
        }
      }
    }
  }
  return y;
}

/** The weight of the input-gradient convolution: w'[ci, co, ky, kx] = w[co, ci, k-1-ky, k-1-kx]. */
export function flipTranspose(w: CpuTensor): CpuTensor {
  const [co, ci, k] = w.shape, kk = k * k;
  const t = cpuTensor([ci, co, k, k]);
  for (let o = 0; o < co; o++) {
    for (let c = 0; c < ci; c++) {
      for (let j = 0; j < kk; j++) {
        t.data[(c * co + o) * kk + (kk - 1 - j)] = w.data[(o * ci + c) * kk + j];
      }
    }
  }
  return t;
}

/** Fast twin of conv2dBackwardInput: a convolution of dy with the flipped, transposed weight. */
export function conv2dBackwardInputFast(dy: CpuTensor, w: CpuTensor): CpuTensor {
  if (w.shape[0] !== dy.shape[1]) {
    throw new KibitzError("shape_mismatch", `conv dy ${dy.shape} vs weight ${w.shape}`);
  }
  return conv2dFast(dy, flipTranspose(w));
}

/** Fast twin of conv2dBackwardWeight, written into `dw` ([co, ci, k, k]). */
export function conv2dBackwardWeightFast(x: CpuTensor, dy: CpuTensor, dw: CpuTensor): void {
  const [n, ci, h, wd] = x.shape;
  const co = dy.shape[1];
  const k = dw.shape[2], pad = (k - 1) / 2, kk = k * k;
  const hw = h * wd;
  const out = dw.data;
  out.fill(0);
  for (let b = 0; b < n; b++) {
    const { p, wp, stride } = padPlanes(
      x.data.subarray(b * ci * hw, (b + 1) * ci * hw),
      ci,
      h,
      wd,
      pad,
    );
    const len = h * wp;
    // dy in padded-width rows, zeros in the scratch columns.
    const g = new Float32Array(co * len);
    for (let o = 0; o < co; o++) {
      const so = (b * co + o) * hw;
      for (let r = 0; r < h; r++) {
        g.set(dy.data.subarray(so + r * wd, so + r * wd + wd), o * len + r * wp);
      }
    }
    for (let o = 0; o < co; o++) {
      const go = o * len;
      for (let c = 0; c < ci; c++) {
        const xo = c * stride, wo = (o * ci + c) * kk;
        if (k === 3) {
          let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0, s8 = 0;
          const r1 = xo + wp, r2 = xo + 2 * wp;
          for (let i = 0; i < len; i++) {
            const gv = g[go + i];
            s0 += gv * p[xo + i];
            s1 += gv * p[xo + i + 1];
            s2 += gv * p[xo + i + 2];
            s3 += gv * p[r1 + i];
            s4 += gv * p[r1 + i + 1];
            s5 += gv * p[r1 + i + 2];
            s6 += gv * p[r2 + i];
            s7 += gv * p[r2 + i + 1];
            s8 += gv * p[r2 + i + 2];
          }
          out[wo] += s0;
          out[wo + 1] += s1;
          out[wo + 2] += s2;
          out[wo + 3] += s3;
          out[wo + 4] += s4;
          out[wo + 5] += s5;
          out[wo + 6] += s6;
          out[wo + 7] += s7;
          out[wo + 8] += s8;
          continue;
        }
        for (let ky = 0; ky < k; ky++) {
          for (let kx = 0; kx < k; kx++) {
            const s = xo + ky * wp + kx;
            let acc = 0;
            for (let i = 0; i < len; i++) acc += g[go + i] * p[s + i];
            out[wo + ky * k + kx] += acc;
          }
        }
      }
    }
  }
}

/**
 * Fast twin of linear: y[b, o] = bias[o] + x[b] . w[o], four batch rows per weight-row pass. With
 * `only` ([B, out], e.g. a legal-move mask) just the outputs where it is positive are computed (the
 * rest are 0): a masked softmax never reads the others.
 */
export function linearFast(
  x: CpuTensor,
  w: CpuTensor,
  bias: CpuTensor,
  only: Float32Array | null = null,
): CpuTensor {
  const [out, inp] = w.shape;
  const n = x.data.length / inp;
  if (!Number.isInteger(n)) {
    throw new KibitzError(
      "shape_mismatch",
      `fully connected input ${x.shape} vs weight ${w.shape}`,
    );
  }
  const y = cpuTensor([n, out]);
  const xd = x.data, wd = w.data, bd = bias.data, yd = y.data;
  if (only) {
    if (only.length !== n * out) {
      throw new KibitzError(
        "shape_mismatch",
        `output mask has ${only.length} values, not ${n * out}`,
      );
    }
    for (let r = 0; r < n; r++) {
      const a = r * inp;
      for (let o = 0; o < out; o++) {
        if (!(only[r * out + o] > 0)) continue;
        const wo = o * inp;
        let s = 0;
        for (let i = 0; i < inp; i++) s += wd[wo + i] * xd[a + i];
        yd[r * out + o] = s + bd[o];
      }
    }
    return y;
  }
  for (let o = 0; o < out; o++) {
    const wo = o * inp;
    let r = 0;
    for (; r + 4 <= n; r += 4) {
      const a = r * inp, b = a + inp, c = b + inp, d = c + inp;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < inp; i++) {
        const wv = wd[wo + i];
        s0 += wv * xd[a + i];
        s1 += wv * xd[b + i];
        s2 += wv * xd[c + i];
        s3 += wv * xd[d + i];
      }
      yd[r * out + o] = s0 + bd[o];
      yd[(r + 1) * out + o] = s1 + bd[o];
      yd[(r + 2) * out + o] = s2 + bd[o];
      yd[(r + 3) * out + o] = s3 + bd[o];
    }
    for (; r < n; r++) {
      const a = r * inp;
      let s = 0;
      for (let i = 0; i < inp; i++) s += wd[wo + i] * xd[a + i];
      yd[r * out + o] = s + bd[o];
    }
  }
  return y;
}

/**
 * Fast twin of linearBackward: writes dw = dy^T x and dbias into the given tensors and returns dx
 * (or null). Rows of dy that are zero (illegal moves) are skipped.
 */
export function linearBackwardFast(
  x: CpuTensor,
  w: CpuTensor,
  dy: CpuTensor,
  dw: CpuTensor,
  dbias: CpuTensor,
  needDx: boolean,
): CpuTensor | null {
  const [out, inp] = w.shape;
  const n = x.data.length / inp;
  const xd = x.data, wd = w.data, gd = dy.data, dwd = dw.data, dbd = dbias.data;
  for (let o = 0; o < out; o++) {
    const wo = o * inp;
    let sb = 0;
    for (let i = 0; i < inp; i++) dwd[wo + i] = 0;
    for (let r = 0; r < n; r++) {
      const g = gd[r * out + o];
      if (g === 0) continue;
      sb += g;
      const a = r * inp;
      for (let i = 0; i < inp; i++) dwd[wo + i] += g * xd[a + i];
    }
    dbd[o] = sb;
  }
  if (!needDx) return null;
  const dx = cpuTensor(x.shape);
  const dxd = dx.data;
  for (let r = 0; r < n; r++) {
    const a = r * inp;
    for (let o = 0; o < out; o++) {
      const g = gd[r * out + o];
      if (g === 0) continue;
      const wo = o * inp;
      for (let i = 0; i < inp; i++) dxd[a + i] += g * wd[wo + i];
    }
  }
  return dx;
}
