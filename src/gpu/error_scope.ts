// Error scopes that are popped on every exit. WebGPU reports most mistakes (and a failed
// allocation) through a scope rather than by throwing, but our own code inside one can throw (a
// shape check, a failed readback); a scope left pushed would then swallow every later error on
// the device unseen.
import type { GpuContext } from "./device.ts";

/**
 * Runs `fn` inside error scopes of each of `filters` (the first outermost) and pops them whether
 * `fn` returns or throws: `fn`'s value and each scope's error (null when none). Scopes are one stack
 * per device: a synchronous `fn` is popped before anything else runs, so concurrent callers cannot
 * take each other's scopes; with an async `fn` the caller must keep other scoped work from running
 * meanwhile.
 */
export async function withErrorScopes<T, F extends GPUErrorFilter>(
  ctx: GpuContext,
  filters: readonly F[],
  fn: () => T | Promise<T>,
): Promise<{ value: T; errors: Record<F, GPUError | null> }> {
  for (const f of filters) ctx.device.pushErrorScope(f);
  const popAll = () => filters.map(() => ctx.device.popErrorScope()).reverse();
  let value: T;
  try {
    const got = fn();
    value = got instanceof Promise ? await got : got;
  } catch (e) {
    await Promise.all(popAll().map((p) => p.catch(() => null)));
    throw e;
  }
  const popped = await Promise.all(popAll());
  const errors = {} as Record<F, GPUError | null>;
  filters.forEach((f, i) => errors[f] = popped[i]);
  return { value, errors };
}

/** One error scope of `filter` around `fn` (see withErrorScopes): its value and error. */
export async function withErrorScope<T>(
  ctx: GpuContext,
  filter: GPUErrorFilter,
  fn: () => T | Promise<T>,
): Promise<{ value: T; error: GPUError | null }> {
  const { value, errors } = await withErrorScopes(ctx, [filter], fn);
  return { value, error: errors[filter] };
}

/** withErrorScope for validation errors: what our recordings and pipelines check. */
export function withValidation<T>(
  ctx: GpuContext,
  fn: () => T | Promise<T>,
): Promise<{ value: T; error: GPUError | null }> {
  return withErrorScope(ctx, "validation", fn);
}
