// A plan whose recording fails leaves nothing behind: its recorder's uniforms and the pool buffers
// it took are destroyed (the pool does not grow: a retry makes what it needs), the device's error
// scopes are balanced, and the retry's outputs equal a fresh network's. Failures are injected at the
// end of the recording window: a thrown error, a validation error recorded inside the window
// (reported as a shader error) and a failed allocation (reported as gpu_too_large by batch size).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import type { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import type { TensorPool } from "../../src/nn/gpu/tensor.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { faultyGpu } from "../helpers/gpu_faults.ts";
import { writeFails } from "../helpers/gpu_freed.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;
const COPY_DST = 0x8;

/** The network's internals the test reaches: its pool and the graph-recording step. */
interface Inside {
  pool: TensorPool;
  recordGraph(rec: GpuRecorder, ...rest: unknown[]): unknown;
}

/**
 * Makes the next recording (of a batch size `sizes` accepts) fail after it has taken its buffers:
 * by throwing, or by a validation error inside the recording's scope.
 */
function failNextRecording(
  net: GpuNet,
  how: "throw" | "validation",
  sizes: (size: number) => boolean = () => true,
): void {
  const inside = net as unknown as Inside;
  const original = inside.recordGraph;
  inside.recordGraph = function (this: Inside, rec: GpuRecorder, ...rest: unknown[]) {
    if (!sizes(rest[0] as number)) return original.call(this, rec, ...rest);
    inside.recordGraph = original;
    const got = original.call(this, rec, ...rest);
    if (how === "throw") throw new Error("injected: recording failed");
    ctx!.device.createBuffer({ size: 4, usage: 0 }); // a validation error inside the scope
    return got;
  };
}

for (const how of ["throw", "validation", "out of memory"] as const) {
  for (const mode of ["inference", "training"] as const) {
    const name = `${mode === "inference" ? "an" : "a"} ${mode} plan whose recording fails (${how})`;
    Deno.test(`${name} leaves nothing behind`, opts, async () => {
      const weights = initWeights(tiny, 5);
      // An inference batch the device cannot hold runs in halves (the next test); one of 1 cannot.
      const n = how === "out of memory" && mode === "inference" ? 1 : 3;
      const [two, three] = [syntheticBatch(tiny, 2, 8), syntheticBatch(tiny, n, 9)];
      const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
      const step = (net: GpuNet, batch: typeof two, train: boolean) =>
        train ? net.trainStep(batch, hyper, true) : net.infer(batch);
      const run = (net: GpuNet, batch: typeof two) => step(net, batch, mode === "training");
      // A plan of the other mode at the failing size: its scratch has the failing plan's sizes.
      const other = (net: GpuNet) => step(net, three, mode === "inference");
      const sequence = async (net: GpuNet, between: () => Promise<void>) => [
        await other(net),
        await run(net, two),
        await between(),
        await run(net, three),
        await other(net),
        await run(net, two),
      ];
      const fresh = await GpuNet.create(ctx!, weights);
      const want = await sequence(fresh, () => Promise.resolve());
      const freshBytes = (fresh as unknown as Inside).pool.bytes;

      let oom = false;
      const gpu = faultyGpu(ctx!, { oom: () => [oom, oom = false][0] });
      const net = await GpuNet.create(gpu.ctx, weights);
      const pool = (net as unknown as Inside).pool;
      // Before the failure: the folds and two plans, what the failed call must not free (their
      // scratch buffers are in the pool's free list, for later plans to reuse).
      const got = await sequence(net, async () => {
        const held = pool.snapshot().held.size, mark = gpu.made.length;
        if (how === "out of memory") oom = true;
        else failNextRecording(net, how);
        const expected = how === "throw"
          ? /injected/
          : how === "validation"
          ? /plan failed/
          : new RegExp(
            `batch-${n} ${mode} plan needs [0-9.]+ MiB more device memory.*smaller batches`,
          );
        await assert.rejects(run(net, three), expected);
        const madeThen = gpu.made.slice(mark).filter((b) => b.usage & COPY_DST);
        assert.ok(madeThen.length > 0, "the failed recording made buffers");
        for (const b of madeThen) assert.ok(await writeFails(ctx!, b), `${b.label} lives on`);
        assert.equal(pool.snapshot().held.size, held, "the pool holds what it held before");
        // Balanced: the recording popped the scopes it pushed, so none is left to pop.
        await assert.rejects(ctx!.device.popErrorScope(), "an error scope was left pushed");
      });
      assert.equal(pool.bytes, freshBytes, "the pool did not grow");
      assert.deepEqual(got, want);
      net.dispose();
      fresh.dispose();
    });
  }
}

