/**
 * Whether worker threads can share memory: SharedArrayBuffer exists (in Deno always; in a browser
 * page only when it is cross-origin isolated).
 */
export function sharedMemoryAvailable(): boolean {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
  return typeof SharedArrayBuffer === "function" && isolated !== false;
}
