// The Winograd bridge against the separate output and input transforms, kernel by kernel: the same
// random M through both, V (and y) compared bit for bit. No GEMM takes part, so the check compiles
// in seconds on any WebGPU implementation (the browser check runs it in Chromium's too).
import type { GpuContext } from "../../gpu/device.ts";
import { storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import { winogradColumns, winogradGeometry, type WinogradTile } from "../winograd.ts";
import { ensureWinogradTile, type HalfKernelName, type HalfKernels } from "./f16.ts";
import { HARDWARE_TILES, type KernelName, loadKernels } from "./kernels.ts";
import { withScratch } from "./scratch_scope.ts";
import { readTensors } from "./tensor.ts";
import {
  bridgeBindings,
  bridgeGroups,
  bridgeStagedFits,
  loadWinogradBridge,
} from "./winograd_bridge.ts";

/** One case: tile, planes (n images of c channels, h x w), and the epilogue. */
export interface BridgeCase {
  m: WinogradTile;
  n: number;
  c: number;
  h: number;
  w: number;
  keepY: boolean;
  res: boolean;
  relu: boolean;
}

/**
 * Every tile, with and without y, residual and ReLU; boards whose tile grid overhangs the image,
 * and one of 81 F(2x2) tiles (more than a 64-thread workgroup).
 */
export const BRIDGE_CASES: readonly BridgeCase[] = [
  { m: 2, n: 2, c: 3, h: 7, w: 7, keepY: true, res: true, relu: true },
  { m: 2, n: 1, c: 2, h: 18, w: 18, keepY: false, res: false, relu: true },
  { m: 4, n: 2, c: 3, h: 7, w: 5, keepY: false, res: false, relu: true },
  { m: 4, n: 1, c: 4, h: 26, w: 26, keepY: true, res: true, relu: true },
  { m: 6, n: 2, c: 3, h: 9, w: 6, keepY: true, res: true, relu: false },
  { m: 6, n: 1, c: 2, h: 26, w: 26, keepY: false, res: false, relu: true },
  { m: 7, n: 1, c: 2, h: 26, w: 26, keepY: true, res: true, relu: true },
];

/**
 * Two of them for slow shader compilers (Chromium's SwiftShader takes about 5 s a bridge, F(6x6)'s
 * far longer): F(2x2) with y, residual and ReLU, and F(4x4) without y.
 */
export const BRIDGE_CASES_QUICK: readonly BridgeCase[] = [BRIDGE_CASES[0], BRIDGE_CASES[2]];

/** Deterministic values in [-1, 1) for the GPU checks (the same on every platform). */
export function checkRandom(size: number, seed: number): Float32Array {
  const out = new Float32Array(size);
  let s = seed >>> 0;
  for (let i = 0; i < size; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 31 - 1;
  }
  return out;
}

/** Whether two arrays hold the same floats bit for bit. */
export function sameBits(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/**
 * How far two kernels with the same products and sums in the same order may differ (relative to
 * the largest value) where a compiler contracts a product and a sum into one rounding in one of
 * them and not the other: 2e-5 in f32; an emulated f16 activation may then round to the
 * neighbouring f16 (2^-11 of it). The column-staged bridge against the separate transforms needs
 * it even on llvmpipe (up to 5.9e-8 there in f32); the staged transforms on hardware
 * (stagedTolerance).
 */
export function contractionTolerance(half: HalfKernels | null): number {
  return half ? 2e-3 : 2e-5;
}

/** The largest difference of a and b relative to max(1, b's largest magnitude). */
export function relativeDiff(a: Float32Array, b: Float32Array): number {
  let diff = 0, scale = 1;
  for (let i = 0; i < b.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (d > diff || Number.isNaN(d)) diff = Number.isNaN(d) ? Infinity : d;
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return diff / scale;
}

/**
 * Runs each case through the bridge and through the output transform then the input transform
 * (the kernel tables', f32 activations, or the f16 plan's with `half`), V and M f32, the V columns
 * padded differently on each side; returns the cases whose V or y differ in any bit ([] where the
 * bridge is exact). With `staged` the column-staged bridge runs, on the cases it fits, and may
 * differ by `tolerance` relative to the largest value (contractionTolerance: compilers may fuse
 * a product and a sum in one kernel and not the other).
 */
export async function winogradBridgeParity(
  ctx: GpuContext,
  half: HalfKernels | null = null,
  cases: readonly BridgeCase[] = BRIDGE_CASES,
  staged: { tolerance: number } | null = null,
): Promise<string[]> {
  const kernels = await loadKernels(ctx, HARDWARE_TILES, "direct");
  for (const m of new Set(cases.map((k) => k.m))) await ensureWinogradTile(ctx, kernels, half, m);
  const act = half?.storage ?? "f32";
  if (act === "f16") throw new Error("the bridge check runs f32 or emulated f16 activations");
  const bad: string[] = [];
  for (const [i, k] of cases.entries()) {
    if (staged && !bridgeStagedFits(k.m, k.h, k.w)) continue;
    const g = winogradGeometry(k.m, k.n, k.h, k.w);
    const ppadIn = winogradColumns(g.p), ppadOut = Math.ceil(g.p / 16) * 16;
    const planes = k.n * k.c, ysize = planes * k.h * k.w, vsize = g.alpha * k.c * ppadOut;
    const spec = {
      m: k.m,
      act,
      mIn: "f32",
      vOut: "f32",
      h: k.h,
      w: k.w,
      keepY: k.keepY,
      ...(staged ? { staged: true } : {}),
    } as const;
    const bridge = await loadWinogradBridge(ctx, spec);
    const same = await withScratch(ctx, kernels, async ({ recorder, own }) => {
      const buf = (data: Float32Array | number) => own(storageBuffer(ctx, data, "bridge.check"));
      const mm = buf(checkRandom(g.alpha * k.c * ppadIn, 11 + i)),
        bias = buf(checkRandom(k.c, 23 + i));
      const res = buf(checkRandom(ysize, 37 + i));
      const [ya, va, yb, vb] = [ysize, vsize, ysize, vsize].map((s) => buf(new Float32Array(s)));
      const u32 = (w: number[]) =>
        own(uniformBuffer(ctx, new Uint32Array(w).buffer, "bridge.check"));
      const fz = u32([k.relu ? 1 : 0, k.res ? 1 : 0, 0, 0]);
      const geom = [k.n, k.c, k.c, k.h, k.w, g.tw, g.tiles];
      const pin = u32([...geom, ppadIn]), pout = u32([...geom, ppadOut]);
      const pb = u32([k.n, k.c, k.h, k.w, g.tw, g.tiles, ppadIn, ppadOut]);
      const rec = recorder(false);
      rec.half = half;
      const H = half ? "H" : "";
      const groups = workgroups1d(ctx, planes * g.tiles, 64);
      rec.record(`winogradOutput${H}${k.m}` as KernelName | HalfKernelName, {
        4: mm,
        5: bias,
        6: res,
        7: ya,
        8: pin,
        9: fz,
      }, groups);
      const input = `winogradInput${H}${k.m}` as KernelName | HalfKernelName;
      rec.record(input, { 2: ya, 3: va, 8: pout }, groups);
      rec.recordPipeline(
        bridge,
        "wino.bridge",
        bridgeBindings({ mm, bias, res, y: k.keepY ? yb : null, v: vb, params: pb, fuse: fz }),
        bridgeGroups(ctx, planes),
      );
      rec.submit();
      const t = (b: GPUBuffer, size: number) => ({ shape: [size], buffer: b, size });
      const [yA, vA, yB, vB] = await readTensors(ctx, [
        t(ya, ysize),
        t(va, vsize),
        t(yb, ysize),
        t(vb, vsize),
      ]);
      const close = (a: Float32Array, b: Float32Array) =>
        sameBits(a, b) || (staged !== null && relativeDiff(b, a) <= staged.tolerance);
      return close(vA, vB) && (!k.keepY || close(yA, yB));
    });
    if (!same) {
      bad.push(
        `F(${k.m}) ${k.n}x${k.c}x${k.h}x${k.w}${k.keepY ? " y" : ""} ${act}${
          staged ? " staged" : ""
        }`,
      );
    }
  }
  return bad;
}
