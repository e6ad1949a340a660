// f16 storage for the fused inference graph: the kernels that an f16 plan adds to the f32 family.
// Activations and folded conv weights are stored as f16 (alias s16), every kernel converts them to
// f32 on load, accumulates in f32 and rounds once on store; biases, the heads' fully connected
// layers, the softmax and the value head stay f32. `f16-emulated` binds s16 to f32: the same kernel
// text, runnable (and tested) on adapters without `shader-f16`.
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { oncePerDevice, type PerDevice } from "../../gpu/per_device.ts";
import { convForwardSource, type ConvStorage, f16Prelude } from "./conv_gemm.ts";
import { thinConvSource } from "./conv_thin.ts";
import { expandPlanesSource } from "./sparse_planes.ts";
import { ensureKernels, type KernelTiles, LARGE_TILE_KERNELS, type NnKernels } from "./kernels.ts";
import { winogradSource, type WinogradTile } from "../winograd.ts";

/** The storages of an f16 plan (f16 proper, or its f32-bound emulation for software adapters). */
export type HalfStorage = Exclude<ConvStorage, "f32">;

/**
 * Casts and the split-K sum with its epilogue: `to_half` (f32 -> s16), `to_full` (s16 -> f32) and
 * `sum_epilogue` (f32 partials -> s16 output, s16 residual), as fused.wgsl's sum_epilogue.
 */
export function f16MiscSource(storage: HalfStorage): string {
  return `${f16Prelude(storage)}struct Params { n: u32, per: u32, co: u32, hw: u32 }
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> src32: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst16: array<s16>;
@group(0) @binding(2) var<storage, read> src16: array<s16>;
@group(0) @binding(3) var<storage, read_write> dst32: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

@group(0) @binding(8) var<storage, read> part: array<f32>;
@group(0) @binding(9) var<storage, read> bias: array<f32>;
@group(0) @binding(10) var<storage, read> res: array<s16>;
@group(0) @binding(11) var<storage, read_write> out: array<s16>;
@group(0) @binding(12) var<uniform> fz: Fuse;

// p.n = element count.
@compute @workgroup_size(64)
fn to_half(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  dst16[i] = s16(src32[i]);
}

@compute @workgroup_size(64)
fn to_full(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  dst32[i] = f32(src16[i]);
}

// p.n = numel(Y), p.per = split count, p.co = Co, p.hw = H W.
@compute @workgroup_size(64)
fn sum_epilogue(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.per; r++) { s += part[r * p.n + i]; }
  s += bias[(i / p.hw) % p.co];
  if (fz.res != 0u) { s += f32(res[i]); }
  if (fz.relu != 0u) { s = max(s, 0.0); }
  out[i] = s16(s);
}
`;
}

/** The WGSL (source, entry point) of every kernel an f16 plan adds, by name. */
export function f16Entries(tiles: KernelTiles, storage: HalfStorage) {
  const misc = f16MiscSource(storage);
  const conv = (wide: boolean, k: number, partial: boolean) =>
    [
      convForwardSource(wide ? tiles.wide : tiles.small, k, !partial, false, storage, partial),
      "forward",
    ] as const;
  return {
    convForwardFusedH3: conv(false, 3, false),
    convForwardFusedH1: conv(false, 1, false),
    convForwardWideFusedH3: conv(true, 3, false),
    convForwardWideFusedH1: conv(true, 1, false),
    convForwardPartH3: conv(false, 3, true),
    convForwardPartH1: conv(false, 1, true),
    convForwardWidePartH3: conv(true, 3, true),
    convForwardWidePartH1: conv(true, 1, true),
    convThinFusedH: [thinConvSource(storage), "thin"],
    toHalf: [misc, "to_half"],
    expandPlanesH: [expandPlanesSource(storage), "expand"],
    toFull: [misc, "to_full"],
    sumSplitsFusedH: [misc, "sum_epilogue"],
    winogradInputH2: [winogradSource(2, storage), "wino_input"],
    winogradOutputH2: [winogradSource(2, storage), "wino_output"],
    winogradInputH4: [winogradSource(4, storage), "wino_input"],
    winogradOutputH4: [winogradSource(4, storage), "wino_output"],
    winogradInputH6: [winogradSource(6, storage), "wino_input"],
    winogradOutputH6: [winogradSource(6, storage), "wino_output"],
    winogradInputH7: [winogradSource(7, storage), "wino_input"],
    winogradOutputH7: [winogradSource(7, storage), "wino_output"],
  } as const;
}

/** The f16 plan's kernels compiled on demand (ensureHalfKernels): the large tiles' transforms. */
export const HALF_LARGE_TILE_KERNELS: Readonly<Record<6 | 7, readonly HalfKernelName[]>> = {
  6: ["winogradInputH6", "winogradOutputH6"],
  7: ["winogradInputH7", "winogradOutputH7"],
};
const HALF_ON_DEMAND = new Set<string>(Object.values(HALF_LARGE_TILE_KERNELS).flat());

/** Names of the f16 plan's kernels. */
export type HalfKernelName = keyof ReturnType<typeof f16Entries>;

/** The compiled f16 kernels and the storage they were built for. */
export type HalfKernels = Record<HalfKernelName, GPUComputePipeline> & { storage: HalfStorage };

const loaded: PerDevice<HalfKernels> = new WeakMap();

/** Whether the device was created with `shader-f16` (f16 storage is possible at all). */
export function deviceHasF16(ctx: GpuContext): boolean {
  return ctx.device.features.has("shader-f16");
}

/**
 * Compiles (once per device, tiles and storage) the f16 plan's kernels; `f16` needs a device with
 * `shader-f16`, `f16-emulated` runs anywhere.
 */
export function loadHalfKernels(
  ctx: GpuContext,
  tiles: KernelTiles,
  storage: HalfStorage,
): Promise<HalfKernels> {
  if (storage === "f16" && !deviceHasF16(ctx)) {
    return Promise.reject(new Error("f16 kernels need a device with the shader-f16 feature"));
  }
  return oncePerDevice(loaded, ctx, `${storage}:${JSON.stringify(tiles)}`, async () => {
    const out: Partial<HalfKernels> = { storage };
    for (const [name, [src, entry]] of Object.entries(f16Entries(tiles, storage))) {
      if (HALF_ON_DEMAND.has(name)) continue;
      out[name as HalfKernelName] = await computePipeline(ctx, src, entry, {}, `nn.${name}`);
    }
    return out as HalfKernels;
  });
}

/**
 * Compiles tile m's on-demand transform kernels (F(6x6), F(7x7); nothing for the others) into
 * `kernels` and, for an f16 plan, `half` (a network or check that runs such a tile calls it first).
 */
export async function ensureWinogradTile(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  m: WinogradTile,
): Promise<void> {
  if (m !== 6 && m !== 7) return;
  await ensureKernels(ctx, kernels, LARGE_TILE_KERNELS[m]);
  if (half) await ensureHalfKernels(ctx, half, kernels.tiles, HALF_LARGE_TILE_KERNELS[m]);
}

/** Compiles the f16 plan's on-demand kernels `names` into `half` (once). */
export async function ensureHalfKernels(
  ctx: GpuContext,
  half: HalfKernels,
  tiles: KernelTiles,
  names: readonly HalfKernelName[],
): Promise<void> {
  const entries = f16Entries(tiles, half.storage);
  for (const name of names) {
    if (half[name]) continue;
    const [src, entry] = entries[name];
    half[name] = await computePipeline(ctx, src, entry, {}, `nn.${name}`);
  }
}
