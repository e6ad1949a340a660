// The Winograd bridge: one kernel that ends one 3x3 conv and begins the next in a chain of
// Winograd convs (inference). Per plane (image, channel) a workgroup runs the output transform of
// every tile with its epilogue (bias, residual, ReLU), keeps the plane in workgroup memory with a
// zero border, and runs the next conv's input transform of every tile from there. The activation
// between the two convs then never round-trips through memory (and is not written at all where
// nothing else reads it: a residual block's inner activation), and the chain takes one dispatch a
// conv fewer. Same arithmetic as wino_output followed by wino_input (src/nn/winograd.ts), so the
// same bits in f32 (llvmpipe and an H200); with real f16 activations on an H200 the two differ
// within rounding (a few activations round to the neighbouring f16; winograd_bridge_test).
import type { GpuContext } from "../../gpu/device.ts";
import { KibitzError } from "../../errors.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { oncePerDevice, type PerDevice } from "../../gpu/per_device.ts";
import { f16Prelude } from "./conv_gemm.ts";
import {
  applyRows,
  inputTransformLines,
  outputTransformLines,
  winogradGeometry,
  winogradMatrices,
  type WinogradTile,
} from "../winograd.ts";
import type { TransformedStorage } from "./winograd_gemm.ts";

/** What one bridge kernel is compiled for. */
export interface BridgeSpec {
  m: WinogradTile;
  /** Storage of the activations (y, res): f32 or the f16 plan's. */
  act: TransformedStorage;
  /** Storage of the producer's M and of the consumer's V. */
  mIn: TransformedStorage;
  vOut: TransformedStorage;
  /** The plane's height and width (the tile grid and workgroup memory follow from them). */
  h: number;
  w: number;
  /** Writes y too (it has other readers: a residual, the heads). */
  keepY: boolean;
  /** The producer's GEMM split K into this many partials (M [alpha, splits, C, ppadIn]): added. */
  splits?: number;
  /** Column-staged transforms (winogradBridgeStagedSource) in place of one thread a tile. */
  staged?: boolean;
}

/**
 * Which bridge kernel joins a tower's chained Winograd convs (GpuNet's `bridgeStyle`,
 * KIBITZ_NN_WINO_BRIDGE_STYLE): "tuned" takes the tuner's choice per layer shape (unbridged,
 * one thread a tile, or column-staged; one thread a tile where nothing is tuned), "plain" and
 * "staged" bridge every chain with that kernel (A/B and tests).
 */
export type BridgeStyle = "tuned" | "plain" | "staged";

/** Parses a BridgeStyle (the KIBITZ_NN_WINO_BRIDGE_STYLE values). */
export function parseBridgeStyle(v: string): BridgeStyle {
  if (v === "tuned" || v === "plain" || v === "staged") return v;
  throw new KibitzError(
    "bad_args",
    `KIBITZ_NN_WINO_BRIDGE_STYLE must be tuned, plain or staged, got "${v}"`,
  );
}

/** Workgroup memory limit the bridge keeps to (WebGPU's guaranteed minimum). */
const WORKGROUP_BYTES = 16384;

/** The plane the bridge keeps in workgroup memory: the tile grid's extent plus a zero border. */
export function bridgePlane(m: WinogradTile, h: number, w: number): { ph: number; pw: number } {
  const { th, tw } = winogradGeometry(m, 1, h, w);
  return { ph: th * m + 2, pw: tw * m + 2 };
}

/** Whether a bridge exists for this plane (its workgroup memory fits the guaranteed limit). */
export function bridgeFits(m: WinogradTile, h: number, w: number): boolean {
  const { ph, pw } = bridgePlane(m, h, w);
  return ph * pw * 4 <= WORKGROUP_BYTES;
}

/** Threads of a bridge's workgroup: one a tile (32 where the plane has at most 32 tiles, else 64). */
export function bridgeThreads(m: WinogradTile, h: number, w: number): number {
  return winogradGeometry(m, 1, h, w).tiles <= 32 ? 32 : 64;
}

/** A short name of a spec (labels and cache keys). */
export function bridgeName(s: BridgeSpec): string {
  const split = (s.splits ?? 1) > 1 ? `.s${s.splits}` : "";
  const staged = s.staged ? ".c" : "";
  return `F${s.m}.${s.h}x${s.w}.${s.act}.${s.mIn}-${s.vOut}${split}${s.keepY ? ".y" : ""}${staged}`;
}

