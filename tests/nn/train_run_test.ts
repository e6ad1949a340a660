// A checkpointed training run that is interrupted and resumed ends exactly where an uninterrupted
// run ends (weights, momentum and schedule position all restored).
import assert from "node:assert/strict";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet } from "../../src/nn/net.ts";
import { runSynthetic } from "../../src/nn/train.ts";

const tiny = NET_PRESETS.tiny;
const make = (w: ConstructorParameters<typeof CpuNet>[0]) => Promise.resolve(new CpuNet(w));

Deno.test("interrupted and resumed synthetic training equals an uninterrupted run", async () => {
  const dir = await Deno.makeTempDir();
  const opts = { steps: 30, batch: 8, seed: 3, every: 10 };
  const straight = await runSynthetic(make, tiny, { ...opts, checkpoint: null }, () => {});
  // Run with checkpoints and keep a copy of the one written at step 20, as if it crashed then.
  const ck = `${dir}/run.kbnn`, crash = `${dir}/crash.kbnn`;
  await runSynthetic(make, tiny, { ...opts, checkpoint: ck }, (step) => {
    if (step === 21) Deno.copyFileSync(ck, crash);
  });
  const resumed = await runSynthetic(make, tiny, { ...opts, checkpoint: crash }, () => {});
  assert.equal(resumed.startStep, 20);
  assert.equal(resumed.after, straight.after);
  assert.ok(straight.after < straight.before);
  const a = await straight.net.weights(), b = await resumed.net.weights();
  for (const s of a.specs) {
    assert.deepEqual(b.tensors.get(s.name)!.data, a.tensors.get(s.name)!.data, s.name);
  }
  await Deno.remove(dir, { recursive: true });
});
