// The fully connected layers' tuner: on hardware adapters, an inference plan's fully connected
// products that the K-major GEMM fits (fcNtFits) are timed in both kernels, the tiled matmul and
// fcNt, once per adapter and shape (kept in the tune cache), and the faster one runs. The two give
// the same bits (fc.wgsl's comment), so the choice changes speed only.
import { KibitzError } from "../../errors.ts";
import { envValue } from "../../env.ts";
import { describeAdapter, type GpuContext } from "../../gpu/device.ts";
import { timeComputePass } from "../../gpu/timing.ts";
import { GpuRecorder } from "./backend.ts";
import { fcNtFits, fcShapeKey } from "./fc.ts";
import type { NnKernels } from "./kernels.ts";
import { TensorPool } from "./tensor.ts";
import {
  markTimed,
  memoTuned,
  TUNE_PASS_MS,
  tuningOn,
  warmMs,
  type WinoTuneResult,
} from "./winograd_tune.ts";

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
  m: number,
  n: number,
  k: number,
): Promise<WinoTuneResult> {
  const key = `${describeAdapter(ctx.report)}|f32|${JSON.stringify(kernels.tiles)}|${
    fcShapeKey(m, n, k)
  }`;
  return memoTuned(key, () => timeFc(ctx, kernels, m, n, k));
}

async function timeFc(
  ctx: GpuContext,
  kernels: NnKernels,
  m: number,
  n: number,
  k: number,
): Promise<WinoTuneResult> {
  const pool = new TensorPool(ctx);
  const x = pool.acquire([m, k], "tune.fc.x");
  const w = pool.acquire([n, k], "tune.fc.w");
  const bias = pool.acquire([n], "tune.fc.bias");
  const recs = [FC_KERNELS.tiled, FC_KERNELS.nt].map((name) => {
    const rec = new GpuRecorder(ctx, kernels, pool, true);
    if (name === FC_KERNELS.nt) rec.fcNt.add(fcShapeKey(m, n, k));
    pool.release(rec.linear(x, w, bias));
    return { name, rec };
  });
  const warmUntil = performance.now() + warmMs(ctx, 300);
  do {
    await timeComputePass(ctx, (pass) => {
      for (let i = 0; i < 5; i++) for (const e of recs) e.rec.encode(pass);
    });
  } while (performance.now() < warmUntil);
  const reps = new Map<string, number>();
  for (const e of recs) {
    const once = await timeComputePass(ctx, (pass) => e.rec.encode(pass));
    const ms = Math.max(0.005, once.gpuMs ?? once.wallMs);
    reps.set(
      e.name,
      ctx.report.isFallback ? 3 : Math.max(20, Math.min(400, Math.ceil(TUNE_PASS_MS / ms))),
    );
  }
  const best = new Map<string, number>();
  let timer = "wall";
  for (let round = 0; round < 3; round++) {
    for (const e of recs) {
      const r = reps.get(e.name)!;
      const t = await timeComputePass(ctx, (pass) => {
        for (let i = 0; i < r; i++) e.rec.encode(pass);
      });
      if (t.gpuMs !== null) timer = "gpu timestamps";
      best.set(e.name, Math.min(best.get(e.name) ?? Infinity, (t.gpuMs ?? t.wallMs) / r));
    }
  }
  markTimed();
  for (const e of recs) e.rec.destroy();
  pool.destroy();
  const win = recs.reduce((a, b) => (best.get(b.name)! < best.get(a.name)! ? b : a));
  return {
    adapter: describeAdapter(ctx.report),
    storage: "f32",
    shape: `fc ${m}x${k}->${n}`,
    dims: { n: m, ci: k, co: n, h: 1, w: 1, k: 1 },
    winner: win.name,
    timings: recs.map((e) => ({ name: e.name, ms: best.get(e.name)!, gemmMs: null })),
    timer: `${timer}, best of 3 passes of ${
      [...new Set(reps.values())].sort((a, b) => a - b).join("/")
    } repetitions`,
  };
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
      if ((await tuneFc(ctx, kernels, m, n, k)).winner !== FC_KERNELS.nt) continue;
    }
    rec.fcNt.add(fcShapeKey(m, n, k));
  }
}
