import { decodeBase64 } from "../../cfr/wasm/base64.ts";
import { compileModule, wasmAllowed } from "../../cfr/wasm/enabled.ts";
import { WASM_BASE64 } from "./terminal_wasm.ts";

/*
 * The Wasm twin of the postflop terminals (PostflopGame.showdown and its fold formula): the same
 * f64 sums in the same order, so the values are bit-identical to the TypeScript path. The module
 * has no allocator; this side lays its memory out with a bump arena: the hand cards and same-combo
 * indices once per game, each river board's showdown tables once per board (copied on first use),
 * and per call only the opponent reach in and the values out.
 */

/** One player's side of a river board's showdown tables (PostflopGame's BoardOrder). */
export interface ShowdownTables {
  /** Live hands in ascending strength, their strengths and cards; hands holding a board card. */
  order: Int32Array;
  strength: Uint16Array;
  c1: Uint8Array;
  c2: Uint8Array;
  dead: Int32Array;
}

interface Exports {
  memory: WebAssembly.Memory;
  showdown(
    d: number,
    opp: number,
    out: number,
    same: number,
    payWin: number,
    payLose: number,
    payTie: number,
    cs: number,
    all: number,
    win: number,
    crec: number,
    cr: number,
  ): void;
  fold(
    nO: number,
    nP: number,
    opp: number,
    oc: number,
    pc: number,
    same: number,
    out: number,
    scale: number,
    cs: number,
  ): void;
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * Whether the Wasm terminals run: WebAssembly with 128-bit SIMD is available and KIBITZ_WASM is
 * not "0" (which forces the TypeScript twin).
 */
export function wasmEnabled(): boolean {
  return wasmAllowed() && terminalModule() !== null;
}

/** The compiled kernel module, once per thread (null where WebAssembly SIMD is missing). */
function terminalModule(): WebAssembly.Module | null {
  if (compiled === undefined) compiled = compileModule(decodeBase64(WASM_BASE64));
  return compiled;
}

const PAGE = 65536;

/**
 * Resident memory the Wasm engine adds when the first kernel instantiates (its code space and
 * compiled code): 5.6 MB measured with Deno 2.9.6, counted as 6 MB.
 */
export const WASM_ENGINE_BYTES = 6 * 1024 * 1024;

/**
 * Wasm memory one player's side of a river board's showdown tables takes (a packed record of
 * strength and cards, 4 B, and the hand index, 4 B, per live hand; 4 B per dead hand; the
 * descriptor; 16-byte alignment of 4 arrays).
 */
export function wasmTableBytes(live: number, dead: number): number {
  return 8 * live + 4 * dead + 32 + 4 * 8;
}

/** One game's terminal kernels: its own instance and memory (one per game and thread). */
export class TerminalKernels {
  private readonly x: Exports;
  private top = 1024; // bytes below are spare (the module has no data segment)
  private readonly cs: number;
  private readonly scratch: number[];
  private readonly io: [number, number];
  private readonly cards: [number, number];
  private readonly same: [number, number];
  private readonly numHands: readonly [number, number];
  /** Descriptor address per board index and player (0: not copied yet). */
  private readonly desc: number[] = [];
  /** Views of the reach in / values out (remade when the memory grows and detaches them). */
  private inView: Float32Array[] = [];
  private outView: Float32Array[] = [];

  constructor(
    numHands: readonly [number, number],
    cards: [Uint8Array, Uint8Array],
    sameIn: [Int32Array, Int32Array],
  ) {
    const mod = terminalModule();
    if (!mod) throw new Error("WebAssembly SIMD is not available");
    this.x = new WebAssembly.Instance(mod, {}).exports as unknown as Exports;
    this.numHands = numHands;
    const n = Math.max(numHands[0], numHands[1]);
    this.cs = this.alloc(52 * 8);
    // Per-card totals and wins (f64); compacted opponent records (a sentinel slot before and
    // after) and their reach (f64).
    this.scratch = [
      this.alloc(52 * 8),
      this.alloc(8 * n),
      this.alloc(4 * n + 32) + 16,
      this.alloc(8 * n),
    ];
    this.io = [this.alloc(4 * n), this.alloc(4 * n)];
    this.cards = [this.put(cards[0]), this.put(cards[1])];
    this.same = [this.put(sameIn[0]), this.put(sameIn[1])];
  }

