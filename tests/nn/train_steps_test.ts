// Training steps in flight (runTrainSteps): the same losses and weights as steps awaited one at a
// time, checkpoints at barriers see their own step's weights, and a failure leaves nothing running.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet, GpuNet, type NetBatch, type PolicyValueNet } from "../../src/nn/net.ts";
import { initWeights, type NetWeights } from "../../src/nn/params.ts";
import { syntheticBatch, Trainer } from "../../src/nn/train.ts";
import { runTrainSteps } from "../../src/nn/train_steps.ts";
import type { SgdHyper } from "../../src/nn/backend.ts";
import { maxDiff } from "./helpers.ts";

const ctx = await getGpu();
const tiny = NET_PRESETS.tiny;
const sgd = { momentum: 0.9, weightDecay: 1e-4, lrMax: 0.05, lrMin: 0.001, totalSteps: 6 };
const batchOf = (step: number) => syntheticBatch(tiny, 4, 100 + step);

interface Run {
  losses: number[];
  lrs: number[];
  steps: number[];
  /** Weights read in onStep at the barrier steps, by step. */
  at: Map<number, NetWeights>;
  end: NetWeights;
}

async function run(net: PolicyValueNet, depth: number, barrier: (s: number) => boolean) {
  const trainer = new Trainer(net, sgd);
  const r: Run = { losses: [], lrs: [], steps: [], at: new Map(), end: null as never };
  await runTrainSteps(trainer, {
    until: 6,
    batch: batchOf,
    onStep: async (step, s) => {
      r.steps.push(step);
      r.losses.push(s.loss);
      r.lrs.push(s.lr);
      if (barrier(step)) r.at.set(step, await net.weights());
    },
    barrier,
    depth,
  });
  assert.equal(trainer.step, 6);
  r.end = await net.weights();
  return r;
}

function sameWeights(a: NetWeights, b: NetWeights, what: string): void {
  for (const [name, t] of a.tensors) {
    assert.equal(maxDiff(t.data, b.tensors.get(name)!.data), 0, `${what}: ${name}`);
  }
}

async function inFlightMatchesOneAtATime(make: () => Promise<PolicyValueNet>): Promise<void> {
  const barrier = (s: number) => s === 3;
  const nets = [await make(), await make()];
  try {
    const one = await run(nets[0], 1, barrier);
    const two = await run(nets[1], 2, barrier);
    assert.deepEqual(two.steps, [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(two.lrs, one.lrs);
    assert.deepEqual(two.losses, one.losses);
    sameWeights(two.at.get(3)!, one.at.get(3)!, "checkpoint at step 3");
    sameWeights(two.end, one.end, "after step 6");
    // The barrier's checkpoint is step 3's weights, not step 4's.
    assert.ok(
      maxDiff(
        two.at.get(3)!.tensors.get("stem.conv")!.data,
        two.end.tensors.get("stem.conv")!.data,
      ) > 0,
    );
  } finally {
    for (const n of nets) n.dispose();
  }
}

Deno.test("CPU: training steps in flight equal steps one at a time", () =>
  inFlightMatchesOneAtATime(() => Promise.resolve(new CpuNet(initWeights(tiny, 5)))));

Deno.test(
  "GPU: training steps in flight equal steps one at a time, checkpoints at barriers",
  { ignore: !ctx, sanitizeResources: false, sanitizeOps: false },
  () => inFlightMatchesOneAtATime(() => GpuNet.create(ctx!, initWeights(tiny, 5))),
);

Deno.test("runTrainSteps: keeps at most depth steps in flight, every barrier alone", async () => {
  let inFlight = 0, most = 0;
  const submitted: number[] = [], lasts: boolean[] = [];
  const net = new CpuNet(initWeights(tiny, 5));
  const trainStep = net.trainStep.bind(net);
  net.trainStep = (b: NetBatch, h: SgdHyper, last?: boolean) => {
    inFlight++;
    most = Math.max(most, inFlight);
    lasts.push(last ?? false);
    return trainStep(b, h).finally(() => inFlight--);
  };
  const trainer = new Trainer(net, sgd);
  await runTrainSteps(trainer, {
    until: 6,
    batch: (s) => {
      submitted.push(s);
      return batchOf(s);
    },
    onStep: (step) => {
      // After a barrier step nothing later has been submitted yet.
      if (step === 2) assert.equal(submitted.length, 2);
    },
    barrier: (s) => s === 2,
    depth: 3,
  });
  assert.deepEqual(submitted, [0, 1, 2, 3, 4, 5]);
  assert.equal(most, 3);
  // The barrier step and the last one are read before any step follows: a GPU net maps them at once.
  assert.deepEqual(lasts, [false, true, false, false, false, true]);
});

Deno.test("runTrainSteps: a failing onStep rethrows after the steps in flight finish", async () => {
  const net = new CpuNet(initWeights(tiny, 5));
  let settled = 0;
  const trainStep = net.trainStep.bind(net);
  net.trainStep = (b, h) => trainStep(b, h).finally(() => settled++);
  const trainer = new Trainer(net, sgd);
  await assert.rejects(
    runTrainSteps(trainer, {
      until: 6,
      batch: batchOf,
      onStep: (step) => {
        if (step === 2) throw new Error("stop at 2");
      },
    }),
    /stop at 2/,
  );
  // Steps 1-3 were submitted (3 ran while step 2 was reported) and all of them finished.
  assert.equal(trainer.step, 3);
  assert.equal(settled, 3);
});

Deno.test("runTrainSteps: a stop ends the run once the steps in flight are reported", async () => {
  const net = new CpuNet(initWeights(tiny, 5));
  const trainer = new Trainer(net, sgd);
  const reported: number[] = [];
  let stop = false;
  await runTrainSteps(trainer, {
    until: 6,
    batch: batchOf,
    onStep: (step) => {
      reported.push(step);
      if (step === 2) stop = true; // Ctrl-C while step 3 is in flight
    },
    stop: () => stop,
    depth: 2,
  });
  // Step 3 was submitted before the stop was seen: it ends and is reported; nothing follows.
  assert.deepEqual(reported, [1, 2, 3]);
  assert.equal(trainer.step, 3);
});
