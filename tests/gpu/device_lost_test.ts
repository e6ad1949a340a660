// A lost device: the network reports its work as gpu_lost (not the odd errors, or silence, a lost
// device gives), refuses further work at once, and getGpu() acquires a new device for what comes
// next; a GPU solve continues on a new device. Each test loses a device of its own
// (acquireGpu), or the shared one in a child process.
import assert from "node:assert/strict";
import { acquireGpu, getGpu } from "../../src/gpu/device.ts";
import { isKibitzError } from "../../src/errors.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { prepareSpot, runSolve } from "../../src/poker/solve.ts";
import { riverSpot } from "../helpers/spots.ts";
import { checkpointSink } from "../../src/poker/checkpoint.ts";
import { solverStateViews } from "../../src/cfr/solver_state.ts";
import { runFixture } from "../helpers/child_fixture.ts";

const shared = await getGpu();
const opts = { ignore: !shared, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;
const lostError = (e: unknown) => isKibitzError(e, "gpu_lost") && /destroyed/.test(e.message);

Deno.test("work on a network whose device is lost fails as gpu_lost", opts, async () => {
  const ctx = (await acquireGpu())!;
  const net = await GpuNet.create(ctx, initWeights(tiny, 3));
  const batch = syntheticBatch(tiny, 2, 4);
  const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
  await net.infer(batch);
  await net.trainStep(batch, hyper, true);
  const lost = () => ctx.lost; // read afresh (the device's lost handler sets it)
  assert.equal(lost(), null);
  ctx.device.destroy();
  // Right away, before the loss is reported: the call fails, and is named for what it is.
  await assert.rejects(net.infer(syntheticBatch(tiny, 3, 5)), lostError);
  assert.equal(lost()?.reason, "destroyed");
  // Once known: every kind of work is refused at once.
  await assert.rejects(net.infer(batch), lostError);
  await assert.rejects(net.trainStep(batch, hyper, true), lostError);
  await assert.rejects(net.weights(), lostError);
  await assert.rejects(net.prepare([5]), lostError);
  net.dispose();
  // Input mistakes are still reported as such on a working device.
  const ok = await GpuNet.create(shared!, initWeights(tiny, 3));
  await assert.rejects(ok.infer({ ...batch, size: 0 }), (e) => isKibitzError(e) && !lostError(e));
  ok.dispose();
});

Deno.test("getGpu acquires a new device once the shared one is lost", opts, async () => {
  const got = await runFixture<{
    lost: { reason: string };
    fresh: boolean;
    secondLost: unknown;
    selfTest: boolean;
  }>("gpu/shared_device_lost.ts");
  if ("skipped" in got) return;
  assert.equal(got.lost.reason, "destroyed");
  assert.equal(got.fresh, true);
  assert.equal(got.secondLost, null);
  assert.equal(got.selfTest, true);
});

Deno.test(
  "a GPU solve whose device is lost continues on a new one and ends as if uninterrupted",
  opts,
  async () => {
    const cfg = () =>
      parseSolveConfig(
        `${riverSpot("66%, a", "a")}[solver]\nthreads = 1\nmax_iterations = 60\n` +
          "regret_bits = 8\nstrategy_bits = 8\ntarget_exploitability_pct = 0\n",
      );
    const whole = await runSolve(prepareSpot(cfg()), {
      backend: { backend: "gpu", reason: "test", ctx: shared! },
      every: 10,
    });
    // With checkpoints at every check, the solve continues from the last one; without, from its start.
    for (const checkpoints of [true, false]) {
      const dir = await Deno.makeTempDir();
      try {
        const ctx = (await acquireGpu())!;
        const warnings: string[] = [];
        let progress = 0;
        const written: number[] = [];
        let atLoss = -1;
        const sink = checkpointSink({
          path: `${dir}/checkpoint.bin`,
          config: "test",
          limits: { maxIterations: 60, targetPct: 0 },
          minutes: 1e-9,
          keep: false,
          info: (l) => written.push(Number(/iteration (\d+)/.exec(l)?.[1])),
        }, "solve");
        const r = await runSolve(prepareSpot(cfg()), {
          backend: { backend: "gpu", reason: "test", ctx },
          every: 10,
          onWarning: (l) => {
            warnings.push(l);
            atLoss = written.at(-1) ?? 0;
          },
          ...(checkpoints ? { checkpoint: sink } : {}),
          onProgress: () => {
            if (++progress === 2) ctx.device.destroy();
          },
        });
        assert.equal(ctx.lost?.reason, "destroyed");
        assert.equal(warnings.length, 1, warnings.join("\n"));
        const from = checkpoints
          ? `iteration ${atLoss} \\(its last checkpoint`
          : "iteration 0 \\(its start";
        assert.match(
          warnings[0],
          new RegExp(
            `GPU solve: the GPU device was lost \\(destroyed.*continues on a new device from ${from}; loss 1 of at most 3`,
          ),
        );
        assert.equal(r.iterations, 60);
        assert.equal(r.stoppedBy, "max_iterations");
        assert.deepEqual(solverStateViews(r.solver), solverStateViews(whole.solver));
        assert.equal(r.exploitability.percent, whole.exploitability.percent);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
  },
);
