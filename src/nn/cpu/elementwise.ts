import { type CpuTensor, cpuTensor, expectShape } from "../tensor.ts";

/** Reference ReLU. */
export function relu(x: CpuTensor): CpuTensor {
  const y = cpuTensor(x.shape);
  for (let i = 0; i < x.data.length; i++) y.data[i] = x.data[i] > 0 ? x.data[i] : 0;
  return y;
}

/** ReLU backward from its output y: dx = dy where y > 0, else 0. */
export function reluBackward(y: CpuTensor, dy: CpuTensor): CpuTensor {
  expectShape("relu backward dy", dy.shape, y.shape);
  const dx = cpuTensor(y.shape);
  for (let i = 0; i < y.data.length; i++) dx.data[i] = y.data[i] > 0 ? dy.data[i] : 0;
  return dx;
}

/** Elementwise sum (the residual connection, and gradient accumulation where a tensor fans out). */
export function add(a: CpuTensor, b: CpuTensor): CpuTensor {
  expectShape("add", b.shape, a.shape);
  const y = cpuTensor(a.shape);
  for (let i = 0; i < a.data.length; i++) y.data[i] = a.data[i] + b.data[i];
  return y;
}

/** Reference tanh. */
export function tanh(x: CpuTensor): CpuTensor {
  const y = cpuTensor(x.shape);
  for (let i = 0; i < x.data.length; i++) y.data[i] = Math.tanh(x.data[i]);
  return y;
}
