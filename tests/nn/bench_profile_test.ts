// The plan profiler of `bench nn`: phases from the recorder's marks, grouping by (phase, kernel),
// and on a GPU adapter every dispatch of a recorded plan timed in its own pass, in sequence.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { timeComputePasses } from "../../src/gpu/timing.ts";
import {
  groupProfile,
  opPhases,
  profilePlan,
  sustainedReplays,
} from "../../src/nn/bench_profile.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("opPhases: ops before the first mark are setup, then each mark's phase", () => {
  assert.deepEqual(
    opPhases(6, [{ phase: "a", at: 1 }, { phase: "b", at: 3 }, { phase: "c", at: 3 }]),
    [
      "setup",
      "a",
      "a",
      "c",
      "c",
      "c",
    ],
  );
  assert.deepEqual(opPhases(2, []), ["setup", "setup"]);
});

Deno.test("groupProfile sums by phase and kernel, phases in plan order, kernels by time", () => {
  const g = groupProfile(
    ["conv", "bn", "conv", "sgd", "conv"],
    ["fwd", "fwd", "fwd", "opt", "opt"],
    [1, 5, 2, 0.5, null],
  );
  assert.deepEqual(g.phases, [
    { phase: "fwd", dispatches: 3, ms: 8 },
    { phase: "opt", dispatches: 2, ms: 0.5 },
  ]);
  assert.deepEqual(g.rows, [
    { phase: "fwd", kernel: "bn", dispatches: 1, ms: 5 },
    { phase: "fwd", kernel: "conv", dispatches: 2, ms: 3 },
    { phase: "opt", kernel: "sgd", dispatches: 1, ms: 0.5 },
    { phase: "opt", kernel: "conv", dispatches: 1, ms: 0 },
  ]);
});

Deno.test(
  "timeComputePasses: one time per pass (null without timestamp queries)",
  opts,
  async () => {
    const t = await timeComputePasses(ctx!, [() => {}, () => {}, () => {}]);
    assert.equal(t.passMs.length, 3);
    for (const ms of t.passMs) assert.ok(ctx!.timestamps ? ms !== null && ms >= 0 : ms === null);
  },
);

Deno.test(
  "profilePlan: every dispatch of the inference and training plans lands in one phase row",
  opts,
  async () => {
    const net = await GpuNet.create(ctx!, initWeights(NET_PRESETS.tiny, 3));
    try {
      for (
        const [train, phases] of [
          [false, ["stem and tower", "heads"]],
          [true, [
            "L2 norm (loss readout)",
            "forward",
            "backward: heads",
            "backward: tower",
            "optimizer (SGD)",
          ]],
        ] as const
      ) {
        const rec = await net.planFor(2, train);
        const p = await profilePlan(ctx!, rec, { warmMs: 0, reps: 1, samples: 1 });
        assert.deepEqual(p.phases.map((x) => x.phase), phases);
        assert.equal(p.phases.reduce((a, x) => a + x.dispatches, 0), rec.ops.length);
        assert.equal(p.rows.reduce((a, x) => a + x.dispatches, 0), rec.ops.length);
        assert.ok(p.planMs > 0 && p.backToBackMs > 0);
        if (ctx!.timestamps) assert.ok(p.sumMs > 0);
      }
    } finally {
      net.dispose();
    }
  },
);

Deno.test(
  "training plan runs the fused batch-norm kernels: no separate bnApply, add or tower ReLU passes",
  opts,
  async () => {
    const cfg = { ...NET_PRESETS.tiny, blocks: 2 };
    const net = await GpuNet.create(ctx!, initWeights(cfg, 3));
    try {
      const rec = await net.planFor(2, true);
      const count = new Map<string, number>();
      for (const o of rec.ops) count.set(o.label, (count.get(o.label) ?? 0) + 1);
      const n = (k: string) => count.get(k) ?? 0;
      const bns = 2 * cfg.blocks + 3; // stem, two a block, the policy and value heads
      // Forward: one apply per batch norm, the residual ones with the add inside.
      assert.equal(n("bnApplyAddRelu"), cfg.blocks);
      assert.equal(n("bnApplyRelu"), bns - cfg.blocks);
      // Backward: the tower's gradient pairs (and the heads' pair into h) are added in the apply.
      assert.equal(n("bnAddReluBackwardApply"), cfg.blocks + 1);
      assert.equal(n("bnReluBackwardApply"), bns - cfg.blocks - 1);
      assert.equal(n("bnReluBackwardReduce") + n("bnReluBackwardReduceDirect"), bns);
      // Left unfused: only the value head's fully connected ReLU (forward and backward).
      assert.equal(n("relu"), 1);
      assert.equal(n("reluBackward"), 1);
      for (const k of ["add", "bnApply", "bnBackwardApply", "bnBackwardReduce"]) {
        assert.equal(n(k) + n(`${k}Direct`), 0, k);
      }
    } finally {
      net.dispose();
    }
  },
);

Deno.test(
  "sustainedReplays: each replay timed in one submit, first and last quarters",
  opts,
  async () => {
    const net = await GpuNet.create(ctx!, initWeights(NET_PRESETS.tiny, 3));
    try {
      const rec = await net.planFor(2, false);
      const r = await sustainedReplays(ctx!, rec, 8);
      if (!ctx!.timestamps) {
        assert.equal(r, null);
        return;
      }
      assert.ok(r);
      assert.equal(r.passMs.length, 8);
      assert.ok(r.passMs.every((ms) => ms > 0));
      // Quarters of 2 replays: their medians (the mean of two).
      assert.equal(r.quarter, 2);
      assert.equal(r.firstMs, (r.passMs[0] + r.passMs[1]) / 2);
      assert.equal(r.lastMs, (r.passMs[6] + r.passMs[7]) / 2);
      assert.equal(await sustainedReplays(ctx!, rec, 0), null);
    } finally {
      net.dispose();
    }
  },
);
