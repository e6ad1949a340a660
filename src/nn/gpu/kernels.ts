import { KibitzError } from "../../errors.ts";
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import convDirectSrc from "../../../shaders/nn/conv_direct.wgsl" with { type: "text" };
import matmulSrc from "../../../shaders/nn/matmul.wgsl" with { type: "text" };
import elementwiseSrc from "../../../shaders/nn/elementwise.wgsl" with { type: "text" };
import batchnormSrc from "../../../shaders/nn/batchnorm.wgsl" with { type: "text" };
import batchnormDirectSrc from "../../../shaders/nn/batchnorm_direct.wgsl" with { type: "text" };
import batchnormVec4Src from "../../../shaders/nn/batchnorm_vec4.wgsl" with { type: "text" };
import gradscaleSrc from "../../../shaders/nn/gradscale.wgsl" with { type: "text" };
import lossDirectSrc from "../../../shaders/nn/loss_direct.wgsl" with { type: "text" };
import lossSrc from "../../../shaders/nn/loss.wgsl" with { type: "text" };
import sgdSrc from "../../../shaders/nn/sgd.wgsl" with { type: "text" };
import fusedSrc from "../../../shaders/nn/fused.wgsl" with { type: "text" };
import cellsSrc from "../../../shaders/nn/cells.wgsl" with { type: "text" };
import poolSrc from "../../../shaders/nn/pool.wgsl" with { type: "text" };
import compactSrc from "../../../shaders/nn/compact.wgsl" with { type: "text" };
import { expandPlanesSource } from "./sparse_planes.ts";
import fcSrc from "../../../shaders/nn/fc.wgsl" with { type: "text" };
import { convForwardSource, type ConvTile, convWgradSource } from "./conv_gemm.ts";
import { thinConvSource } from "./conv_thin.ts";
import { winogradSource } from "../winograd.ts";
import { winogradWgradSource } from "./winograd_gemm.ts";

/**
 * Tile shapes of the workgroup-memory GEMMs: the convolution's `small` (narrow layers) and `wide`
 * (128+ channels), and `matmul`, the side of the fully connected GEMM's square workgroup.
 */
export interface KernelTiles {
  small: ConvTile;
  wide: ConvTile;
  matmul: number;
}

/** The hardware tiles: 64 x 64 (4 x 4 per thread) and 128 x 128 (8 x 8 per thread), 256 threads. */
export const HARDWARE_TILES: KernelTiles = {
  small: { wx: 16, wy: 16, gm: 1, gn: 1, bk: 16 },
  wide: { wx: 16, wy: 16, gm: 2, gn: 2, bk: 8 },
  matmul: 16,
};

/**
 * The same code at 16 x 16 tiles and 16 threads: what CI compiles on the software adapter, where
 * the 256-thread kernels take from 10 s to a minute each to build.
 */
export const TEST_TILES: KernelTiles = {
  small: { wx: 4, wy: 4, gm: 1, gn: 1, bk: 4 },
  wide: { wx: 4, wy: 4, gm: 1, gn: 1, bk: 4 },
  matmul: 4,
};

/**
 * Replaces the one occurrence of `find` in WGSL `source` by `replacement`; throws (`wgsl_specialize`)
 * when `find` is missing or appears more than once, so an edited shader cannot silently lose its
 * specialization.
 */
export function specializeWgsl(
  source: string,
  find: string,
  replacement: string,
  what: string,
): string {
  const at = source.indexOf(find);
  if (at < 0 || source.indexOf(find, at + 1) >= 0) {
    throw new KibitzError(
      "wgsl_specialize",
      `${what}: expected exactly one "${find}" in the shader to specialize, found ${
        at < 0 ? "none" : "several"
      }`,
    );
  }
  return source.slice(0, at) + replacement + source.slice(at + find.length);
}

/** The fully connected GEMM's WGSL for a square workgroup of side `tw`. */
export function matmulSource(tw: number): string {
  return specializeWgsl(
    matmulSrc,
    "const TW = 16u;",
    `const TW = ${tw}u;`,
    "shaders/nn/matmul.wgsl",
  );
}

/**
 * The fully connected layer's K-major forward GEMM (shaders/nn/fc.wgsl) for a tw x tw workgroup:
 * 4 tw rows by 8 tw columns a workgroup.
 */
export function fcSource(tw: number): string {
  const wx = specializeWgsl(fcSrc, "const WX = 16u;", `const WX = ${tw}u;`, "shaders/nn/fc.wgsl");
  return specializeWgsl(wx, "const WY = 16u;", `const WY = ${tw}u;`, "shaders/nn/fc.wgsl");
}

