// The Winograd bridge: one kernel that ends one 3x3 conv and begins the next in a chain of
// Winograd convs (inference). Per plane (image, channel) a workgroup runs the output transform of
// every tile with its epilogue (bias, residual, ReLU), keeps the plane in workgroup memory with a
// zero border, and runs the next conv's input transform of every tile from there. The activation
// between the two convs then never round-trips through memory (and is not written at all where
// nothing else reads it: a residual block's inner activation), and the chain takes one dispatch a
// conv fewer. Same arithmetic as wino_output followed by wino_input (src/nn/winograd.ts), so the
// same bits in f32 (llvmpipe and an H200 in session 29); with real f16 activations on an H200 the
// two differ within rounding (a few activations round to the neighbouring f16;
// winograd_bridge_test). Since session 30 a bridge that writes y runs the epilogue in a second
// pass over the plane, in image order (coalesced residual reads and y stores): same bits on
// llvmpipe, and on hardware a multiply-add fused into the bias in wino_output cannot be here.
import type { GpuContext } from "../../gpu/device.ts";
import { computePipeline } from "../../gpu/pipeline.ts";
import { oncePerDevice, type PerDevice } from "../../gpu/per_device.ts";
import { f16Prelude } from "./conv_gemm.ts";
import {
  inputTransformLines,
  outputTransformLines,
  winogradGeometry,
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

/**
 * Planes one bridge workgroup takes (session 30): 1 where a plane's tiles fill at least half its
 * threads, else as many as its threads hold (a thread a tile) within the workgroup-memory limit.
 * F(7x7)'s 16 tiles on 26 x 26 left half of a 32-thread workgroup idle: 2 planes fill it.
 */
export function bridgePlanesPerGroup(m: WinogradTile, h: number, w: number): number {
  const { tiles } = winogradGeometry(m, 1, h, w), { ph, pw } = bridgePlane(m, h, w);
  const wg = bridgeThreads(m, h, w);
  if (2 * tiles > wg) return 1;
  return Math.max(1, Math.min(Math.floor(wg / tiles), Math.floor(WORKGROUP_BYTES / (ph * pw * 4))));
}

/** A short name of a spec (labels and cache keys). */
export function bridgeName(s: BridgeSpec): string {
  const split = (s.splits ?? 1) > 1 ? `.s${s.splits}` : "";
  return `F${s.m}.${s.h}x${s.w}.${s.act}.${s.mIn}-${s.vOut}${split}${s.keepY ? ".y" : ""}`;
}

/**
 * WGSL of the bridge: binding 0 M [alpha, C, ppadIn] ([alpha, splits, C, ppadIn] with splits),
 * 1 bias [C], 2 res [N, C, H, W], 3 y [N, C, H, W] (only with keepY), 4 V [alpha, C, ppadOut],
 * 5 Params, 6 Fuse. One workgroup (bridgeThreads) per bridgePlanesPerGroup planes, dispatched as
 * (x, y): workgroup (x, y) takes the planes from (x + y * groups.x) times that count on.
 */
export function winogradBridgeSource(s: BridgeSpec): string {
  const halves = [s.act, s.mIn, s.vOut].filter((t) => t !== "f32");
  if (halves.some((t) => t !== halves[0])) {
    throw new Error(`Winograd bridge: mixed f16 storages ${bridgeName(s)}`);
  }
  if (!bridgeFits(s.m, s.h, s.w)) {
    throw new Error(`Winograd bridge: a ${s.h} x ${s.w} plane does not fit workgroup memory`);
  }
  const prelude = halves.length ? f16Prelude(halves[0] as "f16" | "f16-emulated") : "";
  const ty = (t: TransformedStorage) => (t === "f32" ? "f32" : "s16");
  const half = s.act !== "f32";
  const m = s.m;
  const { ph, pw } = bridgePlane(m, s.h, s.w);
  const wg = bridgeThreads(m, s.h, s.w);
  const rd = (e: string) => (s.mIn === "f32" ? e : `f32(${e})`);
  const splits = s.splits ?? 1;
  const loadM = (xi: number) =>
    splits === 1
      ? rd(`mm[${xi}u * sin + oi]`)
      : `(${
        Array.from({ length: splits }, (_, j) => rd(`mm[${xi * splits + j}u * sin + oi]`))
          .join(" + ")
      })`;
  const storeV = (xi: number, v: string) =>
    `v_out[${xi}u * sout + oo] = ${s.vOut === "f32" ? v : `s16(${v})`};`;
  const pg = bridgePlanesPerGroup(m, s.h, s.w);
  // keepY: the transform's outputs go to the plane raw, and the epilogue runs after the barrier in
  // image order (epiloguePass); else in place (st), where no global memory is touched.
  const output = outputTransformLines(
    m,
    loadM,
    (r, c, v) =>
      s.keepY
        ? `raw(pb, o0.x + ${r}u, o0.y + ${c}u, ${v});`
        : `st(pb, yb, o0.x + ${r}u, o0.y + ${c}u, ${v}, bv);`,
  );
  const input = inputTransformLines(
    m,
    (r, c) => `pld(pb + (o0.x + ${r}u) * PW + o0.y + ${c}u)`,
    storeV,
  );
  const ind = (ls: string[]) => ls.map((l) => `    ${l}`).join("\n");
  const vec4s = Math.ceil((pg * ph * pw) / 4);
  // The epilogue of a keepY bridge, once every tile's outputs are in the plane: consecutive threads
  // read res and store y at consecutive addresses (a thread a tile's outputs lie m apart: the
  // output transform's stores ran at a quarter of the H200's copy bandwidth in session 29).
  const epiloguePass = s.keepY
    ? `  let hw = p.h * p.w;
  for (var q = li; q < ${pg}u * hw; q += ${wg}u) {
    let lq = q / hw;
    let pq = first + lq;
    if (pq >= p.n * p.c) { break; }
    let e = q - lq * hw;
    let oy = e / p.w;
    let i = lq * ${ph * pw}u + (oy + 1u) * PW + e - oy * p.w + 1u;
    let at = pq * hw + e;
    var r = pld(i) + bias[pq % p.c];
    if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
    if (fz.relu != 0u) { r = max(r, 0.0); }
${
      half
        ? "    let h = s16(r);\n    y[at] = h;\n    pst(i, f32(h));"
        : "    y[at] = r;\n    pst(i, r);"
    }
  }
  workgroupBarrier();
`
    : "";
  // Thread li takes (plane slot, tile) pairs j = li, li + wg, ...: slot j / tiles, the workgroup's
  // planes from `first` on, each slot's plane pb floats into the workgroup's array. The barriers
  // stay in uniform control flow.
  const tiles = winogradGeometry(m, 1, s.h, s.w).tiles;
  const slot = `    let lp = j / ${tiles}u;
    let t = j - lp * ${tiles}u;
    let pl = first + lp;
    if (pl >= p.n * p.c) { break; }
    let c = pl % p.c;
    let img = pl / p.c;
    let pb = lp * ${ph * pw}u;
    let o0 = origin(t);`;
  const kernel = `@compute @workgroup_size(${wg})
fn wino_bridge(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) li: u32,
) {
  let first = (wid.x + wid.y * nwg.x) * ${pg}u;
  for (var e = li; e < ${vec4s}u; e += ${wg}u) { plane[e] = vec4<f32>(0.0); }
  workgroupBarrier();
  let sin = p.c * p.ppadIn;
  for (var j = li; j < ${pg * tiles}u; j += ${wg}u) {
${slot}
${
    s.keepY
      ? ""
      : "    let yb = pl * p.h * p.w;\n    let bv = bias[c];\n"
  }    let oi = c * p.ppadIn + img * p.tiles + t;
${ind(output)}
  }
  workgroupBarrier();
${epiloguePass}  let sout = p.c * p.ppadOut;
  for (var j = li; j < ${pg * tiles}u; j += ${wg}u) {
${slot}
    // The input tile of t starts one row and column before its outputs: plane row o0.x is image
    // row o0.x - 1.
    let oo = c * p.ppadOut + img * p.tiles + t;
${ind(input)}
  }
}
`;
  const inPlane = "pb + (oy + 1u) * PW + ox + 1u";
  // keepY: a transform output inside the image, raw, to the plane (epiloguePass finishes it).
  const raw = `fn raw(pb: u32, oy: u32, ox: u32, v: f32) {
  if (oy >= p.h || ox >= p.w) { return; }
  pst(${inPlane}, v);
}
`;
  // Else the epilogue of wino_output in place; the value goes to the plane (as y would read back).
  const st = `fn st(pb: u32, yb: u32, oy: u32, ox: u32, v: f32, bv: f32) {
  if (oy >= p.h || ox >= p.w) { return; }
  let at = yb + oy * p.w + ox;
  var r = v + bv;
  if (fz.res != 0u) { r += ${half ? "f32(res[at])" : "res[at]"}; }
  if (fz.relu != 0u) { r = max(r, 0.0); }
${half ? `  pst(${inPlane}, f32(s16(r)));` : `  pst(${inPlane}, r);`}
}
`;
  return `${prelude}// Generated by src/nn/gpu/winograd_bridge.ts: the F(${m}x${m}, 3x3) bridge, ${
    bridgeName(s)
  }.
struct Params { n: u32, c: u32, h: u32, w: u32, tw: u32, tiles: u32, ppadIn: u32, ppadOut: u32 }
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> mm: array<${ty(s.mIn)}>;
@group(0) @binding(1) var<storage, read> bias: array<f32>;
@group(0) @binding(2) var<storage, read> res: array<${ty(s.act)}>;
${
    s.keepY
      ? `@group(0) @binding(3) var<storage, read_write> y: array<${ty(s.act)}>;\n`
      : ""
  }@group(0) @binding(4) var<storage, read_write> v_out: array<${ty(s.vOut)}>;
@group(0) @binding(5) var<uniform> p: Params;
@group(0) @binding(6) var<uniform> fz: Fuse;

// The plane with a one-value zero border: element (iy, ix) of the image at (iy + 1) * PW + ix + 1.
// Held as vec4s: WebGPU zero-initializes workgroup memory, and llvmpipe's compile time grows with
// the array's element count (a quarter as many here; see OUTPUT_PLANE_FLOATS).
const PW = ${pw}u;
var<workgroup> plane: array<vec4<f32>, ${vec4s}>;

fn pld(i: u32) -> f32 { return plane[i >> 2u][i & 3u]; }
fn pst(i: u32, v: f32) { plane[i >> 2u][i & 3u] = v; }

${s.keepY ? raw : st}
// Row and column of tile t's first output.
fn origin(t: u32) -> vec2<u32> {
  let ty = t / p.tw;
  return vec2<u32>(ty * ${m}u, (t - ty * p.tw) * ${m}u);
}

${kernel}`;
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

/** A bridge's dispatch for `planes` planes (bridgePlanesPerGroup of them a workgroup). */
export function bridgeDispatch(
  ctx: GpuContext,
  s: BridgeSpec,
  planes: number,
): [number, number, number] {
  return bridgeGroups(ctx, Math.ceil(planes / bridgePlanesPerGroup(s.m, s.h, s.w)));
}

/** One workgroup per item (a plane, or a group of planes), as (x, y) under the per-dimension limit. */
export function bridgeGroups(ctx: GpuContext, items: number): [number, number, number] {
  const max = ctx.device.limits.maxComputeWorkgroupsPerDimension;
  const gx = Math.min(items, max);
  return [gx, Math.ceil(items / gx), 1];
}
