// The mixed-tile Winograd transforms against the direct convolution without a GEMM kernel, so that
// the check compiles in seconds on any WebGPU implementation (the browser check runs it in
// Chromium's, whose SwiftShader takes minutes for a tiled GEMM): the GPU's filter and input
// transforms are read back, their products summed on the CPU (f64, rounded to f32 as M), and the
// GPU's output transform with its epilogue turns M into y, compared with the direct conv. The
// column-staged output transform (`-c`) runs on the same M and must give the same bits.
import type { GpuContext } from "../../gpu/device.ts";
import { readBuffer, storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import { withOwned } from "../../gpu/owned.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { convFused } from "../cpu/fused.ts";
import { cpuTensor } from "../tensor.ts";
import { mixedThreads, mixedTiling, winogradMixedSource } from "../winograd_mixed.ts";
import { checkRandom, sameBits } from "./winograd_bridge_check.ts";
import { mixedStagedGroups, winogradMixedOutputStagedSource } from "./winograd_mixed_staged.ts";

/** [n, ci, co, h, w]: one tile of each class (13 x 13), uneven classes (13 x 19), the 26 x 26 board. */
export const MIXED_CHECK_CASES: readonly number[][] = [
  [2, 5, 3, 13, 13],
  [1, 3, 4, 13, 19],
  [1, 2, 2, 26, 26],
];

/**
 * Runs each case (bias, residual, ReLU) through the mixed transforms in f32 and returns those whose
 * y is further than 1e-4 of its largest value from act(conv + bias + res), F(7x7)'s f32 error being
 * about 4e-5, or whose column-staged y (workgroups of about `threads` threads) differs from it in
 * any bit ([] where all agree).
 */
export async function winogradMixedParity(
  ctx: GpuContext,
  cases: readonly number[][] = MIXED_CHECK_CASES,
  threads = 64,
): Promise<string[]> {
  const bad: string[] = [];
  for (const [i, [n, ci, co, h, w]] of cases.entries()) {
    const t = mixedTiling(h, w)!;
    const src = winogradMixedSource(t);
    const pipe = (entry: string) => computePipeline(ctx, src, entry, {}, `nn.mixed.check.${entry}`);
    const [filter, input, output] = await Promise.all(
      ["mixed_filter", "mixed_input", "mixed_output"].map(pipe),
    );
    const staged = await computePipeline(
      ctx,
      winogradMixedOutputStagedSource(t, "f32", threads),
      "mixed_output_staged",
      {},
      "nn.mixed.check.mixed_output_staged",
    );
    const ppad = n * t.tiles, size = n * co * h * w;
    const xs = checkRandom(n * ci * h * w, 3 + i), ws = checkRandom(co * ci * 9, 5 + i);
    const bs = checkRandom(co, 7 + i), rs = checkRandom(size, 11 + i);
    const [got, gotStaged] = await withOwned(async (own) => {
      const buf = (data: Float32Array | number) => own(storageBuffer(ctx, data, "mixed.check"));
      const [x, wt, bias, res] = [xs, ws, bs, rs].map(buf);
      const u = buf(t.alpha * co * ci * 4), v = buf(t.alpha * ci * ppad * 4);
      const mm = buf(t.alpha * co * ppad * 4), y = buf(size * 4), ys = buf(size * 4);
      const p = own(
        uniformBuffer(ctx, new Uint32Array([n, ci, co, h, w, 0, t.tiles, ppad]).buffer),
      );
      const fz = own(uniformBuffer(ctx, new Uint32Array([1, 1, 0, 0]).buffer));
      const run = (
        pl: GPUComputePipeline,
        bind: Record<number, GPUBuffer>,
        groups: [number, number, number],
      ) => {
        const bg = ctx.device.createBindGroup({
          layout: pl.getBindGroupLayout(0),
          entries: Object.entries(bind).map(([b, buffer]) => ({
            binding: +b,
            resource: { buffer },
          })),
        });
        const enc = ctx.device.createCommandEncoder(), pass = enc.beginComputePass();
        pass.setPipeline(pl);
        pass.setBindGroup(0, bg);
        pass.dispatchWorkgroups(...groups);
        pass.end();
        ctx.device.queue.submit([enc.finish()]);
      };
      const g1 = (count: number) => workgroups1d(ctx, count, 64);
      run(filter, { 0: wt, 1: u, 8: p }, g1(co * ci));
      run(input, { 2: x, 3: v, 8: p }, g1(mixedThreads(t, n, ci)));
      const uh = new Float32Array(await readBuffer(ctx, u));
      const vh = new Float32Array(await readBuffer(ctx, v));
      // M[s, co, q] = sum_ci U[s, co, ci] V[s, ci, q] (the columns a class does not use stay 0).
      const mh = new Float32Array(t.alpha * co * ppad);
      for (let s = 0; s < t.alpha; s++) {
        for (let o = 0; o < co; o++) {
          for (let q = 0; q < ppad; q++) {
            let acc = 0;
            for (let c = 0; c < ci; c++) {
              acc += uh[(s * co + o) * ci + c] * vh[(s * ci + c) * ppad + q];
            }
            mh[(s * co + o) * ppad + q] = acc;
          }
        }
      }
      ctx.device.queue.writeBuffer(mm, 0, mh);
      run(output, { 4: mm, 5: bias, 6: res, 7: y, 8: p, 9: fz }, g1(mixedThreads(t, n, co)));
      const stagedGroups = mixedStagedGroups(ctx, t, threads, n, co);
      run(staged, { 4: mm, 5: bias, 6: res, 7: ys, 8: p, 9: fz }, stagedGroups);
      return [
        new Float32Array(await readBuffer(ctx, y)),
        new Float32Array(await readBuffer(ctx, ys)),
      ];
    });
    const want = convFused(
      cpuTensor([n, ci, h, w], xs),
      cpuTensor([co, ci, 3, 3], ws),
      cpuTensor([co], bs),
      cpuTensor([n, co, h, w], rs),
      true,
    ).data;
    let top = 0, err = 0;
    for (let j = 0; j < size; j++) {
      top = Math.max(top, Math.abs(want[j]));
      err = Math.max(err, Math.abs(got[j] - want[j]));
    }
    const name = `${n}x${ci}x${h}x${w} -> ${co}`;
    if (!(err <= 1e-4 * top)) bad.push(`${name}: ${err / top}`);
    if (!sameBits(got, gotStaged)) bad.push(`${name}: the staged output transform differs`);
  }
  return bad;
}
