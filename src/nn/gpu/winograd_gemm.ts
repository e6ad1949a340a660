// The Winograd transformed-domain GEMMs as a family of generated kernels (one per tiling variant),
// their transforms, and the per-device compile cache. For every transformed element xi (workgroup
// z), M[xi] (Co x P) = U[xi] (Co x Ci) V[xi] (Ci x P): U is the filter transform ([alpha, Co, Ci],
// f32), V the input transform and M the product ([alpha, Ci|Co, ppad], f32 or f16 storage), with
// ppad a multiple of 128 so that every column block is whole and V / M move as vec4.
//
// Thread (tx, ty) of a WX x WY workgroup owns GM x GN blocks of 4 x 4 outputs (rows
// g 4WY + 4ty + i, columns h 4WX + 4tx + j) as named vec4 accumulators; K slices of BK rows are
// staged in workgroup memory (A as [k][m] vec4s, B as [k][n] vec4s) while the next slice's global
// loads wait in registers. Variants differ in tile shape, slice depth, the order in which
// workgroups walk the row and column blocks, whether the slice loop is written out, one or two
// slice buffers, scalar or vec4 loads of U, padded A rows, and f32 or f16 products.
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { oncePerDevice, type PerDevice } from "../../gpu/per_device.ts";
import { f16Prelude } from "./conv_gemm.ts";
import { winogradSource, type WinogradTile } from "../winograd.ts";
import { type WinoFused, winoFusedName, winogradFusedSource } from "./winograd_fused.ts";
import { winogradInputStagedSource, winogradOutputStagedSource } from "./winograd_staged.ts";

/** Tiling of one transformed-domain GEMM kernel. */
export interface WinoGemm {
  /** Threads along the output columns (tiles) and rows (Co). */
  wx: number;
  wy: number;
  /** 4 x 4 register blocks per thread along rows (gm) and columns (gn). */
  gm: number;
  gn: number;
  /** Depth of one K slice staged in workgroup memory. */
  bk: number;
  /**
   * Workgroup x walks the row blocks first, so the workgroups that read one V column block run
   * together and all but the first find it in L2.
   */
  rowFast: boolean;
  /** The slice loop written out statement by statement instead of a counted loop. */
  unroll: boolean;
  /**
   * Two slice buffers in workgroup memory: the next slice is stored while this one is read, one
   * barrier per slice instead of two (twice the workgroup memory).
   */
  double?: boolean;
  /**
   * U read from global memory as vec4s along K (one 16-byte load per 4 weights instead of four
   * scalar loads; rows whose Ci is not a multiple of 4 take a scalar path, chosen per dispatch).
   */
  vecA?: boolean;
  /**
   * A's workgroup rows padded by one vec4 (stride BM + 4 floats): with `vecA`, a warp's
   * transposed stores of A (column k of the slice into row k of As) hit 32 banks (2-way with
   * 16-deep slices) instead of 4 banks 8 ways each (unpadded rows of one k share a bank).
   */
  padA?: boolean;
  /**
   * f16 arithmetic (the f16 plans, `shader-f16`): workgroup tiles in f16, vec4<f16> FMAs
   * accumulated in f16 over `f16k` consecutive K steps (a divisor of bk), then added into the f32
   * accumulators ("f32 accumulation across chunks").
   */
  f16k?: number;
  /**
   * Split-K (session 30): workgroup z = xi splits + s sums its share of the K channels (chunks of
   * whole slices) into its own partial M; M is then [alpha, splits, Co, ppad] and its readers (the
   * output transforms and the bridges) add the partials. For small batches, whose GEMMs have too
   * few blocks to fill a datacenter GPU (batch 1 at F(4x4): 288 workgroups of 32 x 64).
   */
  splits?: number;
}

/** Storage of V and M: f32, f16 (`shader-f16`), or the f16 text bound to f32 (tests). */
export type TransformedStorage = "f32" | "f16" | "f16-emulated";

/** Output rows (Co) and columns (tiles) of one workgroup. */
export function gemmBlock(v: WinoGemm): { bm: number; bn: number } {
  return { bm: 4 * v.wy * v.gm, bn: 4 * v.wx * v.gn };
}

/** Throws unless the variant's slices divide evenly into its threads and its columns into 128. */
export function checkWinoGemm(v: WinoGemm): void {
  const threads = v.wx * v.wy, { bm, bn } = gemmBlock(v);
  const ok = (v.vecA ? v.bk % 4 === 0 : (bm * v.bk) % threads === 0) &&
    ((v.bk * bn) / 4) % threads === 0 && 128 % bn === 0 && threads <= 256 &&
    (v.f16k === undefined || (v.f16k > 0 && v.bk % v.f16k === 0)) &&
    (v.splits === undefined || (Number.isInteger(v.splits) && v.splits >= 2));
  if (!ok) throw new Error(`Winograd GEMM variant ${JSON.stringify(v)} does not fit its threads`);
}

/**
 * Workgroup memory of a variant's kernel, bytes (A rows padded with `padA`, two slices with
 * `double`, f16 tiles with `f16k` unless `emulated`: f32 under the f16 text): over the device's
 * maxComputeWorkgroupStorageSize it does not compile (the tuner records a failure).
 */
export function winoGemmWorkgroupBytes(v: WinoGemm, emulated = false): number {
  const { bm, bn } = gemmBlock(v);
  const vec4s = (v.double ? 2 : 1) * v.bk * (bm / 4 + (v.padA ? 1 : 0) + bn / 4);
  return vec4s * (v.f16k && !emulated ? 8 : 16);
}

/**
 * A short name: rows x columns, slice depth, threads, then r (row blocks first), u (unrolled),
 * d (double-buffered slices), v (vec4 loads of U), p (padded A rows), fN (f16 products in chunks
 * of N K steps), sN (split-K in N partials).
 */
