// withScratch on WebGPU (llvmpipe in CI): a tuning pass's pool, recorders (tiled and untiled) and
// owned buffers are freed when the pass returns and when it throws; a freed buffer is seen as destroyed by the device itself (a
// write to it fails validation), not only by the pool's own count.
import assert from "node:assert/strict";
import { writeFails } from "../helpers/gpu_freed.ts";
import { storageBuffer } from "../../src/gpu/buffers.ts";
import { getGpu } from "../../src/gpu/device.ts";
import type { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import type { TensorPool } from "../../src/nn/gpu/tensor.ts";
import { withScratch } from "../../src/nn/gpu/scratch_scope.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

/** A pass's leftovers: its pool, a pooled buffer, its recorders and one of their uniforms. */
interface Seen {
  pool: TensorPool;
  buffer: GPUBuffer;
  recs: GpuRecorder[];
  uniform: GPUBuffer;
  owned: GPUBuffer;
}

for (const ending of ["returns", "throws"] as const) {
  Deno.test(
    `withScratch frees the pool, recorders and owned buffers when the pass ${ending}`,
    opts,
    async () => {
      const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
      let seen: Seen | null = null;
      const pass = withScratch(ctx!, kernels, async ({ pool, recorder, own }) => {
        const x = pool.acquire([4, 8], "test.x");
        const w = pool.acquire([3, 8], "test.w");
        const bias = pool.acquire([3], "test.bias");
        const recs = [recorder(), recorder(false)];
        const owned = own(storageBuffer(ctx!, 64, "test.owned"));
        for (const rec of recs) pool.release(rec.linear(x, w, bias));
        assert.ok(recs[1].uniforms.length > 0, "linear records a uniform");
        assert.ok(pool.bytes > 0);
        assert.equal(await writeFails(ctx!, x.buffer), false, "alive inside the pass");
        assert.equal(await writeFails(ctx!, owned), false, "owned: alive inside the pass");
        seen = { pool, buffer: x.buffer, recs, uniform: recs[1].uniforms[0], owned };
        if (ending === "throws") throw new Error("device lost mid-pass");
        return 42;
      });
      if (ending === "throws") await assert.rejects(pass, /device lost mid-pass/);
      else assert.equal(await pass, 42);
      const s = seen as Seen | null;
      assert.ok(s);
      assert.equal(s.pool.bytes, 0);
      for (const rec of s.recs) assert.equal(rec.uniforms.length, 0);
      assert.ok(await writeFails(ctx!, s.buffer), "the pooled buffer is destroyed");
      assert.ok(await writeFails(ctx!, s.uniform), "the recorder's uniform is destroyed");
      assert.ok(await writeFails(ctx!, s.owned), "the owned buffer is destroyed");
    },
  );
}
