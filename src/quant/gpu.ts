import { KibitzError } from "../errors.ts";
import { withOwned } from "../gpu/owned.ts";
import {
  bindGroup,
  type BindingKind,
  computePipeline,
  type GpuContext,
  readBuffer,
  storageBuffer,
  uniformBuffer,
  workgroups1d,
} from "../gpu/mod.ts";
import { defaultRounding, formatInfo, type QuantFormat } from "./format.ts";
import type { QuantStore, RoundingKey } from "./store.ts";
import { UPDATE_OPS, type UpdateOp } from "./update.ts";
import codec from "../../shaders/quant/codec.wgsl" with { type: "text" };
import update from "../../shaders/quant/update.wgsl" with { type: "text" };

/** WGSL source of the quantized-storage codec, for kernels elsewhere that read or write stores. */
export const QUANT_CODEC_WGSL: string = codec;

const LAYOUT: BindingKind[] = [
  "read-only-storage",
  "storage",
  "read-only-storage",
  "storage",
  "storage",
  "read-only-storage",
  "uniform",
  "storage",
];

/** A quantized store resident on the GPU (same layout as QuantStore). */
export interface GpuQuantStore {
  ctx: GpuContext;
  format: QuantFormat;
  n: number;
  blocks: number;
  offsets: GPUBuffer;
  payload: GPUBuffer;
  scales: GPUBuffer;
  /** Scratch written by the reduce pass: new scales and their correctly rounded inverses. */
  nextScales: GPUBuffer;
  nextInv: GPUBuffer;
  /** [count of non-finite results, 1 + last block that had one]. */
  flags: GPUBuffer;
}

/** Copies a CPU store to the GPU. */
export function uploadQuantStore(ctx: GpuContext, s: QuantStore): GpuQuantStore {
  const scaleBytes = Math.max(1, s.blocks) * 4;
  return {
    ctx,
    format: s.format,
    n: s.n,
    blocks: s.blocks,
    offsets: storageBuffer(ctx, s.offsets, "quant.offsets"),
    payload: storageBuffer(ctx, s.words, "quant.payload"),
    scales: s.scales.length
      ? storageBuffer(ctx, s.scales, "quant.scales")
      : storageBuffer(ctx, scaleBytes),
    nextScales: storageBuffer(ctx, scaleBytes, "quant.nextScales"),
    nextInv: storageBuffer(ctx, scaleBytes, "quant.nextInv"),
    flags: storageBuffer(ctx, 8, "quant.flags"),
  };
}

/** Reads payload and scales back into `into` (a CPU store of the same shape). */
export async function downloadQuantStore(g: GpuQuantStore, into: QuantStore): Promise<QuantStore> {
  if (into.format !== g.format || into.n !== g.n || into.blocks !== g.blocks) {
    throw new KibitzError(
      "bad_store",
      "downloadQuantStore: CPU store shape differs from the GPU store",
    );
  }
  into.words.set(new Uint32Array(await readBuffer(g.ctx, g.payload, into.words.byteLength)));
  if (into.scales.length) {
    into.scales.set(new Float32Array(await readBuffer(g.ctx, g.scales, into.scales.byteLength)));
  }
  return into;
}

/** Releases the store's GPU buffers. */
export function destroyGpuQuantStore(g: GpuQuantStore): void {
  for (const b of [g.offsets, g.payload, g.scales, g.nextScales, g.nextInv, g.flags]) b.destroy();
}

/**
 * Records one fused update (`op` with parameters a, c; `input` one f32 per element) into `encoder`:
 * the reduce pass, the encode pass, and the copy of the new scales. Same results as updateAll on the CPU.
 */
export async function recordGpuUpdate(
  g: GpuQuantStore,
  encoder: GPUCommandEncoder,
  op: UpdateOp,
  input: GPUBuffer,
  a: number,
  c: number,
  key: RoundingKey,
): Promise<GPUBuffer> {
  const { ctx } = g;
  const info = formatInfo(g.format);
  const constants = { FMT: info.code, OP: UPDATE_OPS[op] };
  const source = `${codec}\n${update}`;
  const words = info.levels === 0 ? g.n : Math.ceil(g.n / info.perWord);
  const raw = new ArrayBuffer(36);
  const u = new Uint32Array(raw);
  const f = new Float32Array(raw);
  u[0] = key.seed >>> 0;
  u[1] = key.iteration >>> 0;
  f[2] = a;
  f[3] = c;
  u[4] = 0; // runtime zero for nofuse()
  u[5] = g.blocks;
  u[6] = g.n;
  u[7] = (key.mode ?? defaultRounding(g.format)) === "stochastic" ? 1 : 0;
  u[8] = words;
  const params = uniformBuffer(ctx, raw, "quant.params");
  const buffers = [g.offsets, g.payload, g.scales, g.nextScales, g.nextInv, input, params, g.flags];
  if (info.levels !== 0 && g.blocks > 0) {
    const reduce = await computePipeline(ctx, source, "reduce", constants, "quant.reduce", LAYOUT);
    const bg = await bindGroup(ctx, reduce, buffers);
    const pass = encoder.beginComputePass();
    pass.setPipeline(reduce);
    pass.setBindGroup(0, bg);
    const [x, y] = workgroups1d(ctx, g.blocks, 1);
    pass.dispatchWorkgroups(x, y);
    pass.end();
  }
  if (words > 0) {
    const enc = await computePipeline(ctx, source, "encode", constants, "quant.encode", LAYOUT);
    const bg = await bindGroup(ctx, enc, buffers);
    const pass = encoder.beginComputePass();
    pass.setPipeline(enc);
    pass.setBindGroup(0, bg);
    const [x, y] = workgroups1d(ctx, words, 64);
    pass.dispatchWorkgroups(x, y);
    pass.end();
  }
  if (info.levels !== 0 && g.blocks > 0) {
    encoder.copyBufferToBuffer(g.nextScales, 0, g.scales, 0, g.blocks * 4);
  }
  return params;
}

/** Runs one fused update on the GPU and waits for it; throws if any result was NaN or infinite. */
export async function gpuUpdate(
  g: GpuQuantStore,
  op: UpdateOp,
  input: GPUBuffer,
  a: number,
  c: number,
  key: RoundingKey,
  check = true,
): Promise<void> {
  await withOwned(async (own) => {
    const encoder = g.ctx.device.createCommandEncoder();
    own(await recordGpuUpdate(g, encoder, op, input, a, c, key));
    g.ctx.device.queue.submit([encoder.finish()]);
    if (check) await checkGpuQuantFlags(g);
    else await g.ctx.device.queue.onSubmittedWorkDone();
  });
}

/** Throws a `non_finite` error if a GPU update produced NaN or infinity (costs one readback). */
export async function checkGpuQuantFlags(g: GpuQuantStore): Promise<void> {
  const flags = new Uint32Array(await readBuffer(g.ctx, g.flags, 8));
  if (flags[0] !== 0) {
    g.ctx.device.queue.writeBuffer(g.flags, 0, new Uint32Array(2));
    const where = flags[1] > 0 ? ` (block ${flags[1] - 1})` : "";
    throw new KibitzError(
      "non_finite",
      `GPU update of ${g.format} storage produced ${
        flags[0]
      } non-finite value(s)${where}: values must be finite`,
    );
  }
}
