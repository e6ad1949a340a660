import { type CpuTensor, cpuTensor, expectShape } from "../tensor.ts";

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

/**
 * Batch norm, the residual add (when `res` is given) and ReLU as one op: y = max(bn(x) + res, 0),
 * rounded to f32 at the same points as batchNorm, add and relu one after the other (the same
 * values bit for bit); the CPU twin of the fused apply kernel the training graph runs.
 */
export function batchNormRelu(
  x: CpuTensor,
  p: BnParams<CpuTensor>,
  train: boolean,
  res: CpuTensor | null,
): { y: CpuTensor; stats: CpuTensor } {
  if (res) expectShape("batch norm residual", res.shape, x.shape);
  const { y, stats } = batchNorm(x, p, train);
  const d = y.data;
  for (let i = 0; i < d.length; i++) {
    const a = res ? Math.fround(d[i] + res.data[i]) : d[i];
    d[i] = a > 0 ? a : 0;
  }
  return { y, stats };
}

/**
 * Backward of batchNormRelu: dz = (dy + dy2) where the op's output y > 0 (dy2, the residual
 * branch's gradient, optional), then the batch-norm backward of dz. Returns dx, dgamma, dbeta and
 * dz (the gradient the residual connection passes on). Same values as add, reluBackward and
 * batchNormBackward one after the other.
 */
export function batchNormReluBackward(
  x: CpuTensor,
  y: CpuTensor,
  dy: CpuTensor,
  dy2: CpuTensor | null,
  stats: CpuTensor,
  gamma: CpuTensor,
): { dx: CpuTensor; dgamma: CpuTensor; dbeta: CpuTensor; dz: CpuTensor } {
  expectShape("batch norm relu output", y.shape, x.shape);
  expectShape("batch norm relu dy", dy.shape, x.shape);
  if (dy2) expectShape("batch norm relu dy2", dy2.shape, x.shape);
  const dz = cpuTensor(x.shape);
  for (let i = 0; i < dz.data.length; i++) {
    const d = dy2 ? Math.fround(dy.data[i] + dy2.data[i]) : dy.data[i];
    dz.data[i] = y.data[i] > 0 ? d : 0;
  }
  return { ...batchNormBackward(x, dz, stats, gamma), dz };
}
