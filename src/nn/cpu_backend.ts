import type { NnBackend, SgdHyper } from "./backend.ts";
import {
  batchNorm,
  batchNormBackward,
  batchNormRelu,
  batchNormReluBackward,
  type BnParams,
} from "./cpu/batchnorm.ts";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "./cpu/conv.ts";
import { add, relu, reluBackward } from "./cpu/elementwise.ts";
import { convFused } from "./cpu/fused.ts";
import { cellLogits, cellLogitsBackward } from "./cpu/cell_logits.ts";
import { linearBackwardFast, linearFast } from "./cpu/fast.ts";
import { conv2dBackwardInputSimd, conv2dBackwardWeightSimd, conv2dSimd } from "./cpu/conv_simd.ts";
import { linear, linearBackward } from "./cpu/linear.ts";
import { meanPool, meanPoolBackward } from "./cpu/pool.ts";
import { policyLoss, valueLoss } from "./cpu/loss.ts";
import { sgdStep } from "./optimizer.ts";
import type { CpuTensor } from "./tensor.ts";

/** The TypeScript reference backend: every op runs immediately on host arrays. */
export class CpuBackend implements NnBackend<CpuTensor> {
  /** Reference convolution. */
  conv2d(x: CpuTensor, w: CpuTensor): CpuTensor {
    return conv2d(x, w);
  }
  /** Reference convolution backward. */
  conv2dBackward(x: CpuTensor, w: CpuTensor, dy: CpuTensor, dw: CpuTensor, needDx: boolean) {
    dw.data.set(conv2dBackwardWeight(x, dy, w.shape[2]).data);
    return needDx ? conv2dBackwardInput(dy, w) : null;
  }
  /** Reference fused inference conv (bias, residual, ReLU). */
  convFused(x: CpuTensor, w: CpuTensor, bias: CpuTensor, res: CpuTensor | null, relu: boolean) {
    return convFused(x, w, bias, res, relu);
  }
  /** Reference batch norm. */
  batchNorm(x: CpuTensor, p: BnParams<CpuTensor>, train: boolean) {
    return batchNorm(x, p, train);
  }
  /** Reference batch-norm backward. */
  batchNormBackward(
    x: CpuTensor,
    dy: CpuTensor,
    stats: CpuTensor,
    gamma: CpuTensor,
    dgamma: CpuTensor,
    dbeta: CpuTensor,
  ): CpuTensor {
    const r = batchNormBackward(x, dy, stats, gamma);
    dgamma.data.set(r.dgamma.data);
    dbeta.data.set(r.dbeta.data);
    return r.dx;
  }
  /** Reference batch norm + residual add + ReLU. */
  batchNormRelu(x: CpuTensor, p: BnParams<CpuTensor>, train: boolean, res: CpuTensor | null) {
    return batchNormRelu(x, p, train, res);
  }
  /** Reference backward of batch norm + residual add + ReLU. */
  batchNormReluBackward(
    x: CpuTensor,
    y: CpuTensor,
    dy: CpuTensor,
    dy2: CpuTensor | null,
    stats: CpuTensor,
    gamma: CpuTensor,
    dgamma: CpuTensor,
    dbeta: CpuTensor,
    keepDz: boolean,
  ): { dx: CpuTensor; dz: CpuTensor | null } {
    const r = batchNormReluBackward(x, y, dy, dy2, stats, gamma);
    dgamma.data.set(r.dgamma.data);
    dbeta.data.set(r.dbeta.data);
    return { dx: r.dx, dz: keepDz ? r.dz : null };
  }
  /** Reference ReLU. */
  relu(x: CpuTensor): CpuTensor {
    return relu(x);
  }
  /** Reference ReLU backward. */
  reluBackward(y: CpuTensor, dy: CpuTensor): CpuTensor {
    return reluBackward(y, dy);
  }
  /** Reference add. */
  add(a: CpuTensor, b: CpuTensor): CpuTensor {
    return add(a, b);
  }
  /** Reference fully connected layer. */
  linear(x: CpuTensor, w: CpuTensor, bias: CpuTensor): CpuTensor {
    return linear(x, w, bias);
  }
  /** Reference fully connected backward. */
  linearBackward(
    x: CpuTensor,
    w: CpuTensor,
    dy: CpuTensor,
    dw: CpuTensor,
    dbias: CpuTensor,
    needDx: boolean,
  ): CpuTensor | null {
    const r = linearBackward(x, w, dy);
    dw.data.set(r.dw.data);
    dbias.data.set(r.db.data);
    return needDx ? r.dx : null;
  }
  /** Reference cells head gather (cpu/cell_logits.ts). */
  cellLogits(q: CpuTensor, table: CpuTensor, bias: CpuTensor, moves: number): CpuTensor {
    return cellLogits(q, table, bias, moves);
  }
  /** Reference cells head gather backward (dbias written in place). */
  cellLogitsBackward(
    q: CpuTensor,
    table: CpuTensor,
    dlogits: CpuTensor,
    dbias: CpuTensor,
  ): CpuTensor {
    return cellLogitsBackward(q, table, dlogits, dbias);
  }
  /** Reference mean pooling over the board (cpu/pool.ts). */
  meanPool(x: CpuTensor): CpuTensor {
    return meanPool(x);
  }
  /** Reference mean pooling backward. */
  meanPoolBackward(x: CpuTensor, dy: CpuTensor): CpuTensor {
    return meanPoolBackward(x.shape, dy);
  }
  /** Reference masked softmax + cross-entropy. */
  policyLoss(logits: CpuTensor, mask: CpuTensor, target: CpuTensor | null) {
    const r = policyLoss(logits, mask, target);
    return { probs: r.probs, loss: target ? r.loss : null, dlogits: target ? r.dlogits : null };
  }
  /** Reference tanh + squared error. */
  valueLoss(z: CpuTensor, target: CpuTensor | null) {
    const r = valueLoss(z, target);
    return { value: r.value, loss: target ? r.loss : null, dz: target ? r.dz : null };
  }
  /** Reference SGD step. */
  sgd(p: CpuTensor, g: CpuTensor, v: CpuTensor, h: SgdHyper): void {
    sgdStep(p.data, g.data, v.data, h.lr, h.momentum, h.weightDecay);
  }
  /** Host arrays are garbage collected: nothing to do. */
  release(_t: CpuTensor): void {}
}

