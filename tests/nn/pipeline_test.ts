// Pipelined inference: several calls in flight on one network give the same outputs as calls made
// one at a time, and the pipeline never holds more than its depth.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet, GpuNet, type PolicyValueNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { InferencePipeline } from "../../src/nn/pipeline.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { maxDiff } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const tiny = NET_PRESETS.tiny;

async function overlapMatchesSequential(net: PolicyValueNet): Promise<void> {
  const sizes = [1, 3, 1, 2, 1, 3, 8, 1];
  const batches = sizes.map((n, i) => syntheticBatch(tiny, n, 40 + i));
  const one: Awaited<ReturnType<PolicyValueNet["infer"]>>[] = [];
  for (const b of batches) one.push(await net.infer(b));
  const pipe = new InferencePipeline(net, 3);
  const got = await Promise.all(batches.map((b) => pipe.evaluateAsync(b)));
  await pipe.drain();
  assert.equal(pipe.inFlight, 0);
  assert.ok(pipe.maxInFlight <= 3, `max in flight ${pipe.maxInFlight}`);
  if (net.backend === "gpu") assert.equal(pipe.maxInFlight, 3);
  got.forEach((g, i) => {
    assert.equal(g.probs.length, sizes[i] * tiny.moves);
    assert.equal(maxDiff(g.probs, one[i].probs), 0, `call ${i} probs`);
    assert.equal(maxDiff(g.value, one[i].value), 0, `call ${i} value`);
  });
}

Deno.test("pipelined CPU inference equals sequential calls", () =>
  overlapMatchesSequential(new CpuNet(initWeights(tiny, 2))));

Deno.test(
  "pipelined GPU inference (3 calls in flight, mixed batch sizes) equals sequential calls",
  { ignore: !ctx, sanitizeResources: false, sanitizeOps: false },
  async () => {
    const net = await GpuNet.create(ctx!, initWeights(tiny, 2));
    await overlapMatchesSequential(net);
    net.dispose();
  },
);

Deno.test("pipeline depth must be positive", () => {
  assert.throws(() => new InferencePipeline(new CpuNet(initWeights(tiny, 2)), 0), /depth/);
});
