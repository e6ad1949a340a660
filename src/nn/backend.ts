import type { BnParams } from "./cpu/batchnorm.ts";
import type { Shaped } from "./tensor.ts";

/** Current optimizer hyper-parameters a backend applies in `sgd`. */
export interface SgdHyper {
  lr: number;
  momentum: number;
  weightDecay: number;
}

/**
 * The ops the ResNet graph is written against. The CPU backend runs each op at once; the GPU
 * backend records a dispatch per op into a replayable plan. Tensors are NCHW f32. Ops that
 * produce a parameter gradient write it into the given tensor; everything else returns a new one.
 */
export interface NnBackend<T extends Shaped> {
  /** 2-D convolution, stride 1, same padding, kernel size from w ([Co, Ci, K, K]). */
  conv2d(x: T, w: T): T;
  /** Writes dL/dw into dw and returns dL/dx (or null when not needed). */
  conv2dBackward(x: T, w: T, dy: T, dw: T, needDx: boolean): T | null;
  /** Batch norm; returns y and the per-channel [mean, invStd] used (2 x C). */
  batchNorm(x: T, p: BnParams<T>, train: boolean): { y: T; stats: T };
  /** Writes dgamma and dbeta and returns dx. */
  batchNormBackward(x: T, dy: T, stats: T, gamma: T, dgamma: T, dbeta: T): T;
  /**
   * Batch norm, the residual add (res, optional) and ReLU fused: y = max(bn(x) + res, 0), with
   * batchNorm's stats. The training graph keeps x, stats and y for the backward.
   */
  batchNormRelu(x: T, p: BnParams<T>, train: boolean, res: T | null): { y: T; stats: T };
  /**
   * Backward of batchNormRelu: dz = (dy + dy2) where y > 0 (dy2 optional: a second gradient
   * flowing into y), then the batch-norm backward of dz; writes dgamma and dbeta and returns dx,
   * and dz when keepDz (the gradient a residual connection passes on), else null.
   */
  batchNormReluBackward(
    x: T,
    y: T,
    dy: T,
    dy2: T | null,
    stats: T,
    gamma: T,
    dgamma: T,
    dbeta: T,
    keepDz: boolean,
  ): { dx: T; dz: T | null };
  relu(x: T): T;
  /** dx = dy where the ReLU output y > 0. */
  reluBackward(y: T, dy: T): T;
  add(a: T, b: T): T;
  /** Flatten + fully connected: x [B, ...] -> [B, Out] with w [Out, In], bias [Out]. */
  linear(x: T, w: T, bias: T): T;
  /** Writes dw and dbias and returns dx shaped like x (or null). */
  linearBackward(x: T, w: T, dy: T, dw: T, dbias: T, needDx: boolean): T | null;
  /**
   * Policy logits gathered from per-cell head planes by a move table (the cells head); unnamed
   * logits 0. q [B, planes, H, W]; table [B, W, 4] of (moveIndex, a, b, slot) as f32 integers,
   * moveIndex -1 a padding entry, a/b flat indices into the position's q (-1: no term), slot an
   * index into bias (-1: none): logits[n, moveIndex] = q[n, a] + q[n, b] + bias[slot]. Each
   * moveIndex appears at most once per position (the ops may assume it).
   */
  cellLogits(q: T, table: T, bias: T, moves: number): T;
  /** Backward of cellLogits: writes dL/dbias into dbias and returns dL/dq (shaped like q). */
  cellLogitsBackward(q: T, table: T, dlogits: T, dbias: T): T;
  /** Each channel's mean over the board: x [B, C, H, W] -> [B, C] (the pooled value head). */
  meanPool(x: T): T;
  /** Backward of meanPool: dx [B, C, H, W] = dy[b, c] / (H x W) at every cell (x gives the shape). */
  meanPoolBackward(x: T, dy: T): T;
  /** Masked softmax; with a target also the per-row cross-entropy and the batch-mean gradient. */
  policyLoss(logits: T, mask: T, target: T | null): { probs: T; loss: T | null; dlogits: T | null };
  /** tanh value; with a target also the per-row squared error and the batch-mean gradient. */
  valueLoss(z: T, target: T | null): { value: T; loss: T | null; dz: T | null };
  /** One SGD-with-momentum update of p from its gradient g and velocity v. */
  sgd(p: T, g: T, v: T, hyper: SgdHyper): void;
  /** Declares t dead: its storage may be reused by later ops. */
  release(t: T): void;
  /** Marks where a phase of the pass begins (recorders keep it for per-phase GPU timing). */
  mark?(phase: string): void;
}
