// A validation error scope that is popped on every exit. WebGPU reports most mistakes through the
// scope rather than by throwing, but our own code inside one can throw (a shape check, a failed
// readback); a scope left pushed would then swallow every later error on the device unseen.
import type { GpuContext } from "./device.ts";

/**
 * Runs `fn` inside a validation error scope and pops it whether `fn` returns or throws: `fn`'s
 * value and the scope's error (null when none). Scopes are one stack per device: a synchronous
 * `fn` is popped before anything else runs, so concurrent callers cannot take each other's scope;
 * with an async `fn` the caller must keep other scoped work from running meanwhile.
 */
export async function withValidation<T>(
  ctx: GpuContext,
  fn: () => T | Promise<T>,
): Promise<{ value: T; error: GPUError | null }> {
  ctx.device.pushErrorScope("validation");
  let value: T;
  try {
    const got = fn();
    value = got instanceof Promise ? await got : got;
  } catch (e) {
    await ctx.device.popErrorScope().catch(() => null);
    throw e;
  }
  return { value, error: await ctx.device.popErrorScope() };
}
