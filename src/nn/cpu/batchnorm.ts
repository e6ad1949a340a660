import { type CpuTensor, cpuTensor } from "../tensor.ts";

/** Batch-norm epsilon (PyTorch's default; the WGSL kernels use the same constant). */
export const BN_EPS = 1e-5;
/** Weight of the batch statistic in the running averages (PyTorch's default). */
export const BN_MOMENTUM = 0.1;

/** Parameters and running statistics of one batch-norm layer, each of length C. */
export interface BnParams<T> {
  gamma: T;
  beta: T;
  runMean: T;
  runVar: T;
}

/**
 * Reference batch norm over N, H, W per channel. Training mode normalizes with the batch
 * statistics (biased variance) and updates the running averages in place (unbiased variance);
 * inference mode uses the running averages. Returns y and stats = [mean..., invStd...] (2 x C).
 */
export function batchNorm(
  x: CpuTensor,
  p: BnParams<CpuTensor>,
  train: boolean,
): { y: CpuTensor; stats: CpuTensor } {
  const [n, c, h, w] = x.shape;
  const hw = h * w, m = n * hw;
  const y = cpuTensor(x.shape);
  const stats = cpuTensor([2, c]);
  for (let ch = 0; ch < c; ch++) {
    let mean: number, invStd: number;
    if (train) {
      let s = 0;
      for (let b = 0; b < n; b++) {
        const o = (b * c + ch) * hw;
        for (let i = 0; i < hw; i++) s += x.data[o + i];
      }
      mean = s / m;
      let v = 0;
      for (let b = 0; b < n; b++) {
        const o = (b * c + ch) * hw;
        for (let i = 0; i < hw; i++) v += (x.data[o + i] - mean) ** 2;
      }
      const variance = v / m;
      invStd = 1 / Math.sqrt(variance + BN_EPS);
      p.runMean.data[ch] = (1 - BN_MOMENTUM) * p.runMean.data[ch] + BN_MOMENTUM * mean;
      const unbiased = m > 1 ? v / (m - 1) : variance;
      p.runVar.data[ch] = (1 - BN_MOMENTUM) * p.runVar.data[ch] + BN_MOMENTUM * unbiased;
    } else {
      mean = p.runMean.data[ch];
      invStd = 1 / Math.sqrt(p.runVar.data[ch] + BN_EPS);
    }
    stats.data[ch] = mean;
    stats.data[c + ch] = invStd;
    const g = p.gamma.data[ch] * invStd, bt = p.beta.data[ch];
    for (let b = 0; b < n; b++) {
      const o = (b * c + ch) * hw;
      for (let i = 0; i < hw; i++) y.data[o + i] = (x.data[o + i] - mean) * g + bt;
    }
  }
  return { y, stats };
}

/** Reference batch-norm backward (training mode): dx, dgamma and dbeta from x, dy and the batch stats. */
export function batchNormBackward(
  x: CpuTensor,
  dy: CpuTensor,
  stats: CpuTensor,
  gamma: CpuTensor,
): { dx: CpuTensor; dgamma: CpuTensor; dbeta: CpuTensor } {
  const [n, c, h, w] = x.shape;
  const hw = h * w, m = n * hw;
  const dx = cpuTensor(x.shape);
  const dgamma = cpuTensor([c]);
  const dbeta = cpuTensor([c]);
  for (let ch = 0; ch < c; ch++) {
    const mean = stats.data[ch], invStd = stats.data[c + ch];
    let sdy = 0, sdyx = 0;
    for (let b = 0; b < n; b++) {
      const o = (b * c + ch) * hw;
      for (let i = 0; i < hw; i++) {
        sdy += dy.data[o + i];
        sdyx += dy.data[o + i] * (x.data[o + i] - mean) * invStd;
      }
    }
    dbeta.data[ch] = sdy;
    dgamma.data[ch] = sdyx;
    const k = gamma.data[ch] * invStd / m;
    for (let b = 0; b < n; b++) {
      const o = (b * c + ch) * hw;
      for (let i = 0; i < hw; i++) {
        const xhat = (x.data[o + i] - mean) * invStd;
        dx.data[o + i] = k * (m * dy.data[o + i] - sdy - xhat * sdyx);
      }
    }
  }
  return { dx, dgamma, dbeta };
}
