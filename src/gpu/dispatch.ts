import type { GpuContext } from "./device.ts";
import { bindGroup } from "./pipeline.ts";

/** Workgroup counts for a 1-D launch of `n` invocations, folded into y when x would exceed the limit. */
export function workgroups1d(
  ctx: GpuContext,
  n: number,
  workgroupSize: number,
): [number, number, number] {
  const groups = Math.max(1, Math.ceil(n / workgroupSize));
  const maxDim = ctx.device.limits.maxComputeWorkgroupsPerDimension;
  if (groups <= maxDim) return [groups, 1, 1];
  const y = Math.ceil(groups / maxDim);
  return [Math.ceil(groups / y), y, 1];
}

/** Records one compute dispatch into `encoder` (or submits it on its own when no encoder is given). */
export async function dispatch(
  ctx: GpuContext,
  pipeline: GPUComputePipeline,
  buffers: GPUBuffer[],
  groups: [number, number, number] | number,
  encoder?: GPUCommandEncoder,
): Promise<void> {
  const bg = await bindGroup(ctx, pipeline, buffers);
  const own = encoder ?? ctx.device.createCommandEncoder();
  const pass = own.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bg);
  const [x, y, z] = typeof groups === "number" ? [groups, 1, 1] : groups;
  pass.dispatchWorkgroups(x, y, z);
  pass.end();
  if (!encoder) ctx.device.queue.submit([own.finish()]);
}
