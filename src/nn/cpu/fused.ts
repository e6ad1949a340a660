import { BN_EPS } from "./batchnorm.ts";
import { conv2d } from "./conv.ts";
import { type CpuTensor, cpuTensor, expectShape } from "../tensor.ts";

/**
 * Reference batch-norm folding (the twin of fused.wgsl's `fold`): inference-mode BN after a conv
 * equals a conv with weights w s and bias beta - mean s per output channel, s = gamma / sqrt(var + eps).
 */
export function foldBn(
  w: CpuTensor,
  gamma: CpuTensor,
  beta: CpuTensor,
  mean: CpuTensor,
  variance: CpuTensor,
): { w: CpuTensor; b: CpuTensor } {
  const co = w.shape[0], per = w.data.length / co;
  const wf = cpuTensor(w.shape), bf = cpuTensor([co]);
  for (let c = 0; c < co; c++) {
    const s = Math.fround(gamma.data[c] / Math.sqrt(variance.data[c] + BN_EPS));
    for (let j = 0; j < per; j++) wf.data[c * per + j] = w.data[c * per + j] * s;
    bf.data[c] = beta.data[c] - mean.data[c] * s;
  }
  return { w: wf, b: bf };
}

/** Reference fused inference conv: y = act(conv(x, w) + bias[co] + res), res optional. */
export function convFused(
  x: CpuTensor,
  w: CpuTensor,
  bias: CpuTensor,
  res: CpuTensor | null,
  relu: boolean,
): CpuTensor {
  const y = conv2d(x, w);
  const [, co, h, wd] = y.shape, hw = h * wd;
  expectShape("fused conv bias", bias.shape, [co]);
  if (res) expectShape("fused conv residual", res.shape, y.shape);
  for (let i = 0; i < y.data.length; i++) {
    let v = y.data[i] + bias.data[Math.floor(i / hw) % co];
    if (res) v += res.data[i];
    y.data[i] = relu && v < 0 ? 0 : v;
  }
  return y;
}
