// Whether an inference layer runs with mixed F(7x7)/F(6x6) tiles (src/nn/winograd_mixed.ts,
// src/nn/gpu/winograd_mixed.ts): the policy, and the tuner's comparison against the tile and
// kernels the layer was given.
import { describeAdapter, type GpuContext } from "../../gpu/device.ts";
import { envValue } from "../../env.ts";
import { mixedTiling } from "../winograd_mixed.ts";
import type { WinogradTile } from "../winograd.ts";
import type { WinoKernels } from "./winograd_gemm.ts";
import type { NnKernels } from "./kernels.ts";
import { ensureWinogradTile, type HalfKernels } from "./f16.ts";
import { type GpuRecorder, winoShapeKey } from "./backend.ts";
import { withScratch } from "./scratch_scope.ts";
import { withValidation } from "../../gpu/error_scope.ts";
import {
  loadMixedKernels,
  mixedCandidate,
  mixedCandidates,
  type MixedKernels,
} from "./winograd_mixed.ts";
import {
  bucketed,
  memoTuned,
  parseTilePolicy,
  timeUnderLoad,
  tuningOn,
  type Winograd6Policy,
  type WinoShape,
  winoTuneInputs,
  type WinoTuneResult,
} from "./winograd_tune.ts";

/**
 * Whether a layer may run with mixed F(7x7)/F(6x6) tiles (GpuNet's `winogradMixed`,
 * KIBITZ_NN_WINO_MIXED): "tuned" times it against the layer's tile and kernels on hardware
 * adapters (software adapters keep the tile), "on" takes it wherever the board allows it (26 x 26),
 * "off" never.
 */
export type WinogradMixedPolicy = Winograd6Policy;

/** Parses a WinogradMixedPolicy (the KIBITZ_NN_WINO_MIXED values). */
export function parseWinogradMixed(v: string): WinogradMixedPolicy {
  return parseTilePolicy("KIBITZ_NN_WINO_MIXED", v);
}

/** KIBITZ_NN_WINO_MIXED where set, else "tuned". */
export function defaultWinogradMixed(v = envValue("KIBITZ_NN_WINO_MIXED")): WinogradMixedPolicy {
  return v === undefined || v === "" ? "tuned" : parseWinogradMixed(v);
}

/** How the tuning log's mixed-tile shapes begin (no "|": the bench prints them in tables). */
export const MIXED_SHAPE = "F7/F6:";

/** The key of a mixed-tile layer shape in the tuning log. */
export function mixedShapeKey(s: WinoShape): string {
  return `${MIXED_SHAPE}${s.n}x${s.ci}x${s.h}x${s.w}->${s.co}`;
}

/**
 * Times a fused 3x3 inference conv of `shape` at its tile m with its kernels (`own`, null: the
 * built-in GEMM) against the mixed tiles with each of `mixed`'s GEMMs, once per adapter, storage,
 * bucketed shape and list (the tuning log and disk cache keep it). Rows: `F<m> <candidate>` and
 * `mixed <candidate>`.
 */
export function compareMixed(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  m: WinogradTile,
  own: WinoKernels | null,
  mixed: readonly MixedKernels[],
): Promise<WinoTuneResult> {
  const s = bucketed(shape);
  const act = half?.storage ?? "f32";
  const ownName = `F${m} ${own?.candidate.name ?? "legacy"}`;
  const names = mixed.map((k) => `mixed ${k.candidate.name}`);
  const key = `${describeAdapter(ctx.report)}|${act}|${JSON.stringify(kernels.tiles)}|${
    mixedShapeKey(s)
  }|${[ownName, ...names].join(",")}`;
  return memoTuned(key, async () => {
    await ensureWinogradTile(ctx, kernels, half, m);
    return withScratch(ctx, kernels, async ({ pool, recorder }) => {
      const { x, u: uTile, bias } = winoTuneInputs(pool, half, m, s);
      const recs: { name: string; rec: GpuRecorder }[] = [];
      const a = recorder();
      a.half = half;
      recs.push({ name: ownName, rec: a });
      if (own) a.winoChoice.set(winoShapeKey(m, s.n, s.ci, s.co, s.h, s.w), own);
      pool.release(a.convWinogradFused(x, uTile, m, bias, null, true));
      const uMixed = mixed.length
        ? pool.acquire([mixed[0].tiling.alpha, s.co, s.ci], "tune.u.mixed")
        : null;
      // A tiling past the adapter's workgroup memory (WebGPU's 16 KiB default) records a failure.
      const failed: WinoTuneResult["timings"] = [];
      for (const [i, k] of mixed.entries()) {
        const b = recorder();
        b.half = half;
        const { value: y, error } = await withValidation(
          ctx,
          () => b.convMixedFused(x, uMixed!, k, bias, null, true),
        );
        pool.release(y);
        if (error) {
          failed.push({ name: names[i], ms: null, gemmMs: null, error: error.message });
        } else {
          recs.push({ name: names[i], rec: b });
        }
      }
      const r = await timeUnderLoad(ctx, recs);
      return {
        adapter: describeAdapter(ctx.report),
        storage: act,
        shape: mixedShapeKey(s),
        dims: s,
        ...r,
        timings: [...r.timings, ...failed],
      };
    });
  });
}

/**
 * The mixed-tile kernels a fused 3x3 inference conv of `shape` runs, or null where it stays at
 * its tile m with kernels `own`: "on" takes the mixed tiles wherever the board allows them (with
 * mixedCandidate's GEMM), "tuned" where compareMixed finds them faster with one of
 * mixedCandidates' GEMMs (hardware adapters, tuning on), with the fastest.
 */
export async function pickMixed(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  m: WinogradTile,
  own: WinoKernels | null,
  policy: WinogradMixedPolicy,
): Promise<MixedKernels | null> {
  const t = mixedTiling(shape.h, shape.w);
  if (!t || policy === "off" || (shape.k ?? 3) !== 3) return null;
  if (policy === "tuned" && (ctx.report.isFallback || !tuningOn())) return null;
  const act = half?.storage ?? "f32";
  if (policy === "on") {
    return await loadMixedKernels(ctx, t, act, mixedCandidate(ctx, own?.candidate));
  }
  // A tiling whose kernels do not compile here is left out (the comparison records the others).
  const loaded = await Promise.allSettled(
    mixedCandidates(ctx, own?.candidate).map((c) => loadMixedKernels(ctx, t, act, c)),
  );
  const mixed = loaded.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  if (!mixed.length) return null;
  const r = await compareMixed(ctx, kernels, half, shape, m, own, mixed).catch(() => null);
  return mixed.find((k) => `mixed ${k.candidate.name}` === r?.winner) ?? null;
}
