// The value head's fully connected layer in Wasm SIMD (kernel in asm/dense.ts): a weight matrix
// copied once into its own module instance's memory, then each call copies one input in and
// reads the rows' dot products out, with fast_infer.ts's dot's bits (the same f64 operations in
// the same order). Where WebAssembly SIMD is missing, or KIBITZ_WASM=0, create returns null and
// the caller keeps its TypeScript loop.
import { decodeBase64 } from "../../cfr/wasm/base64.ts";
import { compileModule, wasmAllowed } from "../../cfr/wasm/enabled.ts";
import { WASM_BASE64 } from "./dense_wasm.ts";

interface Exports {
  memory: WebAssembly.Memory;
  denseRows(w: number, x: number, n: number, rows: number, out: number): void;
}

let mod: WebAssembly.Module | null | undefined;

/** `rows` dot products of length `n` against a fixed matrix, in Wasm (see the file header). */
export class DenseRows {
  private readonly f: Float32Array;
  private readonly d: Float64Array;

  private constructor(
    private readonly K: Exports,
    readonly rows: number,
    readonly n: number,
    private readonly xAt: number,
    private readonly outAt: number,
  ) {
    this.f = new Float32Array(K.memory.buffer);
    this.d = new Float64Array(K.memory.buffer);
  }

  /** The matrix `w` (rows x n, row-major), or null where the Wasm kernels do not run. */
  static create(w: Float32Array, rows: number, n: number): DenseRows | null {
    if (mod === undefined) mod = wasmAllowed() ? compileModule(decodeBase64(WASM_BASE64)) : null;
    if (!mod || w.length < rows * n) return null;
    const K = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
    // Bytes: the matrix from 0, then the input and the f64 outputs, each 16-byte aligned.
    const align = (b: number) => (b + 15) & ~15;
    const xAt = align(rows * n * 4), outAt = align(xAt + n * 4), end = outAt + rows * 8;
    const mem = K.memory;
    if (end > mem.buffer.byteLength) mem.grow(Math.ceil((end - mem.buffer.byteLength) / 65536));
    const d = new DenseRows(K, rows, n, xAt, outAt);
    d.f.set(w.subarray(0, rows * n), 0);
    return d;
  }

  /** out[o] = dot(w, o * n, x, xo, n) for each row o (out holds at least `rows` values). */
  run(x: Float32Array, xo: number, out: Float64Array): void {
    this.f.set(x.subarray(xo, xo + this.n), this.xAt >> 2);
    this.K.denseRows(0, this.xAt, this.n, this.rows, this.outAt);
    out.set(this.d.subarray(this.outAt >> 3, (this.outAt >> 3) + this.rows));
  }
}
