// The column-staged Winograd transforms against the one-thread-a-tile ones, kernel by kernel: the
// same random M through both output transforms (y compared bit for bit) and the same random
// activations through both input transforms (V compared). No GEMM takes part, so the check
// compiles in seconds on any WebGPU implementation (the browser check runs it in Chromium's too).
import type { GpuContext } from "../../gpu/device.ts";
import { uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { winogradColumns, winogradGeometry, type WinogradTile } from "../winograd.ts";
import { ensureWinogradTile, type HalfKernelName, type HalfKernels } from "./f16.ts";
import { HARDWARE_TILES, type KernelName, loadKernels } from "./kernels.ts";
import { withScratch } from "./scratch_scope.ts";
import { type GpuTensor, readTensors, uploadTensor } from "./tensor.ts";
import {
  BRIDGE_CASES,
  type BridgeCase,
  checkRandom,
  contractionTolerance,
  relativeDiff,
  sameBits,
} from "./winograd_bridge_check.ts";
import {
  stagedGroups,
  winogradInputStagedSource,
  winogradOutputStagedSource,
} from "./winograd_staged.ts";

/** The bridge check's cases (every tile, epilogues, overhanging tile grids, 81 F(2x2) tiles). */
export const STAGED_CASES: readonly BridgeCase[] = BRIDGE_CASES;

/** Two of them for slow shader compilers: F(2x2) with residual and ReLU, F(4x4) with ReLU. */
export const STAGED_CASES_QUICK: readonly BridgeCase[] = [BRIDGE_CASES[0], BRIDGE_CASES[2]];

/**
 * How far the staged transforms may differ from the one-thread-a-tile ones on `ctx` (a largest
 * difference, relative to max(1, the largest value)): not at all on software adapters, whose
 * compilers keep every operation as written. Hardware compilers may fuse a product and a sum into
 * one rounding in one kernel and not the other: on an H200 (session 41) F(7x7) outputs differed
 * by up to 6.5e-6 through a whole conv, and an emulated f16 activation can then round to the
 * neighbouring f16 (2^-11 of it).
 */
export function stagedTolerance(ctx: GpuContext, half: HalfKernels | null): number {
  return ctx.report.isFallback ? 0 : contractionTolerance(half);
}

/**
 * Runs each case through both output transforms and both input transforms (the kernel tables'
 * f32 activations, or the f16 plan's with `half`, real f16 included: the activations are cast on
 * the GPU; V and M f32), the staged ones with workgroups of about `threads` threads; returns the
 * cases whose y or V differ by more than `tolerance` (stagedTolerance: in any bit on software
 * adapters), each with its difference ([] where they agree).
 */
export async function winogradStagedParity(
  ctx: GpuContext,
  half: HalfKernels | null = null,
  cases: readonly BridgeCase[] = STAGED_CASES,
  threads = 64,
  tolerance = stagedTolerance(ctx, half),
): Promise<string[]> {
  const kernels = await loadKernels(ctx, HARDWARE_TILES, "direct");
  for (const m of new Set(cases.map((k) => k.m))) await ensureWinogradTile(ctx, kernels, half, m);
  const act = half?.storage ?? "f32";
  const H = half ? "H" : "";
  // The staged kernels, once per tile.
  const staged = new Map<WinogradTile, { output: GPUComputePipeline; input: GPUComputePipeline }>();
  for (const m of new Set(cases.map((k) => k.m))) {
    staged.set(m, {
      output: await computePipeline(
        ctx,
        winogradOutputStagedSource(m, act, "f32", false, 1, threads),
        "wino_output_staged",
        {},
        "nn.wino.staged.check.output",
      ),
      input: await computePipeline(
        ctx,
        winogradInputStagedSource(m, act, "f32", false, threads),
        "wino_input_staged",
        {},
        "nn.wino.staged.check.input",
      ),
    });
  }
  const bad: string[] = [];
  for (const [i, k] of cases.entries()) {
    const g = winogradGeometry(k.m, k.n, k.h, k.w), ppad = winogradColumns(g.p);
    const ysize = k.n * k.c * k.h * k.w, vsize = g.alpha * k.c * ppad;
    const label = `F(${k.m}) ${k.n}x${k.c}x${k.h}x${k.w} ${act}`;
    const { output, input } = staged.get(k.m)!;
    const [dy, dv] = await withScratch(ctx, kernels, async ({ recorder, own }) => {
      const rec = recorder(false);
      rec.half = half;
      const up = (data: Float32Array) => {
        const t = uploadTensor(ctx, [data.length], data, "staged.check");
        own(t.buffer);
        return t;
      };
      const mm = up(checkRandom(vsize, 13 + i)), bias = up(checkRandom(k.c, 27 + i));
      const res32 = up(checkRandom(ysize, 39 + i)), x32 = up(checkRandom(ysize, 51 + i));
      const [za, zb] = [up(new Float32Array(ysize)), up(new Float32Array(ysize))];
      // The activations in the plan's storage (f16 casts on the GPU where it is f16).
      const store = (t: GpuTensor) => (half ? rec.toHalf(t) : t);
      const [res, x, ya, yb] = [res32, x32, za, zb].map(store);
      const [va, vb] = [up(new Float32Array(vsize)), up(new Float32Array(vsize))];
      const u32 = (w: number[]) =>
        own(uniformBuffer(ctx, new Uint32Array(w).buffer, "staged.check"));
      const fz = u32([k.relu ? 1 : 0, k.res ? 1 : 0, 0, 0]);
      const pp = u32([k.n, k.c, k.c, k.h, k.w, g.tw, g.tiles, ppad]);
      const groups = workgroups1d(ctx, k.n * k.c * g.tiles, 64);
      const sgroups = stagedGroups(ctx, k.m, threads, k.c, g.p);
      const outBind = { 4: mm.buffer, 5: bias.buffer, 6: res.buffer, 8: pp, 9: fz };
      const name = (e: string) => `winograd${e}${H}${k.m}` as KernelName | HalfKernelName;
      rec.record(name("Output"), { ...outBind, 7: ya.buffer }, groups);
      rec.recordPipeline(output, "wino.staged.output", { ...outBind, 7: yb.buffer }, sgroups);
      rec.record(name("Input"), { 2: x.buffer, 3: va.buffer, 8: pp }, groups);
      rec.recordPipeline(input, "wino.staged.input", { 2: x.buffer, 3: vb.buffer, 8: pp }, sgroups);
      const full = (t: GpuTensor) => (half ? rec.toFull(t) : t);
      const outs = [full(ya), full(yb), va, vb];
      rec.submit();
      const [yA, yB, vA, vB] = await readTensors(ctx, outs);
      const differ = (a: Float32Array, b: Float32Array) =>
        sameBits(a, b) ? 0 : tolerance === 0 ? Infinity : relativeDiff(a, b);
      return [differ(yB, yA), differ(vB, vA)];
    });
    const worse = (d: number) => (d === Infinity ? "bits differ" : d.toExponential(2));
    if (dy > tolerance) bad.push(`${label} output: ${worse(dy)}`);
    if (dv > tolerance) bad.push(`${label} input: ${worse(dv)}`);
  }
  return bad;
}