/**
 * Floats of workgroup memory a column-staged bridge keeps: the plane with its border, and T for
 * every tile of it ((m + 2)^2 a tile in the input transform, more than the output's m (m + 2)).
 */
function stagedFloats(m: WinogradTile, h: number, w: number): number {
  const { ph, pw } = bridgePlane(m, h, w);
  return ph * pw + (m + 2) * (m + 2) * winogradGeometry(m, 1, h, w).tiles;
}

/** Whether a column-staged bridge exists for this plane (it fits the guaranteed limit). */
export function bridgeStagedFits(m: WinogradTile, h: number, w: number): boolean {
  return stagedFloats(m, h, w) * 4 <= WORKGROUP_BYTES;
}

/**
 * Threads of a column-staged bridge's workgroup: the multiple of 32 up to 256 that leaves the
 * fewest idle in the stages of (m + 2) x tiles jobs (the larger on a tie).
 */
export function bridgeStagedThreads(m: WinogradTile, h: number, w: number): number {
  const jobs = (m + 2) * winogradGeometry(m, 1, h, w).tiles;
  let best = 32, use = -1;
  for (let t = 32; t <= 256; t += 32) {
    const u = jobs / (Math.ceil(jobs / t) * t);
    if (u >= use) [best, use] = [t, u];
  }
  return best;
}

/**
 * What both bridge generators start from: the f16 prelude (one f16 kind at most), and the WGSL
 * head with the structs and bindings (y only where kept).
 */
function bridgeHead(s: BridgeSpec): { prelude: string; bindings: string } {
  const halves = [s.act, s.mIn, s.vOut].filter((t) => t !== "f32");
  if (halves.some((t) => t !== halves[0])) {
    throw new Error(`Winograd bridge: mixed f16 storages ${bridgeName(s)}`);
  }
  const ty = (t: TransformedStorage) => (t === "f32" ? "f32" : "s16");
  const y = s.keepY
    ? `@group(0) @binding(3) var<storage, read_write> y: array<${ty(s.act)}>;\n`
    : "";
  return {
    prelude: halves.length ? f16Prelude(halves[0] as "f16" | "f16-emulated") : "",
    bindings:
      `struct Params { n: u32, c: u32, h: u32, w: u32, tw: u32, tiles: u32, ppadIn: u32, ppadOut: u32 }
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> mm: array<${ty(s.mIn)}>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read> res: array<${ty(s.act)}>;
${y}@group(0) @binding(4) var<storage, read_write> v_out: array<${ty(s.vOut)}>;
@group(0) @binding(5) var<uniform> p: Params;
@group(0) @binding(6) var<uniform> fz: Fuse;

// The plane with a one-value zero border: element (iy, ix) of the image at (iy + 1) * PW + ix + 1.
const PW = ${bridgePlane(s.m, s.h, s.w).pw}u;`,
  };
}

/** The entry point's head: workgroup `pl` takes plane pl (image img, channel c). */
function bridgeEntry(wg: number): string {
  return `@compute @workgroup_size(${wg})
fn wino_bridge(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) li: u32,
) {
  let pl = wid.x + wid.y * nwg.x;
  if (pl >= p.n * p.c) { return; }
  let c = pl % p.c;
  let img = pl / p.c;`;
}

/**
 * WGSL of the bridge: binding 0 M [alpha, C, ppadIn] ([alpha, splits, C, ppadIn] with splits),
 * 1 bias [C], 2 res [N, C, H, W], 3 y [N, C, H, W] (only with keepY), 4 V [alpha, C, ppadOut],
 * 5 Params, 6 Fuse. One workgroup (bridgeThreads) per plane; dispatch planes as (x, y) with
 * plane = x + y * groups.x.
 */
