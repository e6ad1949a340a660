// The queue-copy probe (src/gpu/copy_probe.ts): GPU times of an upload and a readback copy from
// timestamped passes, and nothing where the adapter has no timestamps.
import assert from "node:assert/strict";
import { getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { queueCopyTimes } from "../../src/gpu/copy_probe.ts";

const ctx = await getGpu();

Deno.test({
  name: "queueCopyTimes: an upload and a readback copy, in GPU ms, longer for more bytes",
  ignore: !ctx?.timestamps,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const small = await queueCopyTimes(ctx!, { upload: 2 << 20, readback: 2 << 20 }, 3, 5);
    const big = await queueCopyTimes(ctx!, { upload: 64 << 20, readback: 64 << 20 }, 3, 5);
    assert.ok(small && big);
    for (const t of [small, big]) {
      assert.ok(Number.isFinite(t.uploadMs) && t.uploadMs >= 0, String(t.uploadMs));
      assert.ok(Number.isFinite(t.readbackMs) && t.readbackMs >= 0, String(t.readbackMs));
    }
    // The copies are what is timed: 32 times the bytes take several times as long on any adapter
    // (llvmpipe: about 1 ms a MiB uploaded, 0.22 ms a MiB copied for readback; 64 MiB over an
    // H200's PCIe about 1.3 ms), while gaps without a copy leave noise within 0.1 ms of zero.
    for (const k of ["uploadMs", "readbackMs"] as const) {
      assert.ok(big[k] > 3 * small[k] + 0.2, `${k}: ${big[k]} against ${small[k]}`);
    }
  },
});

Deno.test("queueCopyTimes: null without timestamp queries", async () => {
  const noTs = { timestamps: false } as unknown as GpuContext;
  assert.equal(await queueCopyTimes(noTs, { upload: 16, readback: 16 }), null);
});
