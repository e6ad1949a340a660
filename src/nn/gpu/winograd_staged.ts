// The column-staged Winograd transforms (`-c`, `-i`, `-ic` candidates): each transform's two
// matrix products in two stages through workgroup memory, a workgroup taking one channel and NQ
// consecutive tile columns (q = image tiles + tile).
//
// Output (Y = A^T M A): stage 1 runs one thread per (column j of the alpha grid, tile) that loads
// the m + 2 values M[:, j] and stores T[:, j] = A^T M[:, j]; stage 2 one thread per (output row i,
// tile): Y[i, :] = T[i, :] A, then the epilogue (bias, residual, ReLU). The one-thread-a-tile
// transform (wino_output) holds (m + 2)^2 loads a thread: at F(7x7) on the H200 it read M at about
// a quarter of the card's bandwidth (sessions 29-31), apparently bound by the loads a thread keeps
// in flight rather than by DRAM (its DRAM order made no difference). Here a thread loads m + 2
// values and needs far fewer registers, so occupancy can hide the latency (not yet measured).
//
// Input (V = B^T d B): stage 1 one thread per (column j of the input patch, tile): T[:, j] =
// B^T d[:, j]; stage 2 one thread per (row i, tile): V[i, :] = T[i, :] B, consecutive threads
// storing consecutive columns of V.
//
// Both keep the products and sums of wino_output and wino_input in the same order (the same bits
// on llvmpipe).
import type { GpuContext } from "../../gpu/device.ts";
import {
  applyRows,
  inputLoadWgsl,
  outputBindingsWgsl,
  outputStoreWgsl,
  TRANSFORM_STRUCTS,
  winogradMatrices,
  type WinogradTile,
} from "../winograd.ts";
import { f16Prelude } from "./conv_gemm.ts";

// winograd_gemm.ts's TransformedStorage (it imports this module).
type TransformedStorage = "f32" | "f16" | "f16-emulated";

/** Lines of generated code, indented into an entry point's `if` block. */
function indent(ls: string[]): string {
  return ls.map((l) => `    ${l}`).join("\n");
}

/** Tile columns one workgroup takes: as many as `threads` allows with m + 2 threads a column. */
export function stagedColumns(m: WinogradTile, threads: number): number {
  return Math.max(1, Math.floor(threads / (m + 2)));
}

/** The dispatch of either transform: one workgroup per (channel, block of stagedColumns columns). */
export function stagedGroups(
  ctx: GpuContext,
  m: WinogradTile,
  threads: number,
  channels: number,
  p: number,
): [number, number, number] {
  const groups = channels * Math.ceil(p / stagedColumns(m, threads));
  const gx = Math.min(groups, ctx.device.limits.maxComputeWorkgroupsPerDimension);
  return [gx, Math.ceil(groups / gx), 1];
}

/**
 * What both generators derive from the tile, threads and storages: the alpha side a = m + 2, tile
 * columns a workgroup, the f16 prelude and the WGSL types of the activations and of V or M.
 */
function stagedSetup(
  m: WinogradTile,
  threads: number,
  storage: TransformedStorage,
  transformed: TransformedStorage,
) {
  const half = storage !== "f32", tHalf = transformed !== "f32";
  if (half && tHalf && storage !== transformed) {
    throw new Error(`Winograd staged transform: storage ${storage} with V/M in ${transformed}`);
  }
  return {
    a: m + 2,
    nq: stagedColumns(m, threads),
    half,
    tHalf,
    prelude: half ? f16Prelude(storage) : tHalf ? f16Prelude(transformed) : "",
    act: half ? "s16" : "f32",
    vm: tHalf ? "s16" : "f32",
  };
}

/**
 * The entry point's head: workgroup g takes channel c = g / blocks (`channels` of them) and tile
 * column block g % blocks; its thread li has column q = li % NQ, global column `col`.
 */
function stagedEntry(name: string, threads: number, channels: string): string {
  return `@compute @workgroup_size(${threads})
fn ${name}(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) li: u32,
) {
  let cols = p.n * p.tiles;
  let blocks = (cols + NQ - 1u) / NQ;
  let g = wid.x + wid.y * nwg.x;
  let c = g / blocks;
  if (c >= ${channels}) { return; }
  let q = li % NQ;
  let col = (g - c * blocks) * NQ + q;`;
}

/**
 * WGSL of the column-staged output transform (entry wino_output_staged), with the bindings and
 * uniforms of winogradSource's wino_output: 4 M [alpha, Co, ppad] ([alpha, splits, Co, ppad]
 * with `splits`: the partials are added as they are read), 5 bias, 6 res, 7 y, 8 Params, 9 Fuse,
 * 10 gscale where `scaled` (M read times gscale[1]). `storage`: the activations' (y, res);
 * `transformed`: M's. About `threads` threads a workgroup (stagedColumns x (m + 2)).
 */
