import type { GpuContext } from "./device.ts";
import { computePipeline } from "./pipeline.ts";
import { readBuffer, storageBuffer, uniformBuffer } from "./buffers.ts";
import { dispatch, workgroups1d } from "./dispatch.ts";
import { withOwned } from "./owned.ts";
import source from "../../shaders/gpu/selftest.wgsl" with { type: "text" };

/** Outcome of the GPU self-test kernel. */
export interface SelfTestResult {
  ok: boolean;
  n: number;
  mismatches: number;
  firstMismatch: string | null;
}

/** Runs a small kernel and checks every output word against the CPU, proving dispatch and readback work. */
export async function gpuSelfTest(ctx: GpuContext, n = 100_003): Promise<SelfTestResult> {
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = (Math.imul(i, 2654435761) >>> 0) ^ 0x5bd1e995;
  const params = new Uint32Array([n]);
  const pipeline = await computePipeline(ctx, source, "main", {}, "selftest");
  const [out, f] = await withOwned(async (own) => {
    const bufA = own(storageBuffer(ctx, a, "selftest.a"));
    const bufOut = own(storageBuffer(ctx, n * 4, "selftest.out"));
    const bufF = own(storageBuffer(ctx, n * 4, "selftest.f"));
    const bufP = own(uniformBuffer(ctx, params.buffer));
    await dispatch(ctx, pipeline, [bufA, bufOut, bufF, bufP], workgroups1d(ctx, n, 64));
    return [
      new Uint32Array(await readBuffer(ctx, bufOut, n * 4)),
      new Float32Array(await readBuffer(ctx, bufF, n * 4)),
    ] as const;
  });
  let mismatches = 0;
  let firstMismatch: string | null = null;
  for (let i = 0; i < n; i++) {
    const want = (Math.imul(a[i], 3) + i) >>> 0;
    const wantF = Math.fround(Math.sqrt(i));
    // WGSL sqrt is allowed 2.5 ULP of error; compare with a relative bound.
    const fOk = Math.abs(f[i] - wantF) <= 1e-6 * Math.max(1, wantF);
    if (out[i] !== want || !fOk) {
      mismatches++;
      firstMismatch ??= `index ${i}: got (${out[i]}, ${f[i]}), want (${want}, ${wantF})`;
    }
  }
  return { ok: mismatches === 0, n, mismatches, firstMismatch };
}
