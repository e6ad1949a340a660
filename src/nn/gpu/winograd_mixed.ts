// The mixed-tile Winograd conv's kernels on the GPU (src/nn/winograd_mixed.ts): its transforms'
// pipelines beside one batched GEMM of the square tiles' candidates (289 slices on a 26 x 26
// board), and the column-staged output transform of `-c` candidates (winograd_mixed_staged.ts).
// The inference tuner's side is src/nn/gpu/winograd_mixed_tune.ts.
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { oncePerDevice, type PerDevice } from "../../gpu/per_device.ts";
import { KibitzError } from "../../errors.ts";
import { type MixedTiling, winogradMixedSource } from "../winograd_mixed.ts";
import { winogradMixedOutputStagedSource } from "./winograd_mixed_staged.ts";
import {
  type GemmCandidate,
  hardwareCandidates,
  stagedCandidate,
  testCandidates,
  type TransformedStorage,
  type WinoCandidate,
  winoGemmName,
  winogradGemmSource,
} from "./winograd_gemm.ts";

/** The compiled kernels of a mixed-tile conv: three transforms and the GEMM of one candidate. */
export interface MixedKernels {
  tiling: MixedTiling;
  candidate: GemmCandidate;
  act: TransformedStorage;
  filter: GPUComputePipeline;
  input: GPUComputePipeline;
  gemm: GPUComputePipeline;
  output: GPUComputePipeline;
  /** The column-staged output transform of a stagedOut candidate (then in place of `output`). */
  outputStaged?: GPUComputePipeline;
}

/**
 * Whether candidate c's GEMM can run the mixed tiles: a plain GEMM (not fused), V and M in f32,
 * one partial (the mixed output transform reads one M). Its staged or plane-staged transforms are
 * the square tiles' (mixedCandidates takes its GEMM by its plain name); the mixed tiles have a
 * column-staged output transform of their own (stagedOut), and no other.
 */
export function mixedGemmFits(c: WinoCandidate | null | undefined): c is GemmCandidate {
  return !!c && !c.fused && !c.half && (c.gemm.splits ?? 1) === 1;
}

const compiled: PerDevice<MixedKernels> = new WeakMap();

/** Compiles (once per device) the mixed-tile kernels of tiling t with candidate c's GEMM. */
export function loadMixedKernels(
  ctx: GpuContext,
  t: MixedTiling,
  act: TransformedStorage,
  c: GemmCandidate,
): Promise<MixedKernels> {
  if (!mixedGemmFits(c)) {
    throw new KibitzError(
      "bad_args",
      `mixed Winograd tiles need a plain f32 V/M GEMM, not ${(c as WinoCandidate).name}`,
    );
  }
  if (c.planeOut || c.stagedIn) {
    throw new KibitzError(
      "bad_args",
      `mixed Winograd tiles stage only their output transform (-c), not ${c.name}`,
    );
  }
  const staged = c.stagedOut ?? 0;
  const key = `${t.h}x${t.w}:${act}:${staged}:${JSON.stringify(c.gemm)}`;
  return oncePerDevice(compiled, ctx, key, async () => {
    const src = winogradMixedSource(t, act);
    const label = `nn.wino.mixed.${c.name}`;
    const arith = act === "f16-emulated" ? "f16-emulated" : "f16";
    return {
      tiling: t,
      candidate: c,
      act,
      filter: await computePipeline(ctx, src, "mixed_filter", {}, `${label}.filter`),
      input: await computePipeline(ctx, src, "mixed_input", {}, `${label}.input`),
      gemm: await computePipeline(
        ctx,
        winogradGemmSource(c.gemm, "f32", arith),
        "gemm",
        {},
        `${label}.gemm`,
      ),
      output: await computePipeline(ctx, src, "mixed_output", {}, `${label}.output`),
      ...(staged
        ? {
          outputStaged: await computePipeline(
            ctx,
            winogradMixedOutputStagedSource(t, act, staged),
            "mixed_output_staged",
            {},
            `${label}.output-staged`,
          ),
        }
        : {}),
    };
  });
}

/**
 * The GEMM tilings mixed tiles are timed with on hardware besides the layer's own: the H200's three
 * fastest F(4x4) tilings at batch 256 (session 29), F(7x7)'s fastest among them (sessions 29-31:
 * `128x128k8t256ruvp`) first.
 */
export const MIXED_TILINGS = ["128x128k8t256ruvp", "64x128k8t256ruvp", "128x128k16t256rudvp"];

/**
 * The GEMM candidates a layer's mixed tiles are timed with: its own tuned candidate where it fits
 * (mixedGemmFits), then MIXED_TILINGS (on software adapters one 16-thread test tiling that
 * compiles in seconds), then the first one's `-c` twin: the column-staged output transform
 * (winograd_mixed_staged.ts), for the output transform the H200 ran at a third of its bandwidth.
 */
export function mixedCandidates(
  ctx: GpuContext,
  own: WinoCandidate | null | undefined,
): GemmCandidate[] {
  const rest = ctx.report.isFallback
    ? testCandidates().filter(mixedGemmFits).slice(0, 1)
    : MIXED_TILINGS.map((n) => hardwareCandidates(false).find((c) => c.name === n)!);
  // The layer's own GEMM by its plain name: its staged or plane-staged transforms are the square
  // tiles', not the mixed tiles'.
  const out: GemmCandidate[] = mixedGemmFits(own)
    ? [{ name: winoGemmName(own.gemm), gemm: own.gemm, half: false }]
    : [];
  for (const c of rest) if (!out.some((x) => x.name === c.name)) out.push(c);
  // Workgroups of 63 threads on software adapters, as the square tiles' test twins.
  return [...out, stagedCandidate(out[0], "c", ctx.report.isFallback ? 64 : 256)];
}

/** The GEMM candidate mixed tiles run where they are not timed: mixedCandidates' first. */
export function mixedCandidate(
  ctx: GpuContext,
  own: WinoCandidate | null | undefined,
): GemmCandidate {
  return mixedCandidates(ctx, own)[0];
}
