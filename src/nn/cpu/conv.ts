import { KibitzError } from "../../errors.ts";
import { type CpuTensor, cpuTensor, shapeString } from "../tensor.ts";

/** Kernel size and "same" padding of a [Co, Ci, K, K] weight (K odd, stride 1). */
export function convGeometry(w: readonly number[]): { k: number; pad: number } {
  const k = w[2];
  if (w.length !== 4 || w[3] !== k || k % 2 !== 1) {
    throw new KibitzError(
      "shape_mismatch",
      `conv weight ${shapeString(w)} is not [Co, Ci, K, K], K odd`,
    );
  }
  return { k, pad: (k - 1) / 2 };
}

/** Throws shape_mismatch unless x is [N, Ci, H, W] with the weight's Ci. */
export function checkConv(x: readonly number[], w: readonly number[]): void {
  if (x.length !== 4 || x[1] !== w[1]) {
    throw new KibitzError(
      "shape_mismatch",
      `conv input ${shapeString(x)} does not match weight ${shapeString(w)}`,
    );
  }
}

/** Reference 2-D convolution, stride 1, same padding: y[n,co] = sum_ci w[co,ci] * x[n,ci]. */
export function conv2d(x: CpuTensor, w: CpuTensor): CpuTensor {
  checkConv(x.shape, w.shape);
  const [n, ci, h, wd] = x.shape;
  const co = w.shape[0];
  const { k, pad } = convGeometry(w.shape);
  const hw = h * wd;
  const y = cpuTensor([n, co, h, wd]);
  const acc = new Float64Array(hw);
  for (let b = 0; b < n; b++) {
    for (let o = 0; o < co; o++) {
      acc.fill(0);
      for (let c = 0; c < ci; c++) {
        const xo = (b * ci + c) * hw;
        for (let ky = 0; ky < k; ky++) {
          for (let kx = 0; kx < k; kx++) {
            const wv = w.data[((o * ci + c) * k + ky) * k + kx];
            const dx = kx - pad;
            const x0 = Math.max(0, -dx), x1 = Math.min(wd, wd - dx);
            for (let r = 0; r < h; r++) {
              const iy = r + ky - pad;
              if (iy < 0 || iy >= h) continue;
              const src = xo + iy * wd + dx, dst = r * wd;
              for (let c2 = x0; c2 < x1; c2++) acc[dst + c2] += wv * x.data[src + c2];
            }
          }
        }
      }
      y.data.set(acc, (b * co + o) * hw);
    }
  }
  return y;
}

/** Gradient of conv2d with respect to its input: dx = conv of dy with the flipped, transposed weight. */
export function conv2dBackwardInput(dy: CpuTensor, w: CpuTensor): CpuTensor {
  const [n, co, h, wd] = dy.shape;
  const ci = w.shape[1];
  if (w.shape[0] !== co) {
    throw new KibitzError(
      "shape_mismatch",
      `conv dy ${shapeString(dy.shape)} vs weight ${shapeString(w.shape)}`,
    );
  }
  const { k, pad } = convGeometry(w.shape);
  const hw = h * wd;
  const dx = cpuTensor([n, ci, h, wd]);
  const acc = new Float64Array(hw);
  for (let b = 0; b < n; b++) {
    for (let c = 0; c < ci; c++) {
      acc.fill(0);
      for (let o = 0; o < co; o++) {
        const go = (b * co + o) * hw;
        for (let ky = 0; ky < k; ky++) {
          for (let kx = 0; kx < k; kx++) {
            const wv = w.data[((o * ci + c) * k + ky) * k + kx];
            const ddx = kx - pad;
            const x0 = Math.max(0, -ddx), x1 = Math.min(wd, wd - ddx);
            for (let r = 0; r < h; r++) {
              const iy = r + ky - pad;
              if (iy < 0 || iy >= h) continue;
              const dst = iy * wd + ddx, src = go + r * wd;
              for (let c2 = x0; c2 < x1; c2++) acc[dst + c2] += wv * dy.data[src + c2];
            }
          }
        }
      }
      dx.data.set(acc, (b * ci + c) * hw);
    }
  }
  return dx;
}

/** Gradient of conv2d with respect to its weight: dw[co,ci,ky,kx] = sum over batch and pixels. */
export function conv2dBackwardWeight(x: CpuTensor, dy: CpuTensor, k: number): CpuTensor {
  const [n, ci, h, wd] = x.shape;
  const co = dy.shape[1];
  const pad = (k - 1) / 2;
  const hw = h * wd;
  const dw = cpuTensor([co, ci, k, k]);
  for (let o = 0; o < co; o++) {
    for (let c = 0; c < ci; c++) {
      for (let ky = 0; ky < k; ky++) {
        for (let kx = 0; kx < k; kx++) {
          const ddx = kx - pad;
          const x0 = Math.max(0, -ddx), x1 = Math.min(wd, wd - ddx);
          let s = 0;
          for (let b = 0; b < n; b++) {
            const go = (b * co + o) * hw, xo = (b * ci + c) * hw;
            for (let r = 0; r < h; r++) {
              const iy = r + ky - pad;
              if (iy < 0 || iy >= h) continue;
              const src = xo + iy * wd + ddx, g = go + r * wd;
              for (let c2 = x0; c2 < x1; c2++) s += dy.data[g + c2] * x.data[src + c2];
            }
          }
          dw.data[((o * ci + c) * k + ky) * k + kx] = s;
        }
      }
    }
  }
  return dw;
}
