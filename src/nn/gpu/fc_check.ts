// The fully connected layers' fcNt against the tiled matmul, bit for bit, with two pipelines at the
// test workgroup size, so that it compiles in seconds on any WebGPU implementation: the browser
// check runs it in Chromium (Tint) as fc_test runs it on Deno's adapters (Naga).
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { rng } from "../tensor.ts";
import { fcShapeKey } from "./fc.ts";
import { fcSource, type KernelTiles, matmulSource, type NnKernels, TEST_TILES } from "./kernels.ts";
import { withScratch } from "./scratch_scope.ts";
import { readTensors, uploadTensor } from "./tensor.ts";

/** [m, n, k]: products that cut the tiles short along M, N and K, and one of whole tiles. */
export const FC_CHECK_CASES: readonly [number, number, number][] = [
  [37, 101, 68],
  [9, 5, 12],
  [16, 32, 16],
];

/**
 * linear(x, w, bias) of random operands through the tiled matmul and through fcNt, each compiled
 * for `tiles` alone: [tiled, nt] outputs and the ops each recorded.
 */
export async function fcBothWays(
  ctx: GpuContext,
  tiles: KernelTiles,
  [m, n, k]: readonly [number, number, number],
  seed: number,
): Promise<{ out: Float32Array[]; labels: string[][] }> {
  const tw = tiles.matmul;
  const kernels = {
    tiles,
    fcNt: await computePipeline(ctx, fcSource(tw), "fc_nt", {}, "nn.fc.check"),
    matmulBias: await computePipeline(ctx, matmulSource(tw), "with_bias", {}, "nn.fc.check"),
  } as unknown as NnKernels;
  return withScratch(ctx, kernels, async ({ recorder, own }) => {
    const next = rng(seed);
    const upload = (shape: number[], label: string) => {
      const size = shape.reduce((p, d) => p * d, 1);
      const t = uploadTensor(
        ctx,
        shape,
        Float32Array.from({ length: size }, () => next() * 2 - 1),
        label,
      );
      own(t.buffer);
      return t;
    };
    const x = upload([m, k], "fc.check.x");
    const w = upload([n, k], "fc.check.w");
    const bias = upload([n], "fc.check.bias");
    const out: Float32Array[] = [], labels: string[][] = [];
    for (const nt of [false, true]) {
      const rec = recorder();
      if (nt) rec.fcNt.add(fcShapeKey(m, n, k));
      const y = rec.linear(x, w, bias);
      labels.push(rec.ops.map((o) => o.label));
      rec.submit();
      out.push((await readTensors(ctx, [y]))[0]);
    }
    return { out, labels };
  });
}

/** Runs each case both ways at the test workgroup size; returns those that differ in any bit. */
export async function fcParity(
  ctx: GpuContext,
  cases: readonly (readonly [number, number, number])[] = FC_CHECK_CASES,
): Promise<string[]> {
  const bad: string[] = [];
  for (const [i, c] of cases.entries()) {
    const { out: [a, b], labels } = await fcBothWays(ctx, TEST_TILES, c, 3 + i);
    const ran = labels[0][0] === "matmulBias" && labels[1][0] === "fcNt";
    if (!ran || a.length !== b.length || a.some((v, j) => !Object.is(v, b[j]))) {
      bad.push(`${c[0]}x${c[2]}->${c[1]}`);
    }
  }
  return bad;
}
