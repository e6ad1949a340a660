/**
 * Whether worker threads can share memory: SharedArrayBuffer exists (in Deno always; in a browser
 * page only when it is cross-origin isolated).
 */
export function sharedMemoryAvailable(): boolean {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  return typeof SharedArrayBuffer === "function" && isolated !== false;
}

/** The typed arrays the engine shares between threads. */
export type SharedTyped =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array;

/**
 * Copies of `arrays` (same types and contents) laid out in one SharedArrayBuffer, 8-byte aligned,
 * so that worker threads receive views of the same memory instead of structured-clone copies.
 * Arrays already on a SharedArrayBuffer are returned as they are.
 */
export function packShared<T extends SharedTyped>(arrays: readonly T[]): T[] {
  let bytes = 0;
  for (const a of arrays) {
    if (!(a.buffer instanceof SharedArrayBuffer)) bytes += (a.byteLength + 7) & ~7;
  }
  if (bytes === 0) return arrays.slice();
  const sab = new SharedArrayBuffer(bytes);
  let off = 0;
  return arrays.map((a) => {
    if (a.buffer instanceof SharedArrayBuffer) return a;
    const Ctor = a.constructor as new (b: SharedArrayBuffer, o: number, n: number) => T;
    const v = new Ctor(sab, off, a.length);
    v.set(a as never);
    off += (a.byteLength + 7) & ~7;
    return v;
  });
}

/**
 * Moves every typed array of `obj` (own fields, and arrays of typed arrays one level down) into
 * one SharedArrayBuffer, in place: the main thread keeps one copy and the workers view it. Only
 * for data no thread writes during a solve (the public tree).
 */
export function shareFields(obj: Record<string, unknown>): void {
  const found: { key: string; index: number }[] = [];
  const arrays: SharedTyped[] = [];
  for (const [key, v] of Object.entries(obj)) {
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      found.push({ key, index: -1 }), arrays.push(v as SharedTyped);
    } else if (Array.isArray(v)) {
      v.forEach((x, index) => {
        if (ArrayBuffer.isView(x) && !(x instanceof DataView)) {
          found.push({ key, index }), arrays.push(x as SharedTyped);
        }
      });
    }
  }
  const shared = packShared(arrays);
  found.forEach(({ key, index }, i) => {
    if (index < 0) obj[key] = shared[i];
    else (obj[key] as unknown[])[index] = shared[i];
  });
}
