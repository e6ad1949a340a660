// A plan whose recording fails gives back what it took: its recorder's uniforms are destroyed, the
// pool buffers it took return to the pool (a retry reuses them, the pool does not grow), the
// device's error scope is balanced, and the retry's outputs equal a fresh network's. Failures are
// injected at the end of the recording window: a thrown error, and a validation error recorded
// inside the window (reported as a shader error).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import type { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import type { TensorPool } from "../../src/nn/gpu/tensor.ts";
import { GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { writeFails } from "../helpers/gpu_freed.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;

/** The network's internals the test reaches: its pool and the graph-recording step. */
interface Inside {
  pool: TensorPool;
  recordGraph(rec: GpuRecorder, ...rest: unknown[]): unknown;
}

/**
 * Makes the next recording (of a batch size `sizes` accepts) fail after it has taken its buffers;
 * returns its recorder's uniforms.
 */
function failNextRecording(
  net: GpuNet,
  how: "throw" | "validation",
  sizes: (size: number) => boolean = () => true,
): GPUBuffer[] {
  const inside = net as unknown as Inside;
  const original = inside.recordGraph;
  const uniforms: GPUBuffer[] = [];
  inside.recordGraph = function (this: Inside, rec: GpuRecorder, ...rest: unknown[]) {
    if (!sizes(rest[0] as number)) return original.call(this, rec, ...rest);
    inside.recordGraph = original;
    const got = original.call(this, rec, ...rest);
    uniforms.push(...rec.uniforms);
    if (how === "throw") throw new Error("injected: recording failed");
    ctx!.device.createBuffer({ size: 4, usage: 0 }); // a validation error inside the scope
    return got;
  };
  return uniforms;
}

for (const how of ["throw", "validation"] as const) {
  for (const mode of ["inference", "training"] as const) {
    Deno.test(
      `${
        mode === "inference" ? "an" : "a"
      } ${mode} plan whose recording fails (${how}) gives back what it took`,
      opts,
      async () => {
        const weights = initWeights(tiny, 5);
        const batch = syntheticBatch(tiny, 3, 9);
        const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
        const run = (net: GpuNet) =>
          mode === "inference" ? net.infer(batch) : net.trainStep(batch, hyper, true);
        const fresh = await GpuNet.create(ctx!, weights);
        const want = await run(fresh);
        const freshBytes = (fresh as unknown as Inside).pool.bytes;

        const net = await GpuNet.create(ctx!, weights);
        const pool = (net as unknown as Inside).pool;
        const held = pool.held().size;
        const uniforms = failNextRecording(net, how);
        await assert.rejects(run(net), how === "throw" ? /injected/ : /shader_error|plan failed/);
        assert.ok(uniforms.length > 0, "the failed recording made uniforms");
        for (const u of uniforms) assert.ok(await writeFails(ctx!, u), "a uniform lives on");
        assert.equal(pool.held().size, held, "the failed recording's buffers are back in the pool");
        // Balanced: the recording popped the scope it pushed, so none is left to pop.
        await assert.rejects(ctx!.device.popErrorScope(), "an error scope was left pushed");

        const got = await run(net);
        assert.equal(
          pool.bytes,
          freshBytes,
          "the retry reused the buffers (the pool did not grow)",
        );
        assert.deepEqual(got, want);
        net.dispose();
        fresh.dispose();
      },
    );
  }
}

Deno.test(
  "a failed recording gives back only its own buffers, not those of one recorded meanwhile",
  opts,
  async () => {
    const weights = initWeights(tiny, 6);
    const five = syntheticBatch(tiny, 5, 11), three = syntheticBatch(tiny, 3, 12);
    const fresh = await GpuNet.create(ctx!, weights);
    const want = await fresh.infer(five);
    const freshHeld = (fresh as unknown as Inside).pool.held().size;

    const net = await GpuNet.create(ctx!, weights);
    failNextRecording(net, "validation", (size) => size < 5);
    // The batch-3 recording fails while the batch-5 one records beside it.
    const [failed, ok] = await Promise.allSettled([net.infer(three), net.infer(five)]);
    assert.equal(failed.status, "rejected");
    assert.equal(ok.status, "fulfilled");
    assert.equal((net as unknown as Inside).pool.held().size, freshHeld);
    assert.deepEqual(await net.infer(five), want);
    net.dispose();
    fresh.dispose();
  },
);