function tiledEntries(tiles: KernelTiles) {
  const mm = matmulSource(tiles.matmul);
  return {
    matmul: [mm, "plain"],
    matmulBias: [mm, "with_bias"],
    fcNt: [fcSource(tiles.matmul), "fc_nt"],
    convForward3: [convForwardSource(tiles.small, 3), "forward"],
    convForward1: [convForwardSource(tiles.small, 1), "forward"],
    convWgrad3: [convWgradSource(tiles.small, 3), "wgrad"],
    convWgrad1: [convWgradSource(tiles.small, 1), "wgrad"],
    convForwardWide3: [convForwardSource(tiles.wide, 3), "forward"],
    convForwardWide1: [convForwardSource(tiles.wide, 1), "forward"],
    convWgradWide3: [convWgradSource(tiles.wide, 3), "wgrad"],
    convWgradWide1: [convWgradSource(tiles.wide, 1), "wgrad"],
    convForwardFused3: [convForwardSource(tiles.small, 3, true), "forward"],
    convForwardFused1: [convForwardSource(tiles.small, 1, true), "forward"],
    convForwardWideFused3: [convForwardSource(tiles.wide, 3, true), "forward"],
    convForwardWideFused1: [convForwardSource(tiles.wide, 1, true), "forward"],
    convThinFused: [thinConvSource("f32"), "thin"],
    winogradGemm: [convForwardSource(tiles.small, 1, false, true), "forward"],
    winogradGemmWide: [convForwardSource(tiles.wide, 1, false, true), "forward"],
    winogradWgradGemm: [winogradWgradSource(tiles.small), "wgrad"],
    winogradWgradGemmWide: [winogradWgradSource(tiles.wide), "wgrad"],
  } as const;
}

const ENTRIES = {
  ...tiledEntries(HARDWARE_TILES),
  convFlip: [convDirectSrc, "flip"],
  convForwardDirect: [convDirectSrc, "forward"],
  convWgradDirect: [convDirectSrc, "wgrad"],
  convForwardFusedDirect: [convDirectSrc, "forward_fused"],
  bnFold: [fusedSrc, "fold"],
  sumSplitsFused: [fusedSrc, "sum_epilogue"],
  winogradFilter2: [winogradSource(2), "wino_filter"],
  winogradInput2: [winogradSource(2), "wino_input"],
  winogradOutput2: [winogradSource(2), "wino_output"],
  winogradFilter4: [winogradSource(4), "wino_filter"],
  winogradInput4: [winogradSource(4), "wino_input"],
  winogradOutput4: [winogradSource(4), "wino_output"],
  winogradDout2: [winogradSource(2), "wino_dout"],
  winogradDout4: [winogradSource(4), "wino_dout"],
  winogradFilterGrad2: [winogradSource(2), "wino_filter_grad"],
  winogradFilterGrad4: [winogradSource(4), "wino_filter_grad"],
  winogradFilter6: [winogradSource(6), "wino_filter"],
  winogradInput6: [winogradSource(6), "wino_input"],
  winogradOutput6: [winogradSource(6), "wino_output"],
  winogradDout6: [winogradSource(6), "wino_dout"],
  winogradFilterGrad6: [winogradSource(6), "wino_filter_grad"],
  winogradFilter7: [winogradSource(7), "wino_filter"],
  winogradInput7: [winogradSource(7), "wino_input"],
  winogradOutput7: [winogradSource(7), "wino_output"],
  winogradDout7: [winogradSource(7), "wino_dout"],
  winogradFilterGrad7: [winogradSource(7), "wino_filter_grad"],
  matmulThin: [matmulSrc, "thin_plain"],
  matmulThinBias: [matmulSrc, "thin_bias"],
  matmulRows: [matmulSrc, "rows"],
  relu: [elementwiseSrc, "relu"],
  reluBackward: [elementwiseSrc, "relu_backward"],
  add: [elementwiseSrc, "add"],
  colsum: [elementwiseSrc, "colsum"],
  sumSplits: [elementwiseSrc, "sum_splits"],
  bnBatchStats: [batchnormSrc, "batch_stats"],
  bnRunningStats: [batchnormSrc, "running_stats"],
  bnApply: [batchnormSrc, "apply"],
  bnBackwardReduce: [batchnormSrc, "backward_reduce"],
  bnBackwardApply: [batchnormSrc, "backward_apply"],
  bnApplyRelu: [batchnormSrc, "apply_relu"],
  bnReluBackwardReduce: [batchnormSrc, "relu_backward_reduce"],
  bnReluBackwardApply: [batchnormSrc, "relu_backward_apply"],
  bnApplyRelu4: [batchnormVec4Src, "apply_relu"],
  gradAmax: [gradscaleSrc, "amax_partial"],
  gradScale: [gradscaleSrc, "amax_scale"],
  bnReluBackwardApply4: [batchnormVec4Src, "relu_backward_apply"],
  bnBatchStatsDirect: [batchnormDirectSrc, "batch_stats"],
  bnBackwardReduceDirect: [batchnormDirectSrc, "backward_reduce"],
  bnReluBackwardReduceDirect: [batchnormDirectSrc, "relu_backward_reduce"],
  softmax: [lossSrc, "softmax"],
  policyLoss: [lossSrc, "policy"],
  softmaxDirect: [lossDirectSrc, "softmax"],
  policyLossDirect: [lossDirectSrc, "policy"],
  valueOnly: [lossSrc, "value_only"],
  compactProbs: [compactSrc, "compact"],
  expandPlanes: [expandPlanesSource("f32"), "expand"],
  valueLoss: [lossSrc, "value"],
  sgdStep: [sgdSrc, "step"],
  sumsq: [sgdSrc, "sumsq"],
  cellZero: [cellsSrc, "zero"],
  cellLogits: [cellsSrc, "cell_logits"],
  cellDq: [cellsSrc, "cell_dq"],
  cellBiasGrad: [cellsSrc, "cell_dbias"],
  cellBiasGradDirect: [cellsSrc, "cell_dbias_direct"],
  meanPool: [poolSrc, "mean_pool"],
  meanPoolDirect: [poolSrc, "mean_pool_direct"],
  meanPoolBackward: [poolSrc, "mean_pool_backward"],
} as const;

