import type { GpuContext } from "./device.ts";

/** Results made once per device and key (compiled kernels): a failed one is made again next time. */
export type PerDevice<T> = WeakMap<GpuContext, Map<string, Promise<T>>>;

/** `make()` once per device and key in `cache`; later calls share its promise. */
export function oncePerDevice<T>(
  cache: PerDevice<T>,
  ctx: GpuContext,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let perDevice = cache.get(ctx);
  if (!perDevice) cache.set(ctx, perDevice = new Map());
  let hit = perDevice.get(key);
  if (!hit) {
    const map = perDevice;
    hit = make();
    hit.catch(() => map.delete(key));
    map.set(key, hit);
  }
  return hit;
}