export function winogradOutputStagedSource(
  m: WinogradTile,
  storage: TransformedStorage,
  transformed: TransformedStorage,
  scaled: boolean,
  splits: number,
  threads: number,
): string {
  const { at } = winogradMatrices(m);
  const { a, nq, half, tHalf, prelude, act, vm } = stagedSetup(m, threads, storage, transformed);
  const down = scaled ? " * gscale[1]" : "";
  // M[k a + j] of the thread's column j: its partials at (k a + j) splits + s, j's part in o.
  const readM = (
    lit: number,
  ) => (tHalf ? `f32(mm[${lit}u * stride + o])` : `mm[${lit}u * stride + o]`);
  const loadM = (k: number) =>
    splits === 1
      ? `${readM(k * a)}${down}`
      : `(${
        Array.from({ length: splits }, (_, s) => readM(k * a * splits + s)).join(" + ")
      })${down}`;
  const column = [
    ...Array.from({ length: a }, (_, k) => `let q_${k} = ${loadM(k)};`),
    ...applyRows(at, (k) => `q_${k}`, 1, (i) => `t_${i}`),
    ...Array.from({ length: m }, (_, i) => `tt[${i * a * nq}u + tb] = t_${i};`),
  ];
  const row = [
    ...Array.from({ length: a }, (_, k) => `let w_${k} = tt[${k * nq}u + tb];`),
    ...applyRows(at, (k) => `w_${k}`, 1, (s) => `r_${s}`),
    ...Array.from({ length: m }, (_, s) => `st(yb, oy, x0 + ${s}u, r_${s}, bv);`),
  ];
  return `${prelude}// Generated by src/nn/gpu/winograd_staged.ts: the column-staged F(${m}x${m}, 3x3) output
// transform, ${nq} tile columns a workgroup.
${TRANSFORM_STRUCTS}

${outputBindingsWgsl(act, vm, scaled)}
const NQ = ${nq}u;
// T [m][m + 2][NQ]: row i, column j of tile column q at (i (m + 2) + j) NQ + q.
var<workgroup> tt: array<f32, ${m * a * nq}>;

${outputStoreWgsl(half)}

${stagedEntry("wino_output_staged", a * nq, "p.co")}
  let stride = p.co * p.ppad;
  if (col < cols) {
    let j = li / NQ;
    let o = c * p.ppad + col + j * ${splits}u * stride;
    let tb = j * NQ + q;
${indent(column)}
  }
  workgroupBarrier();
  let i = li / NQ;
  if (col < cols && i < ${m}u) {
    let img = col / p.tiles;
    let t = col - img * p.tiles;
    let ty = t / p.tw;
    let oy = ty * ${m}u + i;
    let x0 = (t - ty * p.tw) * ${m}u;
    let yb = (img * p.co + c) * p.h * p.w;
    let bv = bias[c];
    let tb = i * ${a * nq}u + q;
${indent(row)}
  }
}
`;
}

/**
 * WGSL of the column-staged input transform (entry wino_input_staged), with the bindings and
 * uniforms of winogradSource's wino_input: 2 x [N, Ci, H, W] (`storage`), 3 V [alpha, Ci, ppad]
 * (`transformed`), 8 Params, 10 gscale where `scaled` (V stored times gscale[0]). About `threads`
 * threads a workgroup (stagedColumns x (m + 2)).
 */
export function winogradInputStagedSource(
  m: WinogradTile,
  storage: TransformedStorage,
  transformed: TransformedStorage,
  scaled: boolean,
  threads: number,
): string {
  const { bt } = winogradMatrices(m);
  const { a, nq, half, tHalf, prelude, act, vm } = stagedSetup(m, threads, storage, transformed);
  const up = scaled ? " * gscale[0]" : "";
  const column = [
    ...Array.from({ length: a }, (_, k) => `let d_${k} = ld(xb, y0 + ${k - 1}, xj);`),
    ...applyRows(bt, (k) => `d_${k}`, 1, (i) => `t_${i}`),
    ...Array.from({ length: a }, (_, i) => `tt[${i * a * nq}u + tb] = t_${i};`),
  ];
  const row = [
    ...Array.from({ length: a }, (_, k) => `let w_${k} = tt[${k * nq}u + tb];`),
    ...applyRows(bt, (k) => `w_${k}`, 1, (j) => `v_${j}`),
    ...Array.from(
      { length: a },
      (_, j) => `v_out[${j}u * stride + o] = ${tHalf ? `s16(v_${j}${up})` : `v_${j}${up}`};`,
    ),
  ];
  return `${prelude}// Generated by src/nn/gpu/winograd_staged.ts: the column-staged F(${m}x${m}, 3x3) input
// transform, ${nq} tile columns a workgroup.
${TRANSFORM_STRUCTS}

@group(0) @binding(2) var<storage, read> x: array<${act}>;
@group(0) @binding(3) var<storage, read_write> v_out: array<${vm}>;
@group(0) @binding(8) var<uniform> p: Params;
${scaled ? "@group(0) @binding(10) var<storage, read> gscale: array<f32>;\n" : ""}
const NQ = ${nq}u;
// T [m + 2][m + 2][NQ]: row i, column j of tile column q at (i (m + 2) + j) NQ + q.
var<workgroup> tt: array<f32, ${a * a * nq}>;

${inputLoadWgsl(half)}

${stagedEntry("wino_input_staged", a * nq, "p.ci")}
  let img = col / p.tiles;
  let t = col - img * p.tiles;
  let ty = t / p.tw;
  if (col < cols) {
    let j = li / NQ;
    let y0 = i32(ty * ${m}u);
    let xj = i32((t - ty * p.tw) * ${m}u + j) - 1;
    let xb = (img * p.ci + c) * p.h * p.w;
    let tb = j * NQ + q;
${indent(column)}
  }
  workgroupBarrier();
  let i = li / NQ;
  if (col < cols && i < ${a}u) {
    let stride = p.ci * p.ppad;
    let o = i * ${a}u * stride + c * p.ppad + col;
    let tb = i * ${a * nq}u + q;
${indent(row)}
  }
}
`;
}
