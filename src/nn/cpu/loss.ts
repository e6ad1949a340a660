import { type CpuTensor, cpuTensor, expectShape } from "../tensor.ts";

/**
 * Reference masked softmax + policy cross-entropy. Illegal moves (mask 0) are excluded: their
 * probability is 0 and their logits get no gradient. With a target distribution t, the row loss is
 * -sum_legal t log p and dlogits = (p * sum_legal t - t) / B (the batch-mean loss's gradient).
 */
export function policyLoss(
  logits: CpuTensor,
  mask: CpuTensor,
  target: CpuTensor | null,
): { probs: CpuTensor; loss: CpuTensor; dlogits: CpuTensor } {
  const [b, m] = logits.shape;
  expectShape("policy mask", mask.shape, logits.shape);
  if (target) expectShape("policy target", target.shape, logits.shape);
  const probs = cpuTensor(logits.shape);
  const loss = cpuTensor([b]);
  const dlogits = cpuTensor(logits.shape);
  for (let r = 0; r < b; r++) {
    const o = r * m;
    let mx = -Infinity;
    for (let i = 0; i < m; i++) {
      if (mask.data[o + i] > 0 && logits.data[o + i] > mx) mx = logits.data[o + i];
    }
    if (mx === -Infinity) continue;
    let s = 0;
    for (let i = 0; i < m; i++) if (mask.data[o + i] > 0) s += Math.exp(logits.data[o + i] - mx);
    const logS = Math.log(s);
    let l = 0, mass = 0;
    for (let i = 0; i < m; i++) {
      if (!(mask.data[o + i] > 0)) continue;
      const lp = logits.data[o + i] - mx - logS;
      probs.data[o + i] = Math.exp(lp);
      if (target) {
        l -= target.data[o + i] * lp;
        mass += target.data[o + i];
      }
    }
    loss.data[r] = l;
    if (!target) continue;
    for (let i = 0; i < m; i++) {
      if (mask.data[o + i] > 0) {
        dlogits.data[o + i] = (probs.data[o + i] * mass - target.data[o + i]) / b;
      }
    }
  }
  return { probs, loss, dlogits };
}

/** Reference value head output and loss: v = tanh(z), loss = (v - t)^2, dz = 2 (v - t)(1 - v^2) / B. */
export function valueLoss(
  z: CpuTensor,
  target: CpuTensor | null,
): { value: CpuTensor; loss: CpuTensor; dz: CpuTensor } {
  const b = z.shape[0];
  const value = cpuTensor([b, 1]);
  const loss = cpuTensor([b]);
  const dz = cpuTensor([b, 1]);
  for (let r = 0; r < b; r++) {
    const v = Math.tanh(z.data[r]);
    value.data[r] = v;
    if (!target) continue;
    const e = v - target.data[r];
    loss.data[r] = e * e;
    dz.data[r] = 2 * e * (1 - v * v) / b;
  }
  return { value, loss, dz };
}

/** L2 regularization term 0.5 * wd * sum(theta^2), whose gradient wd * theta is SGD's weight decay. */
export function l2Penalty(params: readonly CpuTensor[], weightDecay: number): number {
  let s = 0;
  for (const p of params) for (let i = 0; i < p.data.length; i++) s += p.data[i] * p.data[i];
  return 0.5 * weightDecay * s;
}
