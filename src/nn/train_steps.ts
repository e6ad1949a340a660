// Training steps kept in flight: the next step is submitted before the previous step's losses come
// back, so a GPU net runs step after step while the host waits out the readback floor and prepares
// the next batch (GpuNet.trainStep defers each step's map request until then). The weights after a
// step are the same as when every step is awaited alone: the queue runs the steps in order.
import type { NetBatch, TrainStats } from "./net.ts";
import { EventLoopTurns } from "../cli/event_loop.ts";

/** What runTrainSteps drives: a Trainer (src/nn/train.ts), whose step counts at each call. */
export interface StepTrainer {
  step: number;
  /** `last`: no step is submitted before this one's losses are read (the last step, a barrier). */
  train(batch: NetBatch, last?: boolean): Promise<TrainStats & { lr: number }>;
}

/** What runTrainSteps needs besides the trainer. */
export interface TrainStepsOptions {
  /** Run steps until the trainer's step count reaches this. */
  until: number;
  /** The batch of the step the trainer takes next (called with trainer.step before it counts). */
  batch: (step: number) => NetBatch;
  /** Called in step order with each step's number (trainer.step after it) and losses. */
  onStep: (step: number, stats: TrainStats & { lr: number }) => Promise<void> | void;
  /**
   * Steps whose onStep must see the weights right after them (a checkpoint reads them): no later
   * step is submitted before their onStep has run. The last step always is one.
   */
  barrier?: (step: number) => boolean;
  /** Steps in flight at most (default 2; 1: each step awaited before the next). */
  depth?: number;
  /**
   * Polled before each step is submitted: true ends the run early (Ctrl-C), once the steps in
   * flight have had their onStep, so the weights are the last reported step's.
   */
  stop?: () => boolean;
}

/**
 * Runs `trainer` up to `o.until` steps with up to `o.depth` in flight. If onStep (or a step)
 * throws, the steps already submitted are awaited (their results dropped) before it rethrows, so
 * nothing is left running on the network the caller may then dispose.
 */
export async function runTrainSteps(trainer: StepTrainer, o: TrainStepsOptions): Promise<void> {
  const depth = Math.max(1, Math.floor(o.depth ?? 2));
  const inFlight: { step: number; stats: Promise<TrainStats & { lr: number }> }[] = [];
  const settle = async () => {
    const head = inFlight.shift()!;
    await o.onStep(head.step, await head.stats);
  };
  try {
    // A CPU net's steps never wait on I/O: let signal handlers (Ctrl-C) run now and then.
    const turns = new EventLoopTurns();
    while (trainer.step < o.until) {
      if (turns.due) await turns.turn();
      if (o.stop?.()) break;
      // The step's number once it counts; a last or barrier step is read before the next one.
      const next = trainer.step + 1;
      const alone = next >= o.until || (o.barrier?.(next) ?? false);
      const stats = trainer.train(o.batch(trainer.step), alone);
      stats.catch(() => {}); // observed by settle, or dropped after an earlier failure
      const step = trainer.step;
      inFlight.push({ step, stats });
      while (inFlight.length >= depth || (alone && inFlight.length > 0)) await settle();
    }
    while (inFlight.length > 0) await settle(); // stopped early: the steps in flight end in order
  } finally {
    // Reached only with steps left after a failure: let them finish before unwinding.
    for (const f of inFlight.splice(0)) await f.stats.catch(() => {});
  }
}
