/**
 * Whether the Wasm kernels may run: KIBITZ_WASM is not "0" (which forces the TypeScript twins)
 * and this runtime compiles `bytes` (WebAssembly with 128-bit SIMD).
 */
export function wasmAllowed(): boolean {
  try {
    return Deno.env.get("KIBITZ_WASM") !== "0";
  } catch {
    return true; // no env permission: the default
  }
}

/** Compiles a kernel module, or null where this runtime lacks WebAssembly SIMD. */
export function compileModule(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module | null {
  try {
    return WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    return null;
  }
}
