// A GPU context whose device fails on demand, as a device out of memory would, and records every
// buffer it makes: for tests that what a failed pass made is freed.
import type { GpuContext } from "../../src/gpu/device.ts";

/** When the faulty device fails. */
export interface Faults {
  /** Throw at this (1-based) buffer allocation; never when absent. */
  failAt?: number;
  /** Whether the next popped out-of-memory scope reports an error (read at each pop). */
  oom?: () => boolean;
}

/** The faulty context and the buffers its device made, in order. */
export interface FaultyGpu {
  ctx: GpuContext;
  made: GPUBuffer[];
}

/** `ctx` with a device that fails as `faults` says and records the buffers it makes. */
export function faultyGpu(ctx: GpuContext, faults: Faults = {}): FaultyGpu {
  const made: GPUBuffer[] = [];
  const scopes: GPUErrorFilter[] = [];
  let count = 0;
  const device = new Proxy(ctx.device, {
    get(target, prop) {
      if (prop === "createBuffer") {
        return (desc: GPUBufferDescriptor) => {
          if (++count === faults.failAt) throw new Error(`injected: buffer ${count} out of memory`);
          const b = target.createBuffer(desc);
          made.push(b);
          return b;
        };
      }
      if (prop === "pushErrorScope") {
        return (filter: GPUErrorFilter) => {
          scopes.push(filter);
          target.pushErrorScope(filter);
        };
      }
      if (prop === "popErrorScope") {
        return () => {
          const filter = scopes.pop();
          const popped = target.popErrorScope();
          if (filter !== "out-of-memory" || !faults.oom?.()) return popped;
          return popped.then(() => ({ message: "injected: out of memory" }) as GPUError);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { ctx: { ...ctx, device }, made };
}
