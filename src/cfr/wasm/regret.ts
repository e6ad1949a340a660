import { decodeBase64 } from "./base64.ts";
import { compileModule, wasmAllowed } from "./enabled.ts";
import { WASM_BASE64 } from "./regret_wasm.ts";

/*
 * The Wasm twin of CfrSolver.current's regret matching on f32 storage (bit-identical: the same
 * f32 sums in the same order, see asm/regret.ts). One instance per thread; a block is copied in
 * row by row at a stride padded to 4 hands and sigma copied back.
 */

interface Exports {
  memory: WebAssembly.Memory;
  regretMatch(reg: number, sig: number, A: number, H: number, sum: number, den: number): void;
  update(op: number, old: number, input: number, n: number, a: number, c: number): number;
  traverserDcfr(
    sig: number,
    vals: number,
    act: number,
    out: number,
    reg: number,
    strat: number,
    A: number,
    H: number,
    alphaPos: number,
    betaNeg: number,
    gamma: number,
    acc: number,
  ): number;
}

/** Ops of the fused f32 update kernel (asm/regret.ts `update`). */
export const UPDATE_DCFR = 0, UPDATE_PLUS = 1, UPDATE_STRATEGY = 2;

let kernel: RegretKernel | null | undefined;

/** The regret-matching kernel of this thread, or null where Wasm SIMD is off or missing. */
export function regretKernel(): RegretKernel | null {
  if (kernel !== undefined) return kernel;
  const mod = wasmAllowed() ? compileModule(decodeBase64(WASM_BASE64)) : null;
  kernel = mod ? new RegretKernel(mod) : null;
  return kernel;
}

/** Regret matching on Wasm memory: sized on demand for the largest block seen. */
export class RegretKernel {
  private readonly x: Exports;
  private cap = 0;
  private H4 = 0;
  private view: Float32Array = new Float32Array(0);
  private u8: Uint8Array = new Uint8Array(0);
  private sig = 0;
  private sum = 0;
  private den = 0;

  constructor(mod: WebAssembly.Module) {
    this.x = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
  }

  private fit(A: number, H4: number): void {
    const n = A * H4;
    if (n <= this.cap && H4 <= this.H4) return;
    this.cap = Math.max(n, this.cap), this.H4 = Math.max(H4, this.H4);
    // Layout: regrets [0, 4 cap), sigma [4 cap, 8 cap), sums and denominators 8 H4 bytes each.
    const bytes = 8 * this.cap + 16 * this.H4;
    const mem = this.x.memory;
    if (bytes > mem.buffer.byteLength) {
      mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / 65536));
    }
    this.sig = 4 * this.cap, this.sum = 8 * this.cap, this.den = this.sum + 8 * this.H4;
    this.view = new Float32Array(mem.buffer, 0, 2 * this.cap);
  }

  /**
   * The fused f32 update of block `b` of f32 storage `f` (elements offsets[b] .. offsets[b + 1])
   * with `input` from 0 (quant/update.ts's updateBlock, bit-identical). Returns false, touching
   * nothing, when a result is not finite: the caller reruns the TypeScript update, which reports it.
   */
  update(
    f: Float32Array,
    offsets: ArrayLike<number>,
    b: number,
    op: number,
    input: Float32Array,
    a: number,
    c: number,
  ): boolean {
    const start = offsets[b], n = offsets[b + 1] - start, n4 = (n + 3) & ~3;
    this.fit(1, n4);
    const v = this.view, inAt = this.cap;
    v.set(f.subarray(start, start + n));
    v.set(input.subarray(0, n), inAt);
    for (let i = n; i < n4; i++) v[i] = 0, v[inAt + i] = 0;
    const max = this.x.update(op, 0, 4 * inAt, n4, a, c);
    if (!(max < Infinity)) return false;
    f.set(v.subarray(0, n), start);
    return true;
  }

  /**
   * The traverser's node of a DCFR walk on f32 regrets and strategy, fused (asm/regret.ts
   * traverserDcfr; bit-identical to mixValues, the instant regrets and both updates): writes the
   * node's values to out[off ..] and updates both stores' block at `start` (A x H elements);
   * `vals` is left as it was (the TypeScript steps overwrite it, scratch either way). Returns false, touching nothing, when a result is not finite: the caller
   * then runs the TypeScript steps, which report it.
   */
  traverserDcfr(
    sig: Float32Array,
    vals: Float32Array,
    act: Uint8Array,
    out: Float32Array,
    off: number,
    reg: Float32Array,
    strat: Float32Array,
    start: number,
    A: number,
    H: number,
    alphaPos: number,
    betaNeg: number,
    gamma: number,
  ): boolean {
    const n = A * H, n4 = (n + 3) & ~3, H4 = (H + 3) & ~3;
    // Layout (f32 elements): sig, vals, reg, strat (n4 each), out (H4), act (H4 bytes), acc (H f64).
    const fl = 4 * n4 + H4 + H4 / 4 + 2 * H4 + 2;
    this.fit(1, fl);
    const f = this.view, x = this.x;
    if (this.u8.buffer !== f.buffer) this.u8 = new Uint8Array(f.buffer);
    const sAt = 0, vAt = n4, rAt = 2 * n4, tAt = 3 * n4, oAt = 4 * n4, aAt = oAt + H4;
    const accAt = aAt + H4 / 4 + ((aAt + H4 / 4) & 1); // 8-byte aligned
    f.set(sig.subarray(0, n), sAt);
    f.set(vals.subarray(0, n), vAt);
    f.set(reg.subarray(start, start + n), rAt);
    f.set(strat.subarray(start, start + n), tAt);
    this.u8.set(act.subarray(0, H), 4 * aAt);
    const max = x.traverserDcfr(
      4 * sAt,
      4 * vAt,
      4 * aAt,
      4 * oAt,
      4 * rAt,
      4 * tAt,
      A,
      H,
      alphaPos,
      betaNeg,
      gamma,
      4 * accAt,
    );
    if (!(max < Infinity)) return false;
    reg.set(f.subarray(rAt, rAt + n), start);
    strat.set(f.subarray(tAt, tAt + n), start);
    out.set(f.subarray(oAt, oAt + H), off);
    return true;
  }

  /** sig[a * H + h] = regret matching of src[off + a * H + h] (A actions x H hands, f32). */
  match(src: Float32Array, off: number, A: number, H: number, sig: Float32Array): void {
    const n = A * H;
    this.fit(1, n + 4); // 3 spare elements after each region (asm/regret.ts)
    const v = this.view, s = this.cap;
    v.set(src.subarray(off, off + n));
    this.x.regretMatch(0, this.sig, A, H, this.sum, this.den);
    sig.set(v.subarray(s, s + n));
  }
}
