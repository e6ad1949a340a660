// The thin 1x1 conv against the direct fused conv, bit for bit, with two pipelines only, so that
// it compiles in seconds on any WebGPU implementation: the browser check runs it in Chromium's too
// (whose SwiftShader takes about 2 minutes for one tiled conv kernel). The direct kernel runs the
// same FMAs in the same order as the unsplit tiled one (s = fma(w, x, s) over the channels, then
// bias, residual, ReLU), which conv_thin_test compares with the thin kernel on Deno's adapters.
import type { GpuContext } from "../../gpu/device.ts";
import { readBuffer, storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { dispatch, workgroups1d } from "../../gpu/dispatch.ts";
import { withOwned } from "../../gpu/owned.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import convDirectSrc from "../../../shaders/nn/conv_direct.wgsl" with { type: "text" };
import { thinConvSource } from "./conv_thin.ts";
import { checkRandom } from "./winograd_bridge_check.ts";

/** [n, ci, co, h, w]: two outputs over 64 channels, and 3 over 13 (a remainder after 8). */
export const THIN_CHECK_CASES: readonly number[][] = [[2, 64, 2, 9, 11], [3, 13, 3, 7, 5]];

/**
 * Runs each case (with bias, residual and ReLU) through the thin kernel and through the direct
 * fused conv; returns the cases whose outputs differ in any bit ([] where they agree).
 */
export async function thinConvParity(
  ctx: GpuContext,
  cases: readonly number[][] = THIN_CHECK_CASES,
): Promise<string[]> {
  const thin = await computePipeline(ctx, thinConvSource("f32"), "thin", {}, "nn.thin.check");
  const direct = await computePipeline(ctx, convDirectSrc, "forward_fused", {}, "nn.thin.direct");
  const bad: string[] = [];
  for (const [i, [n, ci, co, h, w]] of cases.entries()) {
    const cols = n * h * w, size = n * co * h * w;
    const same = await withOwned(async (own) => {
      const buf = (data: Float32Array) => own(storageBuffer(ctx, data, "thin.check"));
      const x = buf(checkRandom(n * ci * h * w, 5 + i)), wt = buf(checkRandom(co * ci, 17 + i));
      const bias = buf(checkRandom(co, 29 + i)), res = buf(checkRandom(size, 41 + i));
      const [ya, yb] = [buf(new Float32Array(size)), buf(new Float32Array(size))];
      const u32 = (v: number[]) => own(uniformBuffer(ctx, new Uint32Array(v).buffer, "thin.check"));
      const p = u32([n, ci, co, h, w, 1, 0, 0]), fz = u32([1, 1, 0, 0]);
      const enc = ctx.device.createCommandEncoder();
      await dispatch(ctx, thin, [x, wt, ya, p, bias, res, fz], workgroups1d(ctx, cols, 64), enc);
      await dispatch(ctx, direct, [x, wt, yb, p, bias, res, fz], workgroups1d(ctx, size, 64), enc);
      ctx.device.queue.submit([enc.finish()]);
      const a = new Uint32Array(await readBuffer(ctx, ya));
      const b = new Uint32Array(await readBuffer(ctx, yb));
      return a.every((v, j) => v === b[j]);
    });
    if (!same) bad.push(`${n}x${ci}x${h}x${w} -> ${co}`);
  }
  return bad;
}
