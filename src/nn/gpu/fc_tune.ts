// The fully connected layers' tuner: on hardware adapters, an inference plan's fully connected
// products that the K-major GEMM fits (fcNtFits) are timed in both kernels, the tiled matmul and
// fcNt, once per adapter and shape (kept in the tune cache), and the faster one runs. The two give
// the same bits (fc.wgsl's comment), so the choice changes speed only.
import { KibitzError } from "../../errors.ts";
import { envValue } from "../../env.ts";
import { describeAdapter, type GpuContext } from "../../gpu/device.ts";
import type { GpuRecorder } from "./backend.ts";
import { fcNtFits, fcShapeKey } from "./fc.ts";
import type { NnKernels } from "./kernels.ts";
import { withScratch } from "./scratch_scope.ts";
import { memoTuned, timeUnderLoad, tuningOn, type WinoTuneResult } from "./winograd_tune.ts";

/** The tuner's names of the two kernels. */
export const FC_KERNELS = { tiled: "matmul", nt: "fc_nt" } as const;

/** The strides GpuRecorder.linear hands matmul for x [m, k] times W [n, k] transposed. */
function linearStrides(k: number): number[] {
  return [k, 1, 1, k];
}

/**
 * Times one fully connected product [m rows, n outputs, k inputs] with bias in the tiled matmul
 * and in fcNt (once per adapter, tiles and shape; the tune cache keeps it); the winner is
 * FC_KERNELS.nt or FC_KERNELS.tiled.
 */
export function tuneFc(
  ctx: GpuContext,
  kernels: NnKernels,
  [m, n, k]: readonly [number, number, number],
): Promise<WinoTuneResult> {
  const key = `${describeAdapter(ctx.report)}|f32|${JSON.stringify(kernels.tiles)}|${
    fcShapeKey(m, n, k)
  }`;
  return memoTuned(key, () =>
    withScratch(ctx, kernels, async ({ pool, recorder }) => {
      const x = pool.acquire([m, k], "tune.fc.x");
      const w = pool.acquire([n, k], "tune.fc.w");
      const bias = pool.acquire([n], "tune.fc.bias");
      const recs = [FC_KERNELS.tiled, FC_KERNELS.nt].map((name) => {
        const rec = recorder();
        if (name === FC_KERNELS.nt) rec.fcNt.add(fcShapeKey(m, n, k));
        pool.release(rec.linear(x, w, bias));
        return { name, rec };
      });
      const t = await timeUnderLoad(ctx, recs);
      return {
        adapter: describeAdapter(ctx.report),
        storage: "f32",
        shape: `fc ${m}x${k}->${n}`,
        dims: { n: m, ci: k, co: n, h: 1, w: 1, k: 1 },
        ...t,
      };
    }));
}

/** How a net picks its fully connected kernel: timed per shape, or forced (tests, A/B). */
export type FcKernelPolicy = "tuned" | "nt" | "tiled";

/** KIBITZ_NN_FC's policy (tuned, nt or tiled), "tuned" where unset; a clear error otherwise. */
export function fcKernelPolicy(v = envValue("KIBITZ_NN_FC")): FcKernelPolicy {
  if (v === undefined || v === "") return "tuned";
  if (v === "tuned" || v === "nt" || v === "tiled") return v;
  throw new KibitzError("bad_args", `KIBITZ_NN_FC must be tuned, nt or tiled, got "${v}"`);
}

/**
 * Fills rec.fcNt for the fully connected products [m, n, k] of an inference plan: every one fcNt
 * fits under "nt"; under "tuned", those where fcNt timed faster (hardware adapters with tuning on;
 * software adapters keep the tiled matmul).
 */
export async function pickFcKernels(
  ctx: GpuContext,
  kernels: NnKernels,
  rec: GpuRecorder,
  products: readonly [number, number, number][],
  policy: FcKernelPolicy,
): Promise<void> {
  if (policy === "tiled" || !rec.tiled) return;
  for (const [m, n, k] of products) {
    if (!fcNtFits(m, n, k, linearStrides(k))) continue;
    if (policy === "tuned") {
      if (ctx.report.isFallback || !tuningOn()) continue;
      if ((await tuneFc(ctx, kernels, [m, n, k])).winner !== FC_KERNELS.nt) continue;
    }
    rec.fcNt.add(fcShapeKey(m, n, k));
  }
}
