// Reference mean pooling over the board (the pooled value head), forward and backward.
import { type CpuTensor, cpuTensor } from "../tensor.ts";

/** Each channel's mean over H x W: x [B, C, H, W] -> [B, C]. */
export function meanPool(x: CpuTensor): CpuTensor {
  const [b, c, h, w] = x.shape;
  const hw = h * w, y = cpuTensor([b, c]);
  for (let i = 0; i < b * c; i++) {
    let s = 0;
    for (let j = 0; j < hw; j++) s += x.data[i * hw + j];
    y.data[i] = s / hw;
  }
  return y;
}

/** Backward of meanPool: every cell of channel (b, c) gets dy[b, c] / (H x W). */
export function meanPoolBackward(shape: readonly number[], dy: CpuTensor): CpuTensor {
  const [b, c, h, w] = shape;
  const hw = h * w, dx = cpuTensor([b, c, h, w]);
  for (let i = 0; i < b * c; i++) dx.data.fill(dy.data[i] / hw, i * hw, (i + 1) * hw);
  return dx;
}