  /** Bytes of Wasm memory in use (tables copied so far included). */
  bytes(): number {
    return this.top;
  }

  private alloc(bytes: number): number {
    const at = this.top;
    this.top = (at + bytes + 15) & ~15;
    const mem = this.x.memory;
    if (this.top > mem.buffer.byteLength) {
      mem.grow(Math.ceil((this.top - mem.buffer.byteLength) / PAGE));
      this.inView = []; // detached by the growth
    }
    return at;
  }

  private put(a: Int32Array | Uint32Array | Uint16Array | Uint8Array): number {
    const at = this.alloc(a.byteLength);
    new Uint8Array(this.x.memory.buffer, at, a.byteLength).set(
      new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
    );
    return at;
  }

  /** The tables of `board` for player p, copied into Wasm memory on first use (0: not yet). */
  tables(board: number, p: 0 | 1): number {
    return this.desc[2 * board + p] ?? 0;
  }

  /**
   * Copies a river board's showdown tables (each player's side once) into Wasm memory and makes
   * both players' descriptors: wasmTableBytes(live, dead) per side.
   */
  addTables(board: number, sides: readonly [ShowdownTables, ShowdownTables]): void {
    const at = sides.map((t) => {
      const n = t.order.length, rec = new Uint32Array(n);
      for (let i = 0; i < n; i++) rec[i] = t.strength[i] | (t.c1[i] << 16) | (t.c2[i] << 24);
      return {
        n,
        rec: this.put(rec),
        idx: this.put(t.order),
        dead: this.put(t.dead),
        nDead: t.dead.length,
      };
    });
    for (const p of [0, 1] as const) {
      const m = at[p], t = at[1 - p];
      const fields = [m.n, t.n, m.rec, m.idx, t.rec, t.idx, m.dead, m.nDead];
      this.desc[2 * board + p] = this.put(Int32Array.from(fields));
    }
  }

  private input(p: 0 | 1, opp: Float32Array): void {
    if (this.inView.length === 0) {
      const buf = this.x.memory.buffer, [n0, n1] = this.numHands;
      this.inView = [new Float32Array(buf, this.io[0], n1), new Float32Array(buf, this.io[0], n0)];
      this.outView = [new Float32Array(buf, this.io[1], n0), new Float32Array(buf, this.io[1], n1)];
    }
    const v = this.inView[p], n = v.length;
    if (opp.length === n) v.set(opp);
    else for (let i = 0; i < n; i++) v[i] = opp[i];
  }

  private output(p: 0 | 1, out: Float32Array, off: number): void {
    out.set(this.outView[p], off);
  }

  /**
   * Showdown of `p` with the tables of descriptor `d` (addTables: mine = p's side of the board,
   * theirs = the other player's): PostflopGame.showdown's values.
   */
  showdown(
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    out: Float32Array,
    off: number,
    payWin: number,
    payLose: number,
    payTie: number,
  ): void {
    this.input(p, opp);
    const s = this.scratch;
    this.x.showdown(
      d,
      this.io[0],
      this.io[1],
      this.same[p],
      payWin,
      payLose,
      payTie,
      this.cs,
      s[0],
      s[1],
      s[2],
      s[3],
    );
    this.output(p, out, off);
  }

  /** out[off + h] = scale * (opponent reach sharing no card with h): the fold formula. */
  fold(p: 0 | 1, opp: Float32Array, out: Float32Array, off: number, scale: number): void {
    const o = (1 - p) as 0 | 1;
    this.input(p, opp);
    this.x.fold(
      this.numHands[o],
      this.numHands[p],
      this.io[0],
      this.cards[o],
      this.cards[p],
      this.same[p],
      this.io[1],
      scale,
      this.cs,
    );
    this.output(p, out, off);
  }
}
