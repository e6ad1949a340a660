// Counts WebGPU API calls (each one a crossing from JavaScript into the runtime) while a counter is
// running: the host-side profile of `bench nn` reports them per inference call. The counter wraps
// the methods of the WebGPU classes' prototypes and restores them when stopped; it adds overhead,
// so host times are measured with it stopped.

/** The classes whose methods are counted. */
const CLASSES = [
  "GPUDevice",
  "GPUQueue",
  "GPUCommandEncoder",
  "GPUComputePassEncoder",
  "GPUBuffer",
] as const;

/** A running counter: `stop` restores the methods and returns the counts ("Class.method" -> n). */
export interface ApiCounter {
  stop(): Map<string, number>;
}

/**
 * Starts counting calls of every WebGPU method (getters excluded). Only one counter may run at a
 * time; where the runtime has no WebGPU classes nothing is counted.
 */
export function countGpuCalls(): ApiCounter {
  const counts = new Map<string, number>();
  const restore: (() => void)[] = [];
  const g = globalThis as unknown as Record<string, { prototype: object } | undefined>;
  for (const name of CLASSES) {
    const proto = g[name]?.prototype as Record<string, unknown> | undefined;
    if (!proto) continue;
    for (const key of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, key);
      if (!d || key === "constructor" || typeof d.value !== "function") continue;
      const orig = d.value as (...a: unknown[]) => unknown;
      const label = `${name}.${key}`;
      Object.defineProperty(proto, key, {
        ...d,
        value: function (this: unknown, ...args: unknown[]) {
          counts.set(label, (counts.get(label) ?? 0) + 1);
          return orig.apply(this, args);
        },
      });
      restore.push(() => Object.defineProperty(proto, key, d));
    }
  }
  let stopped = false;
  return {
    stop() {
      if (!stopped) { for (const r of restore) r(); }
      stopped = true;
      return counts;
    },
  };
}
