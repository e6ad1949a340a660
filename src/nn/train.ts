import type { NetConfig } from "./config.ts";
import type { NetBatch, PolicyValueNet, TrainStats } from "./net.ts";
import { cosineLr, type SgdConfig } from "./optimizer.ts";
import { rng } from "./tensor.ts";

/** Drives SGD with the cosine learning-rate schedule over a network's training steps. */
export class Trainer {
  /** Steps taken so far (the schedule's position). */
  step = 0;

  constructor(readonly net: PolicyValueNet, readonly sgd: SgdConfig) {}

  /** Learning rate the next step will use. */
  lr(): number {
    return cosineLr(this.sgd, this.step);
  }

  /** One mini-batch step; returns the batch's losses before the update. */
  async train(batch: NetBatch): Promise<TrainStats & { lr: number }> {
    const lr = this.lr();
    const stats = await this.net.trainStep(batch, {
      lr,
      momentum: this.sgd.momentum,
      weightDecay: this.sgd.weightDecay,
    });
    this.step++;
    return { ...stats, lr };
  }
}

/**
 * A learnable synthetic task: one marker on plane 0 at a random cell; the right move is the cell
 * index modulo the move count (some other moves are masked illegal) and the value is +1 when the
 * marker is in the left half of the board, else -1.
 */
export function syntheticBatch(cfg: NetConfig, size: number, seed: number): Required<NetBatch> {
  const next = rng(seed);
  const hw = cfg.height * cfg.width;
  const planes = new Float32Array(size * cfg.planes * hw);
  const mask = new Float32Array(size * cfg.moves);
  const policy = new Float32Array(size * cfg.moves);
  const value = new Float32Array(size);
  for (let b = 0; b < size; b++) {
    const cell = Math.floor(next() * hw);
    planes[b * cfg.planes * hw + cell] = 1;
    const move = cell % cfg.moves;
    for (let m = 0; m < cfg.moves; m++) {
      mask[b * cfg.moves + m] = m === move || next() < 0.7 ? 1 : 0;
    }
    policy[b * cfg.moves + move] = 1;
    value[b] = cell % cfg.width < cfg.width / 2 ? 1 : -1;
  }
  return { size, planes, mask, policy, value };
}
