import { envValue } from "../../env.ts";

/**
 * Whether the Wasm kernels may run: KIBITZ_WASM is not "0" (which forces the TypeScript twins)
 * and this runtime compiles `bytes` (WebAssembly with 128-bit SIMD).
 */
export function wasmAllowed(): boolean {
  return envValue("KIBITZ_WASM") !== "0"; // unreadable: the default
}

/** Compiles a kernel module, or null where this runtime lacks WebAssembly SIMD. */
export function compileModule(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module | null {
  try {
    return WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    return null;
  }
}