export function winoGemmName(v: WinoGemm): string {
  const { bm, bn } = gemmBlock(v);
  return `${bm}x${bn}k${v.bk}t${v.wx * v.wy}${v.rowFast ? "r" : ""}${v.unroll ? "u" : ""}${
    v.double ? "d" : ""
  }${v.vecA ? "v" : ""}${v.padA ? "p" : ""}${v.f16k ? `f${v.f16k}` : ""}${
    v.splits ? `s${v.splits}` : ""
  }`;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * WGSL of the batched GEMM `gemm`: binding 0 U [alpha, Co, Ci] f32 (vec4s with `vecA`), 1 V
 * [alpha, Ci, ppad] and 2 M [alpha, Co, ppad] (vec4s of f32 or s16), 3 Params { ci, co, ppad4 }.
 * Dispatch (row blocks, column blocks, alpha) when rowFast, else (column blocks, row blocks,
 * alpha); z is alpha splits with `splits` (M [alpha, splits, Co, ppad]). `arith`: the f16 type
 * of an `f16k` variant's products (f16, or f32 under the f16 text in tests).
 */
export function winogradGemmSource(
  v: WinoGemm,
  transformed: TransformedStorage = "f32",
  arith: "f16" | "f16-emulated" = "f16",
): string {
  checkWinoGemm(v);
  const { bm, bn } = gemmBlock(v);
  const threads = v.wx * v.wy;
  const half = transformed !== "f32";
  const vt = half ? "s16" : "f32";
  const hk = v.f16k ?? 0;
  if (hk && half && (arith === "f16") !== (transformed === "f16")) {
    throw new Error(`Winograd GEMM: f16 products (${arith}) with V/M ${transformed}`);
  }
  // Type of the workgroup tiles and of the chunk accumulators.
  const tt = hk ? "h16" : "f32";
  // The end of this workgroup's K range: its split's chunk, or every channel.
  const ke = v.splits ? "kend" : "p.ci";
  const cvt = (e: string) => (hk ? `h16(${e})` : e);
  // A loads: scalars (la per thread), or vec4s along K (la4 per thread; guarded where the slice's
  // vec4 count does not divide into the threads).
  const ta4 = (bm * v.bk) / 4;
  const la = v.vecA ? Math.ceil(ta4 / threads) : (bm * v.bk) / threads;
  const guardA = v.vecA && ta4 % threads !== 0;
  const lb = (v.bk * bn) / 4 / threads;
  const aLoad = (r: number) =>
    v.vecA
      ? `    { let e = t + ${r * threads}u;${guardA ? ` if (e < ${ta4}u) {` : ""}
      let m = m0 + e / BK4; let k = k0 + 4u * (e % BK4); let ok = m < p.co && k < ${ke};
      let row = ubase + min(m, p.co - 1u) * p.ci;
      if (aligned) {
        ra${r} = select(vec4<f32>(0.0), u[(row + min(k, p.ci - 4u)) / 4u], ok);
      } else {
        ra${r} = vec4<f32>(${
        range(4).map((j) =>
          `select(0.0, ua(row + min(k + ${j}u, p.ci - 1u)), m < p.co && k + ${j}u < ${ke})`
        ).join(", ")
      });
      }${guardA ? " }" : ""} }`
      : `    { let e = t + ${r * threads}u; let m = m0 + e / BK; let k = k0 + e % BK;
      ra${r} = select(0.0, u[ubase + min(m, p.co - 1u) * p.ci + min(k, p.ci - 1u)], m < p.co && k < ${ke}); }`;
  const loads = [
    ...range(la).map(aLoad),
    ...range(lb).map((r) =>
      `    { let e = t + ${r * threads}u; let k = k0 + e / BN4;
      rb${r} = select(vec4<f32>(0.0), vec4<f32>(vin[vbase + min(k, p.ci - 1u) * p.ppad4 + c04 + e % BN4]), k < ${ke}); }`
    ),
  ].join("\n");
  // Double buffering: slice buffer `buf` (0 or 1) starts SA / SB vec4s into As / Bs.
  const offA = (buf: string) => (v.double ? `${buf} * SA + ` : "");
  const offB = (buf: string) => (v.double ? `${buf} * SB + ` : "");
  const aStore = (buf: string, r: number) =>
    v.vecA
      ? `    { let e = t + ${r * threads}u;${
        guardA ? ` if (e < ${ta4}u) {` : ""
      } let ml = e / BK4; let kq = 4u * (e % BK4);
${
        range(4).map((j) =>
          `      As[${offA(buf)}(kq + ${j}u) * AS4 + ml / 4u][ml % 4u] = ${cvt(`ra${r}[${j}]`)};`
        ).join("\n")
      }${guardA ? " }" : ""} }`
      : `    { let e = t + ${r * threads}u; let ml = e / BK; As[${
        offA(buf)
      }(e % BK) * AS4 + ml / 4u][ml % 4u] = ${cvt(`ra${r}`)}; }`;
  const storesTo = (buf: string) =>
    [
      ...range(la).map((r) => aStore(buf, r)),
      ...range(lb).map((r) =>
        `    { let e = t + ${r * threads}u; Bs[${offB(buf)}e] = ${
          hk ? `vec4<h16>(rb${r})` : `rb${r}`
        }; }`
      ),
    ].join("\n");
  const stores = storesTo("cur");
  const accName = (g: number, i: number, h: number) => `${hk ? "hacc" : "acc"}_${g}_${i}_${h}`;
  const step = (kk: string) => {
    const out: string[] = [];
    for (const g of range(v.gm)) {
      out.push(`let a${g} = As[${offA("cur")}${kk} * AS4 + ${g * v.wy}u + lid.y];`);
    }
    for (const h of range(v.gn)) {
      out.push(`let b${h} = Bs[${offB("cur")}${kk} * BN4 + ${h * v.wx}u + lid.x];`);
    }
    for (const g of range(v.gm)) {
      for (const i of range(4)) {
        for (const h of range(v.gn)) {
          const a = accName(g, i, h);
          out.push(`${a} = fma(vec4<${tt}>(a${g}[${i}]), b${h}, ${a});`);
        }
      }
    }
    return out;
  };
  // f16 products: the chunk's f16 sums go into the f32 accumulators.
  const flush = range(v.gm).flatMap((g) =>
    range(4).flatMap((i) =>
      range(v.gn).map((h) =>
        `acc_${g}_${i}_${h} += vec4<f32>(hacc_${g}_${i}_${h}); hacc_${g}_${i}_${h} = vec4<h16>(0.0);`
      )
    )
  );
  const ind = (ls: string[], pad: string) => ls.map((l) => pad + l).join("\n");
  const body = v.unroll
    ? range(v.bk).map((kk) =>
      `    {\n${ind(step(`${kk}u`), "      ")}\n    }${
        hk && (kk + 1) % hk === 0 ? `\n${ind(flush, "    ")}` : ""
      }`
    ).join("\n")
    : hk
    ? `    for (var kc = 0u; kc < BK; kc += ${hk}u) {
      for (var kk = kc; kk < kc + ${hk}u; kk++) {\n${ind(step("kk"), "        ")}\n      }
${ind(flush, "      ")}
    }`
    : `    for (var kk = 0u; kk < BK; kk++) {\n${ind(step("kk"), "      ")}\n    }`;
  const loopSingle = `  for (; k0 < ${ke};) {
${stores}
    workgroupBarrier();
    k0 += BK;
    if (k0 < ${ke}) {
${loads}
    }
${body}
    workgroupBarrier();
  }`;
  const loopDouble = `${stores}
  workgroupBarrier();
  for (; k0 < ${ke};) {
    k0 += BK;
    if (k0 < ${ke}) {
${loads}
    }
${body}
    if (k0 < ${ke}) {
${storesTo("(1u - cur)")}
    }
    workgroupBarrier();
    cur = 1u - cur;
  }`;
  const acc = range(v.gm).flatMap((g) =>
    range(4).flatMap((i) =>
      range(v.gn).flatMap((h) => [
        `  var acc_${g}_${i}_${h} = vec4<f32>(0.0);`,
        ...(hk ? [`  var hacc_${g}_${i}_${h} = vec4<h16>(0.0);`] : []),
      ])
    )
  );
  const regs = [
    ...range(la).map((r) => `  var ra${r} = ${v.vecA ? "vec4<f32>(0.0)" : "0.0"};`),
    ...range(lb).map((r) => `  var rb${r} = vec4<f32>(0.0);`),
  ];
  const epilogue = range(v.gm).flatMap((g) =>
    range(4).map((i) =>
      `  {
    let m = m0 + ${g * 4 * v.wy}u + lid.y * 4u + ${i}u;
    if (m < p.co) {
${
        range(v.gn).map((h) =>
          `      mo[mbase + m * p.ppad4 + c04 + ${
            h * v.wx
          }u + lid.x] = vec4<${vt}>(acc_${g}_${i}_${h});`
        ).join("\n")
      }
    }
  }`
    )
  );
  const as4 = bm / 4 + (v.padA ? 1 : 0);
  // `enable f16;` comes first, once: from the V/M prelude where V and M are f16.
  const prelude = (half ? f16Prelude(transformed) : "") +
    (hk
      ? arith === "f16"
        ? `${transformed === "f16" ? "" : "enable f16;\n"}alias h16 = f16;\n\n`
        : "alias h16 = f32;\n\n"
      : "");
  const uDecl = v.vecA
    ? `@group(0) @binding(0) var<storage, read> u: array<vec4<f32>>;

fn ua(i: u32) -> f32 {
  return u[i / 4u][i % 4u];
}
`
    : `@group(0) @binding(0) var<storage, read> u: array<f32>;`;
  return `${prelude}// Generated by src/nn/gpu/winograd_gemm.ts: ${
    winoGemmName(v)
  }, V/M ${transformed}${hk ? `, f16 products (${arith}) in chunks of ${hk}` : ""}.
struct Params { ci: u32, co: u32, ppad4: u32, _a: u32 }

${uDecl}
@group(0) @binding(1) var<storage, read> vin: array<vec4<${vt}>>;
@group(0) @binding(2) var<storage, read_write> mo: array<vec4<${vt}>>;
@group(0) @binding(3) var<uniform> p: Params;

const BK = ${v.bk}u;
const BK4 = ${v.bk / 4 >= 1 ? v.bk / 4 : 1}u;
const BM4 = ${bm / 4}u;
const AS4 = ${as4}u;
const BN4 = ${bn / 4}u;
const SA = ${v.bk * as4}u;
const SB = ${(v.bk * bn) / 4}u;
var<workgroup> As: array<vec4<${tt}>, ${(v.double ? 2 : 1) * v.bk * as4}>;
var<workgroup> Bs: array<vec4<${tt}>, ${((v.double ? 2 : 1) * v.bk * bn) / 4}>;

@compute @workgroup_size(${v.wx}, ${v.wy})
fn gemm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * ${v.wx}u + lid.x;
${
    v.splits
      ? `  // Split s of xi: channels [s kc, (s + 1) kc), kc whole slices; its own partial M.
  let xi = wid.z / ${v.splits}u;
  let kc = (p.ci + ${v.splits * v.bk - 1}u) / ${v.splits * v.bk}u * BK;
  let kbeg = (wid.z % ${v.splits}u) * kc;
  let kend = min(p.ci, kbeg + kc);`
      : `  let xi = wid.z;`
  }
  let m0 = wid.${v.rowFast ? "x" : "y"} * ${bm}u;
  let c04 = wid.${v.rowFast ? "y" : "x"} * BN4;
  let ubase = xi * p.co * p.ci;
  let vbase = xi * p.ci * p.ppad4;
  let mbase = ${v.splits ? "wid.z" : "xi"} * p.co * p.ppad4;
${v.vecA ? "  let aligned = p.ci % 4u == 0u;\n" : ""}${acc.join("\n")}
${regs.join("\n")}
  var k0 = ${v.splits ? "kbeg" : "0u"};
  var cur = 0u;
${loads}
${v.double ? loopDouble : loopSingle}
${epilogue.join("\n")}
}
`;
}

/** Tile columns a variant computes for P real ones: P rounded up to its block width. */
export function variantColumns(v: WinoGemm, p: number): number {
  const { bn } = gemmBlock(v);
  return Math.ceil(p / bn) * bn;
}

/**
 * Workgroups of a variant's dispatch for Co rows, ppad columns and alpha transformed elements
 * (times its splits along z).
 */
export function winoGemmGroups(
  v: WinoGemm,
  co: number,
  ppad: number,
  alpha: number,
): [number, number, number] {
  const { bm, bn } = gemmBlock(v);
  const rows = Math.ceil(co / bm), cols = ppad / bn, z = alpha * (v.splits ?? 1);
  return v.rowFast ? [rows, cols, z] : [cols, rows, z];
}

/**
 * One candidate of the autotuner: a GEMM tiling and the storage of V and M (`half`: the f16 plan's
 * storage, f16 or emulated; only in f16 plans).
 */
export interface GemmCandidate {
  name: string;
  gemm: WinoGemm;
  half: boolean;
  fused?: undefined;
  /** The plane-staged output transform (`-o`; session 29) where the image's planes fit it. */
  planeOut?: boolean;
  /**
   * The column-staged output transform (`-c`; winograd_staged.ts) with workgroups of about this
   * many threads.
   */
  stagedOut?: number;
  /** The column-staged input transform (`-i`), as stagedOut. */
  stagedIn?: number;
}

/**
 * A fused candidate: one kernel holding M in the workgroup (and V too when `fused.input`),
 * src/nn/gpu/winograd_fused.ts; V and M never stored in f16.
 */
export interface FusedCandidate {
  name: string;
  fused: WinoFused;
  half: false;
  gemm?: undefined;
  planeOut?: undefined;
  stagedOut?: undefined;
  stagedIn?: undefined;
}

/** Anything the autotuner can pick for a Winograd layer. */
export type WinoCandidate = GemmCandidate | FusedCandidate;

function cand(
  wx: number,
  wy: number,
  gm: number,
  gn: number,
  bk: number,
  rowFast: boolean,
  unroll: boolean,
  half = false,
  double = false,
  extra: Pick<WinoGemm, "vecA" | "padA" | "f16k" | "splits"> = {},
): GemmCandidate {
  const gemm = { wx, wy, gm, gn, bk, rowFast, unroll, ...(double ? { double } : {}), ...extra };
  return { name: `${winoGemmName(gemm)}${half ? "-h" : ""}`, gemm, half };
}

/**
 * Candidate c with the plane-staged output transform (winograd.ts, wino_output_planes): coalesced
 * stores of y, for the output transform that ran at about a quarter of the H200's copy bandwidth
 * in session 29 (0.49 ms for 0.52 GB at F(7x7), batch 256).
 */
export function planeOutCandidate(c: GemmCandidate): GemmCandidate {
  return { ...c, name: `${c.name}-o`, planeOut: true };
}

/** Which transforms a staged candidate stages: the output (`c`), the input (`i`), both. */
export type StagedKind = "c" | "i" | "ic";

/** Every StagedKind, in the order the candidate lists give them. */
export const STAGED_KINDS: readonly StagedKind[] = ["c", "i", "ic"];

/**
 * Candidate c with column-staged transforms (winograd_staged.ts): the output transform's (`c`: m +
 * 2 loads of M a thread instead of (m + 2)^2, for the output transform that read M at about a
 * quarter of the H200's bandwidth in sessions 29-31), the input transform's (`i`), or both
 * (`-ic`); workgroups of about `threads` threads (a suffix N where not 256).
 */
export function stagedCandidate(
  c: GemmCandidate,
  which: StagedKind,
  threads = 256,
): GemmCandidate {
  return {
    ...c,
    name: `${c.name}-${which}${threads === 256 ? "" : threads}`,
    ...(which.includes("c") ? { stagedOut: threads } : {}),
    ...(which.includes("i") ? { stagedIn: threads } : {}),
  };
}

/** Whether a candidate runs only in f16 plans: f16 V/M storage, or f16 products. */
export function needsF16Plan(c: WinoCandidate): boolean {
  return c.half || !!c.gemm?.f16k;
}

const VP = { vecA: true, padA: true } as const;

/**
 * The session-16 f32 tilings: vec4 loads of U (`v`), conflict-free transposed A stores into
 * padded workgroup rows (`p`), with double-buffered slices; 8 x 8 outputs per thread (128 x 128
 * from 256 threads), 4 x 8 (64 x 128, the shape of the H200's best so far), 8 x 4, and the larger
 * register blocks: 16 x 8 outputs per thread (256 x 128 from 256 threads: a 256-filter layer's
 * whole Co in one workgroup, so each V column block is read once; and 128 x 128 from 128 threads).
 */
export function blockedCandidates(): GemmCandidate[] {
  return [
    cand(16, 16, 2, 2, 8, true, true, false, true, VP),
    cand(16, 16, 2, 2, 16, true, true, false, true, VP),
    cand(16, 16, 2, 2, 8, true, true, false, false, VP),
    cand(16, 16, 1, 2, 8, true, true, false, false, VP),
    cand(16, 16, 1, 2, 8, true, true, false, true, VP),
    cand(16, 16, 2, 1, 16, true, true, false, true, VP),
    cand(16, 16, 4, 2, 8, true, true, false, true, VP),
    cand(16, 16, 4, 2, 8, true, false, false, true, VP),
    cand(16, 8, 4, 2, 8, true, true, false, true, VP),
  ];
}

/**
 * Small blocks for small batches (session 27): 32 x 64, 64 x 32 and 32 x 32 outputs from 128 or
 * 64 threads, 4 x 4 a thread, with 16-deep slices and deeper. At batch 1 on 26 x 26 a
 * transformed-domain GEMM is 256 x 256 x 49 columns per element: 64 x 64 blocks make 144
 * workgroups of the 36 elements, too few to fill a datacenter GPU; 32 x 32 blocks make 576.
 * F(6x6)'s 25 tiles pad to 32 columns, not 64. Then the 16-column blocks (narrowCandidates).
 */
export function smallBlockCandidates(): GemmCandidate[] {
  return [
    cand(16, 8, 1, 1, 16, true, true, false, false, VP),
    cand(8, 16, 1, 1, 16, true, true, false, false, VP),
    cand(8, 8, 1, 1, 16, true, true, false, false, VP),
    // Deep slices: a batch-1 GEMM's K loop (256 channels) waits on one round of global loads a
    // slice with little work to hide it; 32- and 64-deep slices make 8 and 4 rounds, not 16.
    cand(16, 8, 1, 1, 32, true, true, false, false, VP),
    cand(8, 16, 1, 1, 32, true, true, false, false, VP),
    cand(8, 8, 1, 1, 64, true, true, false, false, VP),
    ...narrowCandidates(),
  ];
}

/**
 * 16-column blocks (session 28): 64 x 16 from 64 threads and 32 x 16 from 32, 4 x 4 a thread. At
 * batch 1 on 26 x 26 F(7x7)'s 16 tiles fill them exactly, where 32-column blocks compute twice
 * the columns; F(4x4)'s 49 tiles pad to 64 columns either way, so F(4x4)'s tuning rarely ranks
 * them and the small-batch tuner adds them to the large tiles' candidates (largeCandidates).
 */
export function narrowCandidates(): GemmCandidate[] {
  return [
    cand(4, 16, 1, 1, 16, true, true, false, false, VP),
    cand(4, 8, 1, 1, 32, true, true, false, false, VP),
  ];
}

/**
 * f16 products (f16 plans on `shader-f16` adapters): the blocked tilings with f16 workgroup tiles
 * and vec4<f16> FMAs summed in f16 over chunks of 4 or 8 K steps, then in f32; V and M f32
 * (`f16VM`: also f16 V/M, `-h`). Their F(4x4) error is the f16 V/M variants' (see
 * tests/nn/winograd_gemm_test.ts): opt-in with them (KIBITZ_NN_WINO_F16VM=1).
 */
export function f16ProductCandidates(f16VM: boolean): GemmCandidate[] {
  const c = (wy: number, gm: number, gn: number, bk: number, f16k: number, half: boolean) =>
    cand(16, wy, gm, gn, bk, true, true, half, true, { ...VP, f16k });
  return [
    c(16, 2, 2, 8, 4, false),
    c(16, 2, 2, 16, 8, false),
    c(16, 1, 2, 8, 4, false),
    c(16, 4, 2, 8, 4, false),
    ...(f16VM ? [c(16, 2, 2, 16, 8, true), c(16, 1, 2, 8, 4, true)] : []),
  ];
}

/** Candidate c with its GEMM split into `splits` partials along K (WinoGemm.splits). */
export function splitCandidate(c: GemmCandidate, splits: number): GemmCandidate {
  const gemm = { ...c.gemm, splits };
  return { ...c, gemm, name: `${winoGemmName(gemm)}${c.half ? "-h" : ""}` };
}

/**
 * Split-K twins (session 30) for small batches, where too few blocks fill the GPU: at batch 1 on
 * 26 x 26 the H200's F(4x4) GEMM (32 x 64 blocks, 32-deep slices) ran 288 workgroups at about 8
 * TFLOP/s, 28 us a layer, 64 % of the plan. The two 32 x 64 tilings that won batch 1 and 8 in
 * session 29, 32 x 32 and the 16-column 64 x 16 blocks, in 2 and 4 partials, and the 32 x 64 one
 * with 16-deep slices in 8 (two slices each of 256 channels). The tuner adds them where a layer
 * has few tile columns (splitTuned); the readers of M add the partials, so a split costs reading M
 * more times.
 */
export function splitCandidates(): GemmCandidate[] {
  const k32 = cand(16, 8, 1, 1, 32, true, true, false, false, VP);
  const k16 = cand(16, 8, 1, 1, 16, true, true, false, false, VP);
  const sq = cand(8, 8, 1, 1, 16, true, true, false, false, VP);
  const narrow = cand(4, 16, 1, 1, 16, true, true, false, false, VP);
  return [
    ...[k32, k16, sq, narrow].flatMap((c) => [2, 4].map((n) => splitCandidate(c, n))),
    splitCandidate(k16, 8),
  ];
}

const PLANE_OUT_TILINGS = ["128x128k8t256ruvp", "64x128k8t256ruvp", "128x128k16t256rudvp"];

/**
 * The hardware candidates (256 threads unless named): 8x8, 8x4, 4x8 and 4x4 outputs per thread,
 * slices of 8 or 16, column-major or row-major block order, rolled or unrolled slice loops;
 * `f16VM` adds the best-guess tilings with V and M stored as f16 (half the transformed-domain
 * traffic, f16 plans only). Their error is F(4x4)'s weak point: about 1.1e-2 of the output's
 * scale against 3.3e-4 for f16 storage of the activations alone (tests/nn/winograd_gemm_test.ts).
 */
export function hardwareCandidates(f16VM: boolean): GemmCandidate[] {
  const best = blockedCandidates().filter((c) => PLANE_OUT_TILINGS.includes(c.name));
  const f32 = [
    cand(16, 16, 2, 2, 8, false, false), // the legacy tiling, with vec4 V loads
    cand(16, 16, 2, 2, 8, true, false),
    cand(16, 16, 2, 2, 8, true, true),
    cand(16, 16, 2, 2, 16, true, true),
    cand(16, 16, 2, 1, 16, true, true), // 128 x 64: 8 x 4 per thread
    cand(16, 16, 1, 2, 8, true, true), // 64 x 128: 4 x 8 per thread
    cand(16, 16, 1, 1, 16, true, true), // 64 x 64: 4 x 4 per thread
    cand(8, 8, 2, 2, 8, true, true), // 64 x 64 from 64 threads, 8 x 8 each
    // 256 x 64: every Co row of a 256-filter layer in one workgroup, so V is read once (20 KiB of
    // workgroup memory: past WebGPU's 16 KiB default; the tuner records a failure where it is over).
    cand(8, 32, 2, 2, 16, false, true),
    cand(16, 16, 2, 2, 32, true, false), // 128 x 128 with 32-deep slices (32 KiB)
    // Double-buffered slices: one barrier per slice.
    cand(16, 16, 2, 2, 8, true, true, false, true),
    cand(16, 16, 2, 2, 16, true, true, false, true),
    cand(16, 16, 2, 1, 16, true, true, false, true),
    ...blockedCandidates(),
    ...smallBlockCandidates(),
    // The H200's three fastest F(4x4) tilings at batch 256 in session 29, with the plane-staged
    // output transform.
    ...best.map(planeOutCandidate),
    // The same three with column-staged transforms (session 32): the output's, the input's,
    // both.
    ...best.flatMap((c) => STAGED_KINDS.map((k) => stagedCandidate(c, k))),
  ];
  if (!f16VM) return f32;
  return [
    ...f32,
    cand(16, 16, 2, 2, 8, true, true, true),
    cand(16, 16, 2, 2, 16, true, true, true),
    cand(16, 16, 2, 1, 16, true, true, true),
    cand(16, 16, 1, 1, 16, true, true, true),
    ...f16ProductCandidates(true),
  ];
}

/**
 * Small twins of the hardware candidates (16 threads) that a software adapter compiles in
 * seconds: the same generator paths (rolled and unrolled, both block orders, 8x8 / 8x4 / 4x4 per
 * thread, f32 and f16 V/M), for the parity tests.
 */
export function testCandidates(): GemmCandidate[] {
  // The twin of the staged output transforms (16 x 32 from 16 threads).
  const twin = cand(4, 4, 1, 2, 4, true, true, false, true, VP);
  return [
    cand(4, 4, 1, 1, 4, false, false),
    cand(4, 4, 2, 2, 4, true, true),
    cand(4, 4, 2, 1, 8, true, false),
    cand(4, 4, 1, 2, 4, false, true),
    cand(4, 4, 2, 2, 4, true, true, true),
    cand(4, 4, 2, 2, 4, true, true, false, true),
    cand(4, 4, 1, 1, 4, false, false, false, true),
    // vec4 U loads with padded A rows: double-buffered and not, 2 vec4s a thread and 1, 16 x 8
    // outputs a thread (unpadded), and a guarded partial load (8 x 32 blocks: 8 vec4s of a slice
    // for 16 threads, as 64 x 128 blocks from 256 threads have 128).
    cand(4, 4, 2, 2, 8, true, false, false, true, VP),
    cand(4, 4, 2, 2, 4, false, false, false, false, VP),
    cand(4, 4, 1, 2, 4, true, true, false, true, VP),
    cand(4, 4, 4, 2, 4, true, false, false, true, { vecA: true }),
    cand(8, 2, 1, 1, 4, true, true, false, true, VP),
    // f16 products (emulated on software adapters: the same text with h16 = f32).
    cand(4, 4, 2, 2, 4, true, true, false, true, { ...VP, f16k: 2 }),
    cand(4, 4, 1, 2, 4, true, false, false, false, { ...VP, f16k: 2 }),
    cand(4, 4, 2, 2, 4, true, true, true, true, { ...VP, f16k: 4 }),
    // The small blocks' twins: 4 x 4 a thread, vec4 U loads, padded A rows, one slice buffer;
    // and a deep slice (16 channels: several cases end in a partial slice).
    cand(4, 4, 1, 1, 4, true, true, false, false, VP),
    cand(4, 4, 1, 1, 16, true, true, false, false, VP),
    // The 16-column blocks' twin with more rows than columns (32 x 16 from 32 threads).
    cand(4, 8, 1, 1, 8, true, true, false, false, VP),
    // The plane-staged output transform's twin (of the 16 x 32 one above).
    planeOutCandidate(twin),
    // The column-staged transforms' twins (64-thread workgroups: a software adapter compiles
    // their workgroup memory quickly): the output's, the input's, both.
    ...STAGED_KINDS.map((k) => stagedCandidate(twin, k, 64)),
    // Split-K twins: vec4 U loads in 2 partials; scalar loads with double-buffered slices in 3
    // (Ci = 5 leaves the last partial empty, Ci = 19 ends one in a partial slice).
    splitCandidate(cand(4, 4, 1, 1, 4, true, true, false, false, VP), 2),
    splitCandidate(cand(4, 4, 2, 2, 4, true, true, false, true), 3),
  ];
}

function fcand(
  rx: number,
  ry: number,
  gm: number,
  gn: number,
  bk: number,
  input: boolean,
  split = false,
  prefetch = false,
): FusedCandidate {
  const fused = {
    rx,
    ry,
    gm,
    gn,
    bk,
    input,
    ...(split ? { split } : {}),
    ...(prefetch ? { prefetch } : {}),
  };
  return { name: winoFusedName(fused), fused, half: false };
}

/**
 * The fused hardware candidates (F(4x4): 36 groups of 4 or 2 threads, 8 x 8 or 4 x 8 per
 * thread): 16 x 16, 8 x 16 and 32 x 8 blocks, slices of 2 or 4 channels (the 4-deep 16 x 16 ones need 18
 * KiB of workgroup memory or more: past WebGPU's 16 KiB default, recorded as a failure where it is
 * over), with the input transform in the tile load (whole patches per thread, or split in two
 * balanced stages: `s`) or read from the V buffer; `p`: the next slice's loads prefetched into
 * registers.
 */
export function fusedCandidates(): FusedCandidate[] {
  return [
    fcand(2, 2, 2, 2, 2, true),
    fcand(2, 2, 2, 2, 4, true),
    fcand(2, 1, 2, 2, 4, true),
    fcand(2, 2, 1, 2, 4, true),
    fcand(2, 2, 2, 2, 2, true, true),
    fcand(2, 2, 2, 2, 4, true, true),
    fcand(2, 1, 2, 2, 4, true, true),
    // 32 x 8 blocks: half the in-load transforms per output channel, twice the U re-reads.
    fcand(1, 4, 2, 2, 2, true, true),
    fcand(2, 2, 2, 2, 2, false),
    fcand(2, 2, 2, 2, 4, false),
    fcand(1, 4, 2, 2, 2, false),
    // The next slice's loads in registers during this slice's products (`p`).
    fcand(2, 2, 2, 2, 2, true, true, true),
    fcand(1, 4, 2, 2, 2, true, true, true),
    fcand(2, 2, 2, 2, 2, false, false, true),
  ];
}

/**
 * Small fused twins (16 or 36 threads for F(2x2) / F(4x4), up to 72) that a software adapter
 * compiles quickly: whole patches in the load, the V buffer, the two-stage load (groups of two
 * threads, 3-deep slices that do not divide the channels), and both prefetching paths (the last
 * one with two (channel, tile) pairs per thread in F(2x2)).
 */
export function fusedTestCandidates(): FusedCandidate[] {
  return [
    fcand(1, 1, 1, 1, 2, true),
    fcand(1, 1, 1, 1, 4, false),
    fcand(2, 1, 1, 1, 3, true, true),
    fcand(2, 1, 1, 1, 3, true, true, true),
    fcand(1, 1, 1, 2, 3, false, false, true),
  ];
}

/**
 * The compiled kernels of one candidate: input transform, GEMM (the fused kernel for a fused
 * candidate), output transform.
 */
export interface WinoKernels {
  candidate: WinoCandidate;
  /** Storage of the activations (x, res, y) these kernels read and write. */
  act: TransformedStorage;
  /** Storage of V and M in these kernels. */
  transformed: TransformedStorage;
  /** The transforms scale by gscale (binding 10; f16 training's input-gradient convs). */
  scaled: boolean;
  /** Absent where a fused kernel builds V itself. */
  input?: GPUComputePipeline;
  gemm: GPUComputePipeline;
  /** Absent for fused kernels (the output transform is their epilogue). */
  output?: GPUComputePipeline;
  /** The plane-staged output transform of a planeOut candidate. */
  outputPlanes?: GPUComputePipeline;
  /** The column-staged output transform of a stagedOut candidate. */
  outputStaged?: GPUComputePipeline;
  /** The column-staged input transform of a stagedIn candidate (then in place of `input`). */
  inputStaged?: GPUComputePipeline;
}

const compiled: PerDevice<WinoKernels> = new WeakMap();

/**
 * Compiles (once per device) the kernels of candidate `c` for F(m x m) with activations stored as
 * `act` (f32, or the f16 plan's storage; a `half` candidate stores V and M the same way; an
 * `f16k` candidate multiplies in f16, emulated by f32 in f16-emulated plans). f16 training:
 * `halfAs` the storage of a `half` candidate's V and M under f32 activations (default f16), and
 * `scaled` transforms for its input-gradient convs (winogradSource).
 */
export function loadWinoKernels(
  ctx: GpuContext,
  m: WinogradTile,
  act: TransformedStorage,
  c: WinoCandidate,
  o: { halfAs?: Exclude<TransformedStorage, "f32">; scaled?: boolean } = {},
): Promise<WinoKernels> {
  const transformed: TransformedStorage = c.half
    ? (act === "f32" ? o.halfAs ?? "f16" : act)
    : "f32";
  const scaled = o.scaled ?? false;
  // f16 products: real f16 unless the plan emulates f16 (software adapters' tests).
  const arith = act === "f16-emulated" || transformed === "f16-emulated" ? "f16-emulated" : "f16";
  const planes = !c.fused && !!c.planeOut;
  const staged = c.fused ? 0 : c.stagedOut ?? 0;
  const stagedIn = c.fused ? 0 : c.stagedIn ?? 0;
  const key = `${m}:${act}:${transformed}:${scaled}:${planes}:${staged}:${stagedIn}:${
    JSON.stringify(c.gemm ?? c.fused)
  }`;
  return oncePerDevice(compiled, ctx, key, async () => {
    const splits = c.gemm?.splits ?? 1;
    const tsrc = winogradSource(m, act, transformed, scaled, false, splits);
    const label = `nn.wino.${c.name}${scaled ? ".scaled" : ""}`;
    const compile = (src: string, entry: string, what: string) =>
      computePipeline(ctx, src, entry, {}, `${label}.${what}`);
    // A transform the candidate may have: compiled where `on`, its text made only then.
    const optional = (on: unknown, src: () => string, entry: string, what: string) =>
      on ? compile(src(), entry, what) : undefined;
    return {
      candidate: c,
      act,
      transformed,
      scaled,
      input: c.fused?.input ? undefined : await compile(tsrc, "wino_input", "input"),
      gemm: c.fused
        ? await compile(winogradFusedSource(c.fused, m, act), "fused", "gemm")
        : await compile(winogradGemmSource(c.gemm, transformed, arith), "gemm", "gemm"),
      output: c.fused ? undefined : await compile(tsrc, "wino_output", "output"),
      outputPlanes: await optional(
        planes,
        () => winogradSource(m, act, transformed, scaled, true, splits),
        "wino_output_planes",
        "output-planes",
      ),
      inputStaged: await optional(
        stagedIn,
        () => winogradInputStagedSource(m, act, transformed, scaled, stagedIn),
        "wino_input_staged",
        "input-staged",
      ),
      outputStaged: await optional(
        staged,
        () => winogradOutputStagedSource(m, act, transformed, scaled, splits, staged),
        "wino_output_staged",
        "output-staged",
      ),
    };
  });
}

const wgradCompiled: PerDevice<GPUComputePipeline> = new WeakMap();

/**
 * A tuned weight-gradient GEMM (all `vp`: vec4 loads along the tiles, padded rows): the slice
 * loop written out (`unroll`), two slice buffers (`double`: one barrier a slice), and a slice
 * depth other than the conv tile's (`bk`).
 */
export interface WgradVariant {
  name: string;
  unroll: boolean;
  double: boolean;
  bk?: number;
}

/**
 * The weight-gradient GEMM variants the tuner times beside the built-in one: `vp` (session 16),
 * and since session 27 the forward GEMM's levers, which its winners all use: unrolled slices,
 * double-buffered slices, and 16-deep slices.
 */
export const WGRAD_VARIANTS: readonly WgradVariant[] = [
  { name: "vp", unroll: false, double: false },
  { name: "vpu", unroll: true, double: false },
  { name: "vpud", unroll: true, double: true },
  { name: "vpu16", unroll: true, double: false, bk: 16 },
];

/** A compiled weight-gradient variant: its pipeline, its tile (with its slice depth), its name. */
export interface WgradChoice {
  name: string;
  tile: WgradTile;
  pipeline: GPUComputePipeline;
}

/** The variant named `name` (LEGACY excluded), or undefined. */
export function wgradVariant(name: string): WgradVariant | undefined {
  return WGRAD_VARIANTS.find((v) => v.name === name);
}

/**
 * A weight-gradient variant on a conv tile: its tile (the variant's slice depth where it has one)
 * and its WGSL for dM and V stored as `storage`.
 */
export function wgradVariantSource(
  tile: WgradTile,
  variant: WgradVariant,
  storage: TransformedStorage = "f32",
): { tile: WgradTile; src: string } {
  const t = { wx: tile.wx, wy: tile.wy, gm: tile.gm, gn: tile.gn, bk: variant.bk ?? tile.bk };
  const opts = { unroll: variant.unroll, double: variant.double };
  return { tile: t, src: winogradWgradSource(t, true, storage, opts) };
}

/** Compiles (once per device, tile and variant) a weight-gradient GEMM variant. */
export async function loadWgradVariant(
  ctx: GpuContext,
  tile: WgradTile,
  variant: WgradVariant,
): Promise<WgradChoice> {
  const { tile: t, src } = wgradVariantSource(tile, variant);
  const pipeline = await oncePerDevice(
    wgradCompiled,
    ctx,
    `${variant.name}:${JSON.stringify(t)}`,
    () => computePipeline(ctx, src, "wgrad", {}, `nn.wgrad.${variant.name}`),
  );
  return { name: variant.name, tile: t, pipeline };
}

/** f16 training's weight-gradient kernels for one tile and F(m) (see GpuRecorder.wgradHalf). */
export interface WgradHalfKernels {
  storage: Exclude<TransformedStorage, "f32">;
  /** The GEMM's variant (WGRAD_VARIANTS). */
  variant: string;
  tile: WgradTile;
  /** x -> V, stored f16. */
  input: GPUComputePipeline;
  /** dY -> dM = S A dY A^T, stored f16. */
  dout: GPUComputePipeline;
  /** The `vp` GEMM reading f16 dM and V into f32 partials. */
  gemm: GPUComputePipeline;
  /** dW = G^T dU G / S from the f32 partials. */
  filterGrad: GPUComputePipeline;
}

const wgradHalfCompiled: PerDevice<WgradHalfKernels> = new WeakMap();

/** Compiles (once per device, tile, F(m) and storage) f16 training's weight-gradient kernels. */
export function loadWgradHalf(
  ctx: GpuContext,
  m: WinogradTile,
  tile: WgradTile,
  storage: Exclude<TransformedStorage, "f32">,
  variant: WgradVariant = WGRAD_VARIANTS[0],
): Promise<WgradHalfKernels> {
  const { tile: t, src } = wgradVariantSource(tile, variant, storage);
  const key = `${m}:${storage}:${variant.name}:${JSON.stringify(t)}`;
  return oncePerDevice(wgradHalfCompiled, ctx, key, async () => {
    const plain = winogradSource(m, "f32", storage),
      scaled = winogradSource(m, "f32", storage, true);
    return {
      storage,
      variant: variant.name,
      tile: t,
      input: await computePipeline(ctx, plain, "wino_input", {}, "nn.wgradH.input"),
      dout: await computePipeline(ctx, scaled, "wino_dout", {}, "nn.wgradH.dout"),
      gemm: await computePipeline(ctx, src, "wgrad", {}, `nn.wgradH.${variant.name}`),
      filterGrad: await computePipeline(
        ctx,
        winogradSource(m, "f32", "f32", true),
        "wino_filter_grad",
        {},
        "nn.wgradH.filterGrad",
      ),
    };
  });
}

/** The tiling fields of a weight-gradient GEMM (a ConvTile has them too). */
export type WgradTile = Pick<WinoGemm, "wx" | "wy" | "gm" | "gn" | "bk">;

/**
 * WGSL of training's transformed-domain weight-gradient GEMM `wgrad` ("NT": both operands run
 * along K): dU[xi] (Co x Ci) = dM[xi] (Co x P) V[xi]^T (P x Ci), K = the P real tile columns split
 * into chunks of p.kchunk along workgroup z = split alpha + xi. Binding 0 dM [alpha, Co, ppad],
 * 1 V [alpha, Ci, ppad], 2 partials [splits, alpha, Co, Ci], 3 Params. `vp` (session 16): both
 * operands read as vec4s along K (ppad is a multiple of 128, so rows are vec4-aligned; the chunks
 * start at multiples of the slice depth, a multiple of 4) and stored transposed into workgroup
 * rows padded by one vec4 (bank-conflict-free stores, as the forward GEMM's `v` `p` variants).
 */
export function winogradWgradSource(
  t: WgradTile,
  vp = false,
  storage: TransformedStorage = "f32",
  opts: { unroll?: boolean; double?: boolean } = {},
): string {
  const half = storage !== "f32";
  if (half && !vp) throw new Error("Winograd wgrad: f16 dM and V need the vp GEMM");
  if ((opts.unroll || opts.double) && !vp) {
    throw new Error("Winograd wgrad: unrolled and double-buffered slices are vp variants");
  }
  const dbl = opts.double === true;
  const v: WinoGemm = { ...t, rowFast: true, unroll: false };
  const { bm, bn } = gemmBlock(v);
  const threads = v.wx * v.wy;
  if ((bm * v.bk) % threads || (bn * v.bk) % threads || (vp && v.bk % 4)) {
    throw new Error(`Winograd wgrad tile ${JSON.stringify(t)} does not fit its threads`);
  }
  const la = (bm * v.bk) / threads, lb = (bn * v.bk) / threads;
  // vp: vec4 loads (a guard where a slice's vec4s do not divide into the threads).
  const la4 = Math.ceil((bm * v.bk) / 4 / threads), lb4 = Math.ceil((bn * v.bk) / 4 / threads);
  const guard = (rows: number) => ((rows * v.bk) / 4) % threads !== 0;
  const load = (src: string, base: string, row0: string, rows: string, reg: string, n: number) =>
    range(n).map((r) =>
      `    { let e = t + ${r * threads}u; let m = ${row0} + e / BK; let k = k0 + e % BK;
      ${reg}${r} = select(0.0, ${src}[${base} + min(m, ${rows} - 1u) * p.ppad + min(k, p.kp - 1u)], m < ${rows} && k < kend); }`
    );
  const load4 = (
    src: string,
    base: string,
    row0: string,
    rows: string,
    reg: string,
    n: number,
    total: number,
  ) =>
    range(n).map((r) =>
      `    { let e = t + ${r * threads}u;${guard(total) ? ` if (e < ${(total * v.bk) / 4}u) {` : ""}
      let m = ${row0} + e / BK4; let k = k0 + 4u * (e % BK4); let mk = m < ${rows};
      ${reg}${r} = select(vec4<f32>(0.0), ${
        half ? "vec4<f32>(" : ""
      }${src}[(${base} + min(m, ${rows} - 1u) * p.ppad + min(k, p.ppad - 4u)) / 4u]${
        half ? ")" : ""
      }, vec4<bool>(mk && k < kend, mk && k + 1u < kend, mk && k + 2u < kend, mk && k + 3u < kend));${
        guard(total) ? " }" : ""
      } }`
    );
  const store = (arr: string, w4: string, reg: string, n: number) =>
    range(n).map((r) =>
      `    { let e = t + ${
        r * threads
      }u; let ml = e / BK; ${arr}[(e % BK) * ${w4} + ml / 4u][ml % 4u] = ${reg}${r}; }`
    );
  // Double buffering: slice buffer `buf` (0 or 1) starts SA / SB vec4s into As / Bs.
  const off = (arr: string, buf: string) => (dbl ? `${buf} * S${arr[0]} + ` : "");
  const store4 = (arr: string, w4: string, reg: string, n: number, total: number, buf = "cur") =>
    range(n).map((r) =>
      `    { let e = t + ${r * threads}u;${
        guard(total) ? ` if (e < ${(total * v.bk) / 4}u) {` : ""
      } let ml = e / BK4; let kq = 4u * (e % BK4);
${
        range(4).map((j) =>
          `      ${arr}[${
            off(arr, buf)
          }(kq + ${j}u) * ${w4} + ml / 4u][ml % 4u] = ${reg}${r}[${j}];`
        )
          .join("\n")
      }${guard(total) ? " }" : ""} }`
    );
  const step = (kk: string) => {
    const out: string[] = [];
    for (const g of range(v.gm)) {
      out.push(`let a${g} = As[${off("As", "cur")}${kk} * AS4 + ${g * v.wy}u + lid.y];`);
    }
    for (const h of range(v.gn)) {
      out.push(`let b${h} = Bs[${off("Bs", "cur")}${kk} * BS4 + ${h * v.wx}u + lid.x];`);
    }
    for (const g of range(v.gm)) {
      for (const i of range(4)) {
        for (const h of range(v.gn)) {
          out.push(`acc_${g}_${i}_${h} = fma(vec4<f32>(a${g}[${i}]), b${h}, acc_${g}_${i}_${h});`);
        }
      }
    }
    return out;
  };
  const acc = range(v.gm).flatMap((g) =>
    range(4).flatMap((i) => range(v.gn).map((h) => `  var acc_${g}_${i}_${h} = vec4<f32>(0.0);`))
  );
  const regs = vp
    ? [
      ...range(la4).map((r) => `  var ra${r} = vec4<f32>(0.0);`),
      ...range(lb4).map((r) => `  var rb${r} = vec4<f32>(0.0);`),
    ]
    : [
      ...range(la).map((r) => `  var ra${r} = 0.0;`),
      ...range(lb).map((r) => `  var rb${r} = 0.0;`),
    ];
  const loads = (vp
    ? [
      ...load4("dm", "abase", "m0", "p.co", "ra", la4, bm),
      ...load4("vin", "bbase", "n0", "p.ci", "rb", lb4, bn),
    ]
    : [
      ...load("dm", "abase", "m0", "p.co", "ra", la),
      ...load("vin", "bbase", "n0", "p.ci", "rb", lb),
    ]).join("\n");
  const storesTo = (buf: string) =>
    (vp
      ? [...store4("As", "AS4", "ra", la4, bm, buf), ...store4("Bs", "BS4", "rb", lb4, bn, buf)]
      : [...store("As", "AS4", "ra", la), ...store("Bs", "BS4", "rb", lb)]).join("\n");
  const stores = storesTo("cur");
  const ind = (ls: string[], pad: string) => ls.map((l) => pad + l).join("\n");
  const body = opts.unroll
    ? range(v.bk).map((kk) => `    {\n${ind(step(`${kk}u`), "      ")}\n    }`).join("\n")
    : `    for (var kk = 0u; kk < BK; kk++) {\n${ind(step("kk"), "      ")}\n    }`;
  const loop = dbl
    ? `${stores}
  workgroupBarrier();
  for (; k0 < kend;) {
    k0 += BK;
    if (k0 < kend) {
${loads}
    }
${body}
    if (k0 < kend) {
${storesTo("(1u - cur)")}
    }
    workgroupBarrier();
    cur = 1u - cur;
  }`
    : `  for (; k0 < kend;) {
${stores}
    workgroupBarrier();
    k0 += BK;
    if (k0 < kend) {
${loads}
    }
${body}
    workgroupBarrier();
  }`;
  const as4 = bm / 4 + (vp ? 1 : 0), bs4 = bn / 4 + (vp ? 1 : 0);
  const elem = vp ? `vec4<${half ? "s16" : "f32"}>` : "f32";
  const epilogue = range(v.gm).flatMap((g) =>
    range(4).map((i) =>
      `  {
    let m = m0 + ${g * 4 * v.wy}u + lid.y * 4u + ${i}u;
    if (m < p.co) {
${
        range(v.gn).flatMap((h) =>
          range(4).map((j) =>
            `      { let n = n0 + ${
              h * 4 * v.wx
            }u + lid.x * 4u + ${j}u; if (n < p.ci) { out[obase + m * p.ci + n] = acc_${g}_${i}_${h}[${j}]; } }`
          )
        ).join("\n")
      }
    }
  }`
    )
  );
  return `${
    half ? f16Prelude(storage) : ""
  }// Generated by src/nn/gpu/winograd_gemm.ts: Winograd weight-gradient GEMM ${bm}x${bn}k${v.bk}${
    vp ? " vp" : ""
  }${opts.unroll ? ", unrolled" : ""}${dbl ? ", double-buffered" : ""}${
    half ? `, dM and V ${storage}` : ""
  }.
struct Params { co: u32, ci: u32, ppad: u32, kchunk: u32, kp: u32, alpha: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> dm: array<${elem}>;
@group(0) @binding(1) var<storage, read> vin: array<${elem}>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

const BK = ${v.bk}u;
const BK4 = ${Math.max(1, v.bk / 4)}u;
const AS4 = ${as4}u;
const BS4 = ${bs4}u;
const SA = ${v.bk * as4}u;
const SB = ${v.bk * bs4}u;
var<workgroup> As: array<vec4<f32>, ${(dbl ? 2 : 1) * v.bk * as4}>;
var<workgroup> Bs: array<vec4<f32>, ${(dbl ? 2 : 1) * v.bk * bs4}>;

@compute @workgroup_size(${v.wx}, ${v.wy})
fn wgrad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * ${v.wx}u + lid.x;
  let xi = wid.z % p.alpha;
  let split = wid.z / p.alpha;
  let m0 = wid.x * ${bm}u;
  let n0 = wid.y * ${bn}u;
  let abase = xi * p.co * p.ppad;
  let bbase = xi * p.ci * p.ppad;
  let obase = wid.z * p.co * p.ci;
  let kbeg = split * p.kchunk;
  let kend = min(p.kp, kbeg + p.kchunk);
${acc.join("\n")}
${regs.join("\n")}
  var k0 = kbeg;
${dbl ? "  var cur = 0u;\n" : ""}${loads}
${loop}
${epilogue.join("\n")}
}
`;
}