/**
 * The CPU backend with the fast convolutions (Wasm SIMD, cpu/conv_simd.ts) and fully connected ops
 * (cpu/fast.ts); the other ops are the reference ones: same results up to f32 rounding, many times quicker on small networks.
 */
export class FastCpuBackend extends CpuBackend {
  /**
   * The legal-move mask of the batch being run ([B, moves]), set by the network before each pass:
   * the fully connected layer with that many outputs (the policy head) computes only the legal
   * logits, the only ones the masked softmax reads (and the only ones with a gradient).
   */
  outputMask: Float32Array | null = null;
  /** Fast convolution. */
  override conv2d(x: CpuTensor, w: CpuTensor): CpuTensor {
    return conv2dSimd(x, w);
  }
  /** Fast convolution backward (dw written in place). */
  override conv2dBackward(
    x: CpuTensor,
    w: CpuTensor,
    dy: CpuTensor,
    dw: CpuTensor,
    needDx: boolean,
  ) {
    conv2dBackwardWeightSimd(x, dy, dw);
    return needDx ? conv2dBackwardInputSimd(dy, w) : null;
  }
  /** Fast fused inference conv. */
  override convFused(
    x: CpuTensor,
    w: CpuTensor,
    bias: CpuTensor,
    res: CpuTensor | null,
    relu: boolean,
  ) {
    return conv2dSimd(x, w, bias.data, res?.data ?? null, relu);
  }
  /** Fast fully connected layer. */
  override linear(x: CpuTensor, w: CpuTensor, bias: CpuTensor): CpuTensor {
    const m = this.outputMask;
    return linearFast(x, w, bias, m && m.length === x.shape[0] * w.shape[0] ? m : null);
  }
  /** Fast fully connected backward (dw, dbias written in place). */
  override linearBackward(
    x: CpuTensor,
    w: CpuTensor,
    dy: CpuTensor,
    dw: CpuTensor,
    dbias: CpuTensor,
    needDx: boolean,
  ): CpuTensor | null {
    return linearBackwardFast(x, w, dy, dw, dbias, needDx);
  }
}