export function winogradBridgeSource(s: BridgeSpec): string {
  if (s.staged) return winogradBridgeStagedSource(s);
  const { prelude, bindings } = bridgeHead(s);
  if (!bridgeFits(s.m, s.h, s.w)) {
    throw new Error(`Winograd bridge: a ${s.h} x ${s.w} plane does not fit workgroup memory`);
  }
  const half = s.act !== "f32";
  const m = s.m;
  const { ph, pw } = bridgePlane(m, s.h, s.w);
  const wg = bridgeThreads(m, s.h, s.w);
  const rd = (e: string) => (s.mIn === "f32" ? e : `f32(${e})`);
  const splits = s.splits ?? 1;
  const output = outputTransformLines(
    m,
    (xi) =>
      splits === 1
        ? rd(`mm[${xi}u * sin + oi]`)
        : `(${
          Array.from({ length: splits }, (_, j) => rd(`mm[${xi * splits + j}u * sin + oi]`))
            .join(" + ")
        })`,
    (r, c, v) => `st(yb, o0.x + ${r}u, o0.y + ${c}u, ${v}, bv);`,
  );
  const input = inputTransformLines(
    m,
    (r, c) => `plane[(o0.x + ${r}u) * PW + o0.y + ${c}u]`,
    (xi, v) => `v_out[${xi}u * sout + oo] = ${s.vOut === "f32" ? v : `s16(${v})`};`,
  );
  const ind = (ls: string[]) => ls.map((l) => `    ${l}`).join("\n");
  return `${prelude}// Generated by src/nn/gpu/winograd_bridge.ts: the F(${m}x${m}, 3x3) bridge, ${
    bridgeName(s)
  }.
${bindings}
var<workgroup> plane: array<f32, ${ph * pw}>;

// The epilogue of wino_output; the value goes to the plane (as y would read back) and to y.
fn st(yb: u32, oy: u32, ox: u32, v: f32, bv: f32) {
  if (oy >= p.h || ox >= p.w) { return; }
  let at = yb + oy * p.w + ox;
  var r = v + bv;
  if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
  if (fz.relu != 0u) { r = max(r, 0.0); }
${
    half
      ? `  let q = s16(r);\n${
        s.keepY ? "  y[at] = q;\n" : ""
      }  plane[(oy + 1u) * PW + ox + 1u] = f32(q);`
      : `${s.keepY ? "  y[at] = r;\n" : ""}  plane[(oy + 1u) * PW + ox + 1u] = r;`
  }
}

// Row and column of tile t's first output.
fn origin(t: u32) -> vec2<u32> {
  let ty = t / p.tw;
  return vec2<u32>(ty * ${m}u, (t - ty * p.tw) * ${m}u);
}

${bridgeEntry(wg)}
  for (var e = li; e < ${ph * pw}u; e += ${wg}u) { plane[e] = 0.0; }
  workgroupBarrier();
  let yb = pl * p.h * p.w;
  let bv = bias[c];
  let sin = p.c * p.ppadIn;
  for (var t = li; t < p.tiles; t += ${wg}u) {
    let o0 = origin(t);
    let oi = c * p.ppadIn + img * p.tiles + t;
${ind(output)}
  }
  workgroupBarrier();
  let sout = p.c * p.ppadOut;
  for (var t = li; t < p.tiles; t += ${wg}u) {
    // The input tile of t starts one row and column before its outputs: plane row o0.x is image
    // row o0.x - 1.
    let o0 = origin(t);
    let oo = c * p.ppadOut + img * p.tiles + t;
${ind(input)}
  }
}
`;
}

/**
 * The column-staged bridge (`staged`; bindings, uniforms and dispatch as winogradBridgeSource's):
 * the one-thread-a-tile bridge keeps only as many threads busy as the plane has tiles (16 of 32 at
 * F(7x7) on 26 x 26), each with (m + 2)^2 loads in flight; on the H200 (session 41) it took 0.55 ms
 * a conv (0.74 ms adding the residual and writing y) against 0.56 ms for the separate transforms.
 * Here each transform's two matrix products run as stages through workgroup memory, as the
 * column-staged transforms (winograd_staged.ts) do, with (m + 2) x tiles jobs a stage: T[:, j] =
 * A^T M[:, j] a thread per (column j, tile); Y[i, :] = T[i, :] A a thread per (row i, tile), into
 * the plane; the epilogue a thread per pixel (the residual read and y stored coalesced); then
 * T[:, j] = B^T d[:, j] and V[i, :] = T[i, :] B the same way. The products and sums are those of
 * the one-thread-a-tile bridge, in the same order.
 */
