// The submit-gap probe (src/gpu/submit_gap.ts): the GPU time from one run of a pass's end to the
// next one's start, at a pass boundary, a submit boundary and across a map request; nothing where
// the adapter has no timestamps.
import assert from "node:assert/strict";
import { getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { storageBuffer, uniformBuffer } from "../../src/gpu/buffers.ts";
import { computePipeline } from "../../src/gpu/pipeline.ts";
import { SPIN_WGSL } from "../../src/gpu/copy_probe.ts";
import { submitGaps } from "../../src/gpu/submit_gap.ts";
import { timeComputePass } from "../../src/gpu/timing.ts";

const ctx = await getGpu();

Deno.test({
  name: "submitGaps: three gaps in GPU ms, each far shorter than the pass they separate",
  ignore: !ctx?.timestamps,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const pipeline = await computePipeline(ctx!, SPIN_WGSL, "spin", {}, "submit-gap.test");
    const out = storageBuffer(ctx!, 16, "submit-gap.out");
    const params = uniformBuffer(ctx!, new Uint32Array([1 << 22, 0, 0, 0]).buffer, "p");
    const bind = ctx!.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: out } }, {
        binding: 1,
        resource: { buffer: params },
      }],
    });
    const record = (pass: GPUComputePassEncoder) => {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(1);
    };
    const passMs = (await timeComputePass(ctx!, record)).gpuMs!;
    const g = await submitGaps(ctx!, record);
    assert.ok(g);
    // A probe that timed the passes instead of what lies between them would give about passMs.
    for (const [k, ms] of Object.entries(g)) {
      assert.ok(
        Number.isFinite(ms) && ms > -0.05 && ms < passMs / 2,
        `${k}: ${ms} (pass ${passMs})`,
      );
    }
    out.destroy();
    params.destroy();
  },
});

Deno.test("submitGaps: null where the adapter has no timestamp queries", async () => {
  const noTimestamps = { timestamps: false } as unknown as GpuContext;
  assert.equal(await submitGaps(noTimestamps, () => {}), null);
});
