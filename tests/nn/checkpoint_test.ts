// Checkpoints: a round trip gives identical outputs; damaged files fail with clear errors.
import assert from "node:assert/strict";
import {
  CHECKPOINT_VERSION,
  decodeCheckpoint,
  encodeCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from "../../src/nn/checkpoint.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { isKibitzError } from "../../src/errors.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const tiny = NET_PRESETS.tiny;
const gpu = await getGpu();

async function trained(): Promise<CpuNet> {
  const net = new CpuNet(initWeights(tiny, 21));
  // Two steps so running statistics and weights differ from their initial values.
  for (let s = 0; s < 2; s++) {
    await net.trainStep(syntheticBatch(tiny, 4, s), { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 });
  }
  return net;
}

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(isKibitzError(e), `not a KibitzError: ${e}`);
    return `${e.code}: ${e.message}`;
  }
  return "no error";
}

Deno.test("checkpoint file round trip gives bit-identical outputs and keeps metadata", async () => {
  const net = await trained();
  const dir = await Deno.makeTempDir();
  const path = `${dir}/net.kbnn`;
  await saveCheckpoint(path, await net.weights(), { step: 2, note: "test" });
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["net.kbnn"]); // no temp file left
  const { weights, meta } = await loadCheckpoint(path, tiny);
  assert.deepEqual(meta, { step: 2, note: "test" });
  const batch = syntheticBatch(tiny, 3, 77);
  const a = await net.infer(batch), b = await new CpuNet(weights).infer(batch);
  assert.deepEqual(b.probs, a.probs);
  assert.deepEqual(b.value, a.value);
  await Deno.remove(dir, { recursive: true });
});

Deno.test({
  name: "a checkpoint with momentum resumes training exactly (CPU net)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    const net = await trained();
    const bytes = encodeCheckpoint(await net.weights(), { step: 2 }, await net.velocity());
    const back = decodeCheckpoint(bytes, "resume.kbnn", tiny);
    assert.ok(
      back.velocity && back.velocity.size === back.weights.specs.filter((s) => s.trainable).length,
    );
    const resumed = new CpuNet(back.weights);
    resumed.setVelocity(back.velocity);
    const next = syntheticBatch(tiny, 4, 9);
    const a = await net.trainStep(next, h), b = await resumed.trainStep(next, h);
    assert.equal(b.loss, a.loss);
    const wa = await net.weights(), wb = await resumed.weights();
    for (const s of wa.specs) {
      assert.deepEqual(wb.tensors.get(s.name)!.data, wa.tensors.get(s.name)!.data);
    }
    // Without momentum the same step differs (the test can fail).
    const fresh = new CpuNet(back.weights);
    await fresh.trainStep(next, h);
    const wf = await fresh.weights();
    assert.notDeepEqual(wf.tensors.get("stem.conv")!.data, wa.tensors.get("stem.conv")!.data);
    assert.equal(decodeCheckpoint(encodeCheckpoint(wa)).velocity, null);
    assert.throws(
      () => resumed.setVelocity(new Map([["stem.bn.mean", new Float32Array(8)]])),
      /unknown tensor/,
    );
  },
});

Deno.test({
  name: "a checkpoint's momentum loads into a GPU net unchanged",
  ignore: gpu === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const net = await trained();
    const bytes = encodeCheckpoint(await net.weights(), { step: 2 }, await net.velocity());
    const back = decodeCheckpoint(bytes, "resume.kbnn", tiny);
    const g = await GpuNet.create(gpu!, back.weights);
    g.setVelocity(back.velocity!);
    const v = await g.velocity();
    for (const [k, data] of back.velocity!) assert.deepEqual(v.get(k), data);
    g.dispose();
  },
});

Deno.test("damaged checkpoints: wrong version, truncation, bad checksum, shape mismatch, bad magic", async () => {
  const bytes = encodeCheckpoint(await (await trained()).weights());
  assert.ok(decodeCheckpoint(bytes).weights.tensors.size > 0);

  const v = bytes.slice();
  new DataView(v.buffer).setUint32(4, CHECKPOINT_VERSION + 1, true);
  assert.match(
    code(() => decodeCheckpoint(v, "x.kbnn")),
    /^checkpoint_version: x.kbnn: format version 2/,
  );

  assert.match(
    code(() => decodeCheckpoint(bytes.subarray(0, bytes.length - 9))),
    /^checkpoint_truncated/,
  );
  assert.match(code(() => decodeCheckpoint(bytes.subarray(0, 20))), /^checkpoint_truncated/);

  const c = bytes.slice();
  c[c.length - 40] ^= 0x10; // one bit of one weight
  assert.match(code(() => decodeCheckpoint(c)), /^checkpoint_checksum/);

  const other = { ...tiny, filters: 4 };
  assert.match(
    code(() => decodeCheckpoint(bytes, "x.kbnn", other)),
    /^shape_mismatch: x.kbnn: tensor 0 is stem.conv 8x4x3x3, the model needs stem.conv 4x4x3x3/,
  );

  const m = bytes.slice();
  m[0] = 0;
  assert.match(code(() => decodeCheckpoint(m)), /^bad_checkpoint/);
  await assert.rejects(() => loadCheckpoint("/nonexistent/net.kbnn"), /no such file/);
});