function winogradBridgeStagedSource(s: BridgeSpec): string {
  const { prelude, bindings } = bridgeHead(s);
  if (!bridgeStagedFits(s.m, s.h, s.w)) {
    throw new Error(
      `Winograd bridge: a ${s.h} x ${s.w} plane does not fit workgroup memory staged`,
    );
  }
  const half = s.act !== "f32";
  const m = s.m, a = m + 2;
  const { at, bt } = winogradMatrices(m);
  const { ph, pw } = bridgePlane(m, s.h, s.w);
  const { tiles } = winogradGeometry(m, 1, s.h, s.w);
  const wg = bridgeStagedThreads(m, s.h, s.w);
  const splits = s.splits ?? 1;
  const rd = (e: string) => (s.mIn === "f32" ? e : `f32(${e})`);
  // M[k a + j]: its partials at (k a + j) splits + p, column j's part in o.
  const loadM = (k: number) =>
    splits === 1
      ? rd(`mm[${k * a}u * sin + o]`)
      : `(${
        Array.from({ length: splits }, (_, p) => rd(`mm[${k * a * splits + p}u * sin + o]`))
          .join(" + ")
      })`;
  const outCol = [
    ...Array.from({ length: a }, (_, k) => `let q_${k} = ${loadM(k)};`),
    ...applyRows(at, (k) => `q_${k}`, 1, (i) => `t_${i}`),
    ...Array.from({ length: m }, (_, i) => `tset(${i * a * tiles}u + tb, t_${i});`),
  ];
  const outRow = [
    ...Array.from({ length: a }, (_, k) => `let w_${k} = tget(${k * tiles}u + tb);`),
    ...applyRows(at, (k) => `w_${k}`, 1, (c) => `r_${c}`),
    ...Array.from({ length: m }, (_, c) => `st(oy, x0 + ${c}u, r_${c});`),
  ];
  const inCol = [
    ...Array.from({ length: a }, (_, k) => `let d_${k} = pget(pb + ${k * pw}u);`),
    ...applyRows(bt, (k) => `d_${k}`, 1, (i) => `t_${i}`),
    ...Array.from({ length: a }, (_, i) => `tset(${i * a * tiles}u + tb, t_${i});`),
  ];
  const inRow = [
    ...Array.from({ length: a }, (_, k) => `let w_${k} = tget(${k * tiles}u + tb);`),
    ...applyRows(bt, (k) => `w_${k}`, 1, (j) => `v_${j}`),
    ...Array.from(
      { length: a },
      (_, j) => `v_out[${j}u * sout + o] = ${s.vOut === "f32" ? `v_${j}` : `s16(v_${j})`};`,
    ),
  ];
  const ind = (ls: string[]) => ls.map((l) => `    ${l}`).join("\n");
  // A stage's loop head: job e of rows x tiles is (row `v`, tile t), consecutive jobs consecutive
  // tiles.
  const stage = (rows: number, v: string) =>
    `for (var e = li; e < ${rows * tiles}u; e += ${wg}u) {
    let ${v} = e / TILES;
    let t = e - ${v} * TILES;`;
  return `${prelude}// Generated by src/nn/gpu/winograd_bridge.ts: the column-staged F(${m}x${m}, 3x3) bridge,
// ${bridgeName(s)}.
${bindings}
// The plane's shape as constants (the spec's): divisions by them compile to multiplies.
const TILES = ${tiles}u;
const TW = ${winogradGeometry(m, 1, s.h, s.w).tw}u;
const IH = ${s.h}u;
const IW = ${s.w}u;
// Both arrays hold vec4s, a quarter as many zero stores in the initialization WebGPU adds (llvmpipe
// compiles that unrolled: 30 s for this kernel at F(4x4) on 26 x 26 with f32 arrays).
var<workgroup> plane: array<vec4<f32>, ${Math.ceil(ph * pw / 4)}>;
// T of every tile: row i, column j of tile t at (i (m + 2) + j) TILES + t.
var<workgroup> tt: array<vec4<f32>, ${Math.ceil(a * a * tiles / 4)}>;

fn pget(i: u32) -> f32 { return plane[i >> 2u][i & 3u]; }
fn pset(i: u32, v: f32) { plane[i >> 2u][i & 3u] = v; }
fn tget(i: u32) -> f32 { return tt[i >> 2u][i & 3u]; }
fn tset(i: u32, v: f32) { tt[i >> 2u][i & 3u] = v; }

// Y before its epilogue into the plane (outputs past the image's edge stay 0).
fn st(oy: u32, ox: u32, v: f32) {
  if (oy >= IH || ox >= IW) { return; }
  pset((oy + 1u) * PW + ox + 1u, v);
}

// The epilogue of pixel (oy, ox) in the plane, y[at] where kept; the plane keeps what y reads back.
fn epi(at: u32, oy: u32, ox: u32, bv: f32) {
  let pi = (oy + 1u) * PW + ox + 1u;
  var r = pget(pi) + bv;
  if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
  if (fz.relu != 0u) { r = max(r, 0.0); }
${
    half
      ? `  let q = s16(r);\n${s.keepY ? "  y[at] = q;\n" : ""}  pset(pi, f32(q));`
      : `${s.keepY ? "  y[at] = r;\n" : ""}  pset(pi, r);`
  }
}

${bridgeEntry(wg)}
  for (var e = li; e < ${Math.ceil(ph * pw / 4)}u; e += ${wg}u) { plane[e] = vec4<f32>(); }
  let sin = p.c * p.ppadIn;
  let cin = c * p.ppadIn + img * TILES;
  // T = A^T M, a thread per (column j, tile t).
  ${stage(a, "j")}
    let o = cin + t + j * ${splits}u * sin;
    let tb = j * TILES + t;
${ind(outCol)}
  }
  workgroupBarrier();
  // Y = T A, a thread per (row i, tile t), into the plane.
  ${stage(m, "i")}
    let ty = t / TW;
    let oy = ty * ${m}u + i;
    let x0 = (t - ty * TW) * ${m}u;
    let tb = i * ${a * tiles}u + t;
${ind(outRow)}
  }
  workgroupBarrier();
  // The epilogue (bias, residual, ReLU; y), a thread per pixel: consecutive threads read the
  // residual and store y at consecutive addresses (a row thread's m outputs are m apart from the
  // next thread's).
  let yb = pl * IH * IW;
  let bv = bias[c];
  for (var e = li; e < IH * IW; e += ${wg}u) {
    let oy = e / IW;
    epi(yb + e, oy, e - oy * IW, bv);
  }
  workgroupBarrier();
  // T = B^T d, a thread per (column j of the input tile, tile t): the input tile starts one row
  // and column before its outputs, so its (k, j) is plane row ty m + k, column tx m + j.
  ${stage(a, "j")}
    let ty = t / TW;
    let pb = ty * ${m}u * PW + (t - ty * TW) * ${m}u + j;
    let tb = j * TILES + t;
${ind(inCol)}
  }
  workgroupBarrier();
  // V = T B, a thread per (row i, tile t), consecutive threads storing consecutive columns.
  let sout = p.c * p.ppadOut;
  let cout = c * p.ppadOut + img * TILES;
  ${stage(a, "i")}
    let o = cout + t + i * ${a}u * sout;
    let tb = i * ${a * tiles}u + t;
${ind(inRow)}
  }
}
`;
}