Deno.test(
  "the first inference plan failing for memory rolls back the batch-norm folds it made",
  opts,
  async () => {
    const weights = initWeights(tiny, 8);
    const one = syntheticBatch(tiny, 1, 14);
    const fresh = await GpuNet.create(ctx!, weights);
    const want = await fresh.infer(one);

    let oom = true;
    const gpu = faultyGpu(ctx!, { oom: () => [oom, oom = false][0] });
    const net = await GpuNet.create(gpu.ctx, weights);
    const mark = gpu.made.length;
    // The folds are named in the bytes the plan needed (they were made in its window)...
    await assert.rejects(
      net.infer(one),
      /batch-1 inference plan needs [0-9.]+ MiB \([0-9.]+ MiB of it the folded weights\) more/,
    );
    const madeThen = gpu.made.slice(mark).filter((b) => b.usage & COPY_DST);
    assert.ok(madeThen.some((b) => /folded/.test(b.label)), "the plan made the folds");
    for (const b of madeThen) assert.ok(await writeFails(ctx!, b), `${b.label} lives on`);
    // ...and made again, valid, by the next plan.
    assert.deepEqual(await net.infer(one), want);
    net.dispose();
    fresh.dispose();
  },
);

Deno.test(
  "a failed recording destroys only its own buffers, not those of one recorded meanwhile",
  opts,
  async () => {
    const weights = initWeights(tiny, 6);
    const five = syntheticBatch(tiny, 5, 11), three = syntheticBatch(tiny, 3, 12);
    const fresh = await GpuNet.create(ctx!, weights);
    const want = await fresh.infer(five);
    const freshHeld = (fresh as unknown as Inside).pool.snapshot().held.size;

    const net = await GpuNet.create(ctx!, weights);
    failNextRecording(net, "validation", (size) => size < 5);
    // The batch-3 recording fails while the batch-5 one records beside it.
    const [failed, ok] = await Promise.allSettled([net.infer(three), net.infer(five)]);
    assert.equal(failed.status, "rejected");
    assert.equal(ok.status, "fulfilled");
    assert.equal((net as unknown as Inside).pool.snapshot().held.size, freshHeld);
    assert.deepEqual(await net.infer(five), want);
    net.dispose();
    fresh.dispose();
  },
);

Deno.test(
  "an inference batch the device cannot hold runs in halves from then on",
  opts,
  async () => {
    const weights = initWeights(tiny, 7);
    const four = syntheticBatch(tiny, 4, 13);
    // The oracle: a fresh net's batch-2 plan over each half of the batch.
    const fresh = await GpuNet.create(ctx!, weights);
    const per = tiny.planes * tiny.height * tiny.width;
    const halves = [0, 2].map((s) => ({
      size: 2,
      planes: four.planes.slice(s * per, (s + 2) * per),
      mask: four.mask!.slice(s * tiny.moves, (s + 2) * tiny.moves),
    }));
    const parts = [await fresh.infer(halves[0]), await fresh.infer(halves[1])];

    let fails = 1;
    const gpu = faultyGpu(ctx!, { oom: () => fails-- > 0 });
    const net = await GpuNet.create(gpu.ctx, weights);
    assert.equal(net.memoryCap, Infinity);
    const got = await net.infer(four);
    assert.equal(net.memoryCap, 2);
    assert.deepEqual(got.probs, Float32Array.from([...parts[0].probs, ...parts[1].probs]));
    assert.deepEqual(got.value, Float32Array.from([...parts[0].value, ...parts[1].value]));
    assert.deepEqual(await net.infer(four), got, "later batches of 4 run in halves too");
    assert.deepEqual(net.planKeys(), ["infer:2"]);
    await net.prepare([4, 3]);
    assert.deepEqual(net.planKeys().sort(), ["infer:1", "infer:2"]);

    // Batch 1 cannot be halved: refused by name.
    const one = await GpuNet.create(faultyGpu(ctx!, { oom: () => true }).ctx, weights);
    await assert.rejects(
      one.infer(syntheticBatch(tiny, 1, 14)),
      /gpu_too_large|batch-1 inference plan needs/,
    );
    for (const n of [net, one, fresh]) n.dispose();
  },
);
