// The fully connected layers' fcNt against the tiled matmul, bit for bit, with two pipelines at the
// test workgroup size, so that it compiles in seconds on any WebGPU implementation: the browser
// check runs it in Chromium (Tint) as fc_test runs it on Deno's adapters (Naga).
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { rng } from "../tensor.ts";
import { GpuRecorder } from "./backend.ts";
import { fcShapeKey } from "./fc.ts";
import { fcSource, type KernelTiles, matmulSource, type NnKernels, TEST_TILES } from "./kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "./tensor.ts";

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
  const pool = new TensorPool(ctx);
  const next = rng(seed);
  const rand = (len: number) => Float32Array.from({ length: len }, () => next() * 2 - 1);
  const x = uploadTensor(ctx, [m, k], rand(m * k), "fc.check.x");
  const w = uploadTensor(ctx, [n, k], rand(n * k), "fc.check.w");
  const bias = uploadTensor(ctx, [n], rand(n), "fc.check.bias");
  const out: Float32Array[] = [], labels: string[][] = [];
  for (const nt of [false, true]) {
    const rec = new GpuRecorder(ctx, kernels, pool, true);
    if (nt) rec.fcNt.add(fcShapeKey(m, n, k));
    const y = rec.linear(x, w, bias);
    labels.push(rec.ops.map((o) => o.label));
    rec.submit();
    out.push((await readTensors(ctx, [y]))[0]);
    rec.destroy();
  }
  pool.destroy();
  for (const t of [x, w, bias]) t.buffer.destroy();
  return { out, labels };
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