/** Every WGSL source the network core compiles for `tiles` (for fingerprints of tuning results). */
export function kernelSources(tiles: KernelTiles): string[] {
  const entries = { ...ENTRIES, ...tiledEntries(tiles) };
  return [...new Set(Object.values(entries).map(([src]) => src as string))];
}

/** Names of the network's compute pipelines. */
export type KernelName = keyof typeof ENTRIES;

/** Every compiled pipeline of the network core, and the convolution tiles they were built for. */
export type NnKernels = Record<KernelName, GPUComputePipeline> & { tiles: KernelTiles };

/**
 * Which kernels to compile: the tiled (workgroup-memory) family, the direct family, or both. A
 * network uses one, and a software adapter needs minutes for the other's hardware-size GEMMs.
 */
export type KernelFamily = "tiled" | "direct" | "both";

const DIRECT_ONLY = new Set<string>([
  "convForwardDirect",
  "convWgradDirect",
  "convForwardFusedDirect",
  "bnBatchStatsDirect",
  "bnBackwardReduceDirect",
  "bnReluBackwardReduceDirect",
  "softmaxDirect",
  "policyLossDirect",
  "cellBiasGradDirect",
  "meanPoolDirect",
]);
const TILED_ONLY = new Set<string>([
  ...Object.keys(tiledEntries(HARDWARE_TILES)),
  "bnBatchStats",
  "bnBackwardReduce",
  "bnReluBackwardReduce",
  "softmax",
  "policyLoss",
  "cellBiasGrad",
  "meanPool",
]);

/**
 * Kernels compiled on demand (ensureKernels), not by loadKernels: the transforms of the large
 * tiles F(6x6) and F(7x7), two to three times F(4x4)'s code, which only a plan that takes one
 * runs (about 0.4 s and 1 s to compile on llvmpipe), by tile.
 */
export const LARGE_TILE_KERNELS: Readonly<Record<6 | 7, readonly KernelName[]>> = {
  6: [
    "winogradFilter6",
    "winogradInput6",
    "winogradOutput6",
    "winogradDout6",
    "winogradFilterGrad6",
  ],
  7: [
    "winogradFilter7",
    "winogradInput7",
    "winogradOutput7",
    "winogradDout7",
    "winogradFilterGrad7",
  ],
};
const ON_DEMAND = new Set<string>(Object.values(LARGE_TILE_KERNELS).flat());

/** Compiles the on-demand kernels `names` into `kernels` (once; later calls find them there). */
export async function ensureKernels(
  ctx: GpuContext,
  kernels: NnKernels,
  names: readonly KernelName[],
): Promise<void> {
  for (const name of names) {
    if (kernels[name]) continue;
    const [src, entry] = ENTRIES[name as keyof typeof ENTRIES];
    kernels[name] = await computePipeline(ctx, src, entry, {}, `nn.${name}`);
  }
}

const loaded = new WeakMap<GpuContext, Map<KernelTiles, Map<KernelFamily, Promise<NnKernels>>>>();

/**
 * Compiles (once per device, tile set and family) the WGSL kernels of the network core; the kernels
 * of the family left out are absent (recording one is an error).
 */
export function loadKernels(
  ctx: GpuContext,
  tiles = HARDWARE_TILES,
  family: KernelFamily = "both",
): Promise<NnKernels> {
  let perDevice = loaded.get(ctx);
  if (!perDevice) loaded.set(ctx, perDevice = new Map());
  let cache = perDevice.get(tiles);
  if (!cache) perDevice.set(tiles, cache = new Map());
  let hit = cache.get(family);
  if (!hit) {
    hit = (async () => {
      const out: Partial<NnKernels> = { tiles };
      const entries = { ...ENTRIES, ...tiledEntries(tiles) };
      for (const [name, [src, entry]] of Object.entries(entries)) {
        if (ON_DEMAND.has(name)) continue;
        if (family === "tiled" && DIRECT_ONLY.has(name)) continue;
        if (family === "direct" && TILED_ONLY.has(name)) continue;
        out[name as KernelName] = await computePipeline(ctx, src, entry, {}, `nn.${name}`);
      }
      return out as NnKernels;
    })();
    cache.set(family, hit);
  }
  return hit;
}
