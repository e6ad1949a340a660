import { loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import type { NetConfig } from "./config.ts";
import type { NetBatch, PolicyValueNet, TrainBatch, TrainStats } from "./net.ts";
import { cosineLr, defaultSgd, type SgdConfig } from "./optimizer.ts";
import { initWeights, type NetWeights } from "./params.ts";
import { rng } from "./tensor.ts";
import { runTrainSteps } from "./train_steps.ts";

/** Drives SGD with the cosine learning-rate schedule over a network's training steps. */
export class Trainer {
  /** Steps taken so far (the schedule's position). */
  step = 0;

  constructor(readonly net: PolicyValueNet, readonly sgd: SgdConfig) {}

  /** Learning rate the next step will use. */
  lr(): number {
    return cosineLr(this.sgd, this.step);
  }

  /**
   * One mini-batch step; resolves with the batch's losses before the update. The step counts (and
   * the schedule moves on) at the call, so steps may be in flight together (runTrainSteps);
   * `last`: no step follows until this one's losses are read (PolicyValueNet.trainStep).
   */
  async train(batch: NetBatch, last = false): Promise<TrainStats & { lr: number }> {
    const lr = this.lr();
    this.step++;
    const stats = await this.net.trainStep(batch, {
      lr,
      momentum: this.sgd.momentum,
      weightDecay: this.sgd.weightDecay,
    }, last);
    return { ...stats, lr };
  }
}

/**
 * A learnable synthetic task: one marker on plane 0 at a random cell; the right move is the cell
 * index modulo the move count (some other moves are masked illegal) and the value is +1 when the
 * marker is in the left half of the board, else -1.
 */
export function syntheticBatch(cfg: NetConfig, size: number, seed: number): TrainBatch {
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

/** Options of a training run on the synthetic task. */
export interface SyntheticRunOptions {
  steps: number;
  batch: number;
  seed: number;
  /** Checkpoint file: resumed from when it exists, rewritten atomically every `every` steps and at the end. */
  checkpoint: string | null;
  every: number;
  /** Polled between steps: true ends the run early (Ctrl-C); the checkpoint is then saved. */
  stop?: () => boolean;
}

/** Held-out loss (policy cross-entropy + value squared error) of inference outputs. */
export async function heldOutLoss(net: PolicyValueNet, b: TrainBatch): Promise<number> {
  const out = await net.infer(b);
  let l = 0;
  for (let i = 0; i < b.policy.length; i++) {
    if (b.policy[i] > 0) l -= b.policy[i] * Math.log(Math.max(out.probs[i], 1e-12));
  }
  for (let i = 0; i < b.size; i++) l += (out.value[i] - b.value[i]) ** 2;
  return l / b.size;
}

/**
 * Trains `net` on the synthetic task with the cosine schedule, resuming from and saving to a
 * checkpoint. `make` builds a network from loaded weights (so the caller picks the backend).
 */
export async function runSynthetic(
  make: (w: NetWeights) => Promise<PolicyValueNet>,
  config: NetConfig,
  opts: SyntheticRunOptions,
  progress: (step: number, stats: TrainStats & { lr: number }) => void,
): Promise<
  { net: PolicyValueNet; startStep: number; endStep: number; before: number; after: number }
> {
  let weights = initWeights(config, opts.seed), startStep = 0;
  let velocity: Map<string, Float32Array> | null = null;
  if (opts.checkpoint && await exists(opts.checkpoint)) {
    const c = await loadCheckpoint(opts.checkpoint, config);
    weights = c.weights;
    velocity = c.velocity;
    startStep = Number(c.meta.step ?? 0);
  }
  const net = await make(weights);
  if (velocity) net.setVelocity(velocity);
  const trainer = new Trainer(net, defaultSgd(opts.steps));
  trainer.step = startStep;
  const held = syntheticBatch(config, Math.max(8, opts.batch), opts.seed + 1_000_003);
  const before = await heldOutLoss(net, held);
  const dir = opts.checkpoint?.includes("/")
    ? opts.checkpoint.slice(0, opts.checkpoint.lastIndexOf("/"))
    : "";
  if (dir) await Deno.mkdir(dir, { recursive: true });
  const save = async () => {
    if (!opts.checkpoint) return;
    await saveCheckpoint(
      opts.checkpoint,
      await net.weights(),
      { step: trainer.step },
      await net.velocity(),
    );
  };
  const checkpointAt = (step: number) => opts.every > 0 && step % opts.every === 0;
  await runTrainSteps(trainer, {
    until: opts.steps,
    batch: (step) => syntheticBatch(config, opts.batch, opts.seed * 7919 + step),
    onStep: async (step, stats) => {
      progress(step, stats);
      if (checkpointAt(step)) await save();
    },
    barrier: checkpointAt,
    stop: opts.stop,
  });
  await save();
  return { net, startStep, endStep: trainer.step, before, after: await heldOutLoss(net, held) };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}
