// Training from the replay buffer with the network's Trainer: uniform batches, SGD with momentum,
// cosine learning rate over one iteration's steps (seed 003: 512 positions, 1,000 steps).
import { defaultSgd } from "../nn/optimizer.ts";
import type { PolicyValueNet, TrainStats } from "../nn/net.ts";
import { Trainer } from "../nn/train.ts";
import { runTrainSteps } from "../nn/train_steps.ts";
import { mulberry32 } from "../mcts/random.ts";
import type { ReplayBuffer } from "./buffer.ts";

/** Training settings per iteration. */
export interface TrainConfig {
  batch: number;
  steps: number;
  momentum: number;
  weightDecay: number;
  lrMax: number;
  lrMin: number;
}

/** Seed 003's training numbers. */
export function defaultTrainConfig(over: Partial<TrainConfig> = {}): TrainConfig {
  const sgd = defaultSgd(1000);
  return {
    batch: 512,
    steps: 1000,
    momentum: sgd.momentum,
    weightDecay: sgd.weightDecay,
    lrMax: sgd.lrMax,
    lrMin: sgd.lrMin,
    ...over,
  };
}

/** Mean losses over a run of steps. */
export interface TrainSummary {
  steps: number;
  policyLoss: number;
  valueLoss: number;
  l2: number;
  loss: number;
  /** Losses of the last tenth of the steps (the trained network's fit). */
  lastLoss: number;
}

/**
 * Trains `net` from step `from` to `cfg.steps` on batches sampled from `buffer` (batch `s` draws
 * with seed (seed, s), so a resumed run samples what the uninterrupted one would have).
 * `onStep` runs after each step, in order (progress); the next step is already running then, except
 * after the steps `barrier` names (checkpoints: onStep reads the weights of that step).
 */
export async function trainFromBuffer(
  net: PolicyValueNet,
  buffer: ReplayBuffer,
  cfg: TrainConfig,
  from: number,
  seed: number,
  onStep: (step: number, stats: TrainStats & { lr: number }) => Promise<void> | void,
  barrier: (step: number) => boolean = () => false,
): Promise<TrainSummary> {
  const trainer = new Trainer(net, {
    momentum: cfg.momentum,
    weightDecay: cfg.weightDecay,
    lrMax: cfg.lrMax,
    lrMin: cfg.lrMin,
    totalSteps: cfg.steps,
  });
  trainer.step = from;
  const sum = { policyLoss: 0, valueLoss: 0, l2: 0, loss: 0 };
  let n = 0, last = 0, lastN = 0;
  const tail = Math.max(1, Math.floor(cfg.steps / 10));
  await runTrainSteps(trainer, {
    until: cfg.steps,
    batch: (step) =>
      buffer.sampleBatch(cfg.batch, mulberry32((Math.imul(seed + 1, 0x27d4eb2d) ^ step) >>> 0)),
    onStep: async (step, s) => {
      sum.policyLoss += s.policyLoss;
      sum.valueLoss += s.valueLoss;
      sum.l2 += s.l2;
      sum.loss += s.loss;
      n++;
      if (step > cfg.steps - tail) {
        last += s.loss;
        lastN++;
      }
      await onStep(step, s);
    },
    barrier,
  });
  const d = Math.max(1, n);
  return {
    steps: n,
    policyLoss: sum.policyLoss / d,
    valueLoss: sum.valueLoss / d,
    l2: sum.l2 / d,
    loss: sum.loss / d,
    lastLoss: lastN ? last / lastN : NaN,
  };
}
