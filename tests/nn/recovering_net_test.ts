// RecoveringNet: inference outlives a lost device (one rebuild for all the calls in flight, the
// same outputs as before), within a bound; other errors and training are not retried.
import assert from "node:assert/strict";
import { acquireGpu, getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { isKibitzError } from "../../src/errors.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { RecoveringNet } from "../../src/nn/recovering_net.ts";
import { syntheticBatch } from "../../src/nn/train.ts";

const shared = await getGpu();
const opts = { ignore: !shared, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;
const weights = initWeights(tiny, 21);

/** Builds the network on a device of its own, remembering the contexts it made. */
function builder(made: GpuContext[]) {
  return async () => {
    const ctx = (await acquireGpu())!;
    made.push(ctx);
    return await GpuNet.create(ctx, weights);
  };
}

Deno.test(
  "inference on a lost device is retried on a rebuilt network, once for all calls",
  opts,
  async () => {
    const made: GpuContext[] = [], heard: string[] = [];
    const build = builder(made);
    const net = new RecoveringNet(await build(), build, (m) => heard.push(m));
    const batch = syntheticBatch(tiny, 3, 22);
    const want = await net.infer(batch);
    made[0].device.destroy();
    const got = await Promise.all([net.infer(batch), net.infer(batch), net.infer(batch)]);
    for (const g of got) assert.deepEqual(g, want);
    assert.equal(net.recoveries, 1);
    assert.equal(made.length, 2, "one rebuild");
    assert.equal(heard.length, 1);
    assert.match(heard[0], /device was lost \(destroyed.*rebuilt on the gpu/);
    assert.doesNotMatch(heard[0], /run again/, "no advice to rerun: it recovered");
    assert.equal(made[1].lost, null);
    net.dispose();
    for (const c of made) c.device.destroy(); // devices of their own: not left for teardown
  },
);

Deno.test("recoveries are bounded; other errors and training are not retried", opts, async () => {
  const made: GpuContext[] = [];
  const build = builder(made);
  const net = new RecoveringNet(await build(), build, () => {}, 1);
  const batch = syntheticBatch(tiny, 2, 23);
  const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
  await assert.rejects(
    net.infer({ ...batch, size: 0 }),
    (e) => isKibitzError(e) && !isKibitzError(e, "gpu_lost"),
  );
  made[0].device.destroy();
  await assert.rejects(net.trainStep(batch, hyper, true), (e) => isKibitzError(e, "gpu_lost"));
  assert.equal(made.length, 1, "training does not rebuild");
  await net.infer(batch); // the one recovery allowed
  made[1].device.destroy();
  await assert.rejects(net.infer(batch), (e) => isKibitzError(e, "gpu_lost"));
  assert.equal(net.recoveries, 1);
  assert.equal(made.length, 2);
  net.dispose();
});
