import type { GpuContext } from "./device.ts";
import { computePipeline } from "./pipeline.ts";
import { readBuffer, storageBuffer, uniformBuffer } from "./buffers.ts";
import { dispatch, workgroups1d } from "./dispatch.ts";
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
  const bufA = storageBuffer(ctx, a, "selftest.a");
  const bufOut = storageBuffer(ctx, n * 4, "selftest.out");
  const bufF = storageBuffer(ctx, n * 4, "selftest.f");
  const bufP = uniformBuffer(ctx, params.buffer);
  await dispatch(ctx, pipeline, [bufA, bufOut, bufF, bufP], workgroups1d(ctx, n, 64));
  const out = new Uint32Array(await readBuffer(ctx, bufOut, n * 4));
  const f = new Float32Array(await readBuffer(ctx, bufF, n * 4));
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
  for (const b of [bufA, bufOut, bufF, bufP]) b.destroy();
  return { ok: mismatches === 0, n, mismatches, firstMismatch };
}
