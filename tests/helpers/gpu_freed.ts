// Whether the device itself sees a GPU buffer as destroyed, not only our own bookkeeping.
import type { GpuContext } from "../../src/gpu/device.ts";

/** Whether writing to `buffer` fails validation (true once it is destroyed; needs COPY_DST). */
export async function writeFails(ctx: GpuContext, buffer: GPUBuffer): Promise<boolean> {
  ctx.device.pushErrorScope("validation");
  ctx.device.queue.writeBuffer(buffer, 0, new Uint8Array(4));
  return (await ctx.device.popErrorScope()) !== null;
}