const compiled: PerDevice<GPUComputePipeline> = new WeakMap();

/** Compiles (once per device and spec) a bridge kernel. */
export function loadWinogradBridge(ctx: GpuContext, s: BridgeSpec): Promise<GPUComputePipeline> {
  const name = bridgeName(s);
  return oncePerDevice(
    compiled,
    ctx,
    name,
    () =>
      computePipeline(ctx, winogradBridgeSource(s), "wino_bridge", {}, `nn.wino.bridge.${name}`),
  );
}

/** The bind group entries of a bridge (winogradBridgeSource's bindings; y only where kept). */
export function bridgeBindings(b: {
  mm: GPUBuffer;
  bias: GPUBuffer;
  res: GPUBuffer;
  y: GPUBuffer | null;
  v: GPUBuffer;
  params: GPUBuffer;
  fuse: GPUBuffer;
}): Record<number, GPUBuffer> {
  const out: Record<number, GPUBuffer> = {
    0: b.mm,
    1: b.bias,
    2: b.res,
    4: b.v,
    5: b.params,
    6: b.fuse,
  };
  if (b.y) out[3] = b.y;
  return out;
}

/** The bridge's dispatch: one workgroup per plane, as (x, y) under the per-dimension limit. */
export function bridgeGroups(ctx: GpuContext, planes: number): [number, number, number] {
  const max = ctx.device.limits.maxComputeWorkgroupsPerDimension;
  const gx = Math.min(planes, max);
  return [gx, Math.ceil(planes / gx), 1];
}
