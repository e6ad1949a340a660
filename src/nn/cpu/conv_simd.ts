// The Wasm SIMD twins of conv2dFast and conv2dBackwardWeightFast (kernels in asm/conv.ts): the
// same padded-width layout, four output pixels per SIMD step. One module instance per thread,
// its memory laid out afresh by each call (input planes, weights, outputs), grown when needed.
// Where WebAssembly SIMD is missing, or KIBITZ_WASM=0, the TypeScript twins run instead.
import { decodeBase64 } from "../../cfr/wasm/base64.ts";
import { compileModule, wasmAllowed } from "../../cfr/wasm/enabled.ts";
import { type CpuTensor, cpuTensor } from "../tensor.ts";
import { KibitzError } from "../../errors.ts";
import { checkConv, convGeometry } from "./conv.ts";
import { conv2dBackwardWeightFast, conv2dFast, flipTranspose } from "./fast.ts";
import { WASM_BASE64 } from "./conv_wasm.ts";
import { towerPlan } from "./tower_plan.ts";

interface Exports {
  memory: WebAssembly.Memory;
  convAcc(
    x: number,
    ci: number,
    stride: number,
    w: number,
    co: number,
    k: number,
    rowW: number,
    len: number,
    out: number,
  ): void;
  convFinish(
    acc: number,
    co: number,
    len: number,
    out: number,
    ostride: number,
    res: number,
    relu: number,
    mask: number,
  ): void;
  padPlanes(
    src: number,
    c: number,
    h: number,
    w: number,
    dst: number,
    stride: number,
    rowW: number,
    pad: number,
  ): void;
  unpadPlanes(
    src: number,
    c: number,
    h: number,
    w: number,
    stride: number,
    rowW: number,
    dst: number,
  ): void;
  convCells(
    x: number,
    c: number,
    rowW: number,
    wT: number,
    bias: number,
    cells: number,
    ncell: number,
    out: number,
    res: number,
    relu: number,
  ): void;
  fillCells(out: number, c: number, fills: number, nfill: number): void;
  padCells(src: number, c: number, h: number, w: number, dst: number, rowW: number): void;
  unpadCells(src: number, c: number, h: number, w: number, rowW: number, dst: number): void;
  convWeightAcc(
    x: number,
    ci: number,
    stride: number,
    g: number,
    co: number,
    k: number,
    rowW: number,
    len: number,
    dw: number,
  ): void;
}

const PAGE = 65536;
const BASE = 1024;
let instance: Exports | null | undefined;

function kernels(): Exports | null {
  if (instance === undefined) {
    const mod = wasmAllowed() ? compileModule(decodeBase64(WASM_BASE64)) : null;
    instance = mod ? new WebAssembly.Instance(mod, {}).exports as unknown as Exports : null;
  }
  return instance;
}

/** Whether the Wasm SIMD convolutions run (else the TypeScript twins do). */
export function convSimdEnabled(): boolean {
  return kernels() !== null;
}

/** Geometry of one image's padded planes and padded-width outputs. */
function layout(h: number, w: number, k: number) {
  const pad = (k - 1) / 2, rowW = w + 2 * pad, hp = h + 2 * pad;
  const len = (h * rowW + 3) & ~3;
  // The last SIMD step reads up to (k - 1) rows and k + 2 values past the output's end.
  const stride = (hp * rowW + k + 8 + 3) & ~3;
  return { pad, rowW, len, stride };
}

/** Grows the memory to `bytes` and returns an f32 view of all of it. */
function memory(x: Exports, bytes: number): Float32Array {
  const mem = x.memory;
  if (bytes > mem.buffer.byteLength) mem.grow(Math.ceil((bytes - mem.buffer.byteLength) / PAGE));
  return new Float32Array(mem.buffer);
}

/**
 * Copies image b's planes of `src` ([n, c, h, w]) into the layout at float `at`: planes of
 * `stride` values, rows of `rowW`, `pad` rows and columns of zeros before the values, zeros
 * elsewhere. One copy to float `plain`, then the Wasm kernel pads (per-row JS copies cost tens of
 * microseconds at 16 x 26 x 26, a tenth of a convolution).
 */
function putPlanes(
  K: Exports,
  f: Float32Array,
  at: number,
  plain: number,
  src: Float32Array,
  b: number,
  c: number,
  h: number,
  w: number,
  stride: number,
  rowW: number,
  pad: number,
): void {
  const size = c * h * w;
  f.set(size === src.length ? src : src.subarray(b * size, (b + 1) * size), plain);
  K.padPlanes(plain * 4, c, h, w, at * 4, stride, rowW, pad);
}

/**
 * Copies c planes in padded-width rows (plane ch's value (r, q) at float from + ch * stride +
 * r * g.rowW + q) into image b of `dst` ([n, c, h, w]), through float `plain`.
 */
function takePlanes(
  K: Exports,
  f: Float32Array,
  from: number,
  plain: number,
  dst: Float32Array,
  b: number,
  c: number,
  h: number,
  w: number,
  stride: number,
  rowW: number,
): void {
  const size = c * h * w;
  K.unpadPlanes(from * 4, c, h, w, stride, rowW, plain * 4);
  dst.set(f.subarray(plain, plain + size), b * size);
}

/**
 * Convolution, stride 1, same padding, with an optional bias, residual and ReLU epilogue: the
 * SIMD twin of conv2dFast (same results up to f32 summation order). `out` (at least the
 * output's size) may take the result instead of a new array (the SIMD path only).
 */
export function conv2dSimd(
  x: CpuTensor,
  w: CpuTensor,
  bias: Float32Array | null = null,
  res: Float32Array | null = null,
  relu = false,
  out?: Float32Array,
): CpuTensor {
  const K = kernels();
  if (!K) return conv2dFast(x, w, bias, res, relu);
  const [n, ci, h, wd] = x.shape;
  checkConv(x.shape, w.shape);
  const co = w.shape[0];
  const { k } = convGeometry(w.shape);
  const g = layout(h, wd, k);
  // Floats: padded input, weights, sums, the residual in the sums' layout, a plain scratch.
  const xAt = BASE / 4, wAt = xAt + ci * g.stride, oAt = wAt + w.data.length;
  const rAt = oAt + co * g.len, plain = rAt + (res ? co * g.len : 0);
  const f = memory(K, (plain + Math.max(ci, co) * h * wd) * 4);
  f.set(w.data, wAt);
  const size = n * co * h * wd;
  const y: CpuTensor = out && out.length >= size
    ? { shape: [n, co, h, wd], data: out.subarray(0, size) }
    : cpuTensor([n, co, h, wd]);
  for (let b = 0; b < n; b++) {
    putPlanes(K, f, xAt, plain, x.data, b, ci, h, wd, g.stride, g.rowW, g.pad);
    for (let o = 0; o < co; o++) f.fill(bias ? bias[o] : 0, oAt + o * g.len, oAt + (o + 1) * g.len);
    K.convAcc(xAt * 4, ci, g.stride, wAt * 4, co, k, g.rowW, g.len, oAt * 4);
    if (res) putPlanes(K, f, rAt, plain, res, b, co, h, wd, g.len, g.rowW, 0);
    if (res || relu) K.convFinish(oAt * 4, co, g.len, oAt * 4, g.len, res ? rAt * 4 : 0, +relu, 0);
    takePlanes(K, f, oAt, plain, y.data, b, co, h, wd, g.len, g.rowW);
  }
  return y;
}

/** One residual block's two 3 x 3 convolutions, c -> c channels, biases included. */
export interface ResidualBlockWeights {
  w1: CpuTensor;
  b1: Float32Array;
  w2: CpuTensor;
  b2: Float32Array;
}

/**
 * A residual tower: per block, r = relu(conv(h, w1) + b1), then h = relu(conv(r, w2) + b2 + h).
 * The same results to the bit as the conv2dSimd calls it replaces, without their per-call work:
 * each image's planes are padded into the Wasm memory once, every layer writes its output
 * straight into the next layer's zero-padded layout (the scratch columns masked to zero) with the
 * residual added in place, and the result is copied out once. Falls back to conv2dSimd calls
 * where a convolution is not 3 x 3, c -> c. `out` (at least n x c x h x w values) may take the
 * result instead of a new array. `rows` (h values per image, width at most 30) may say where each
 * image differs from one value per row: bit q of rows[b * h + r] set unless cell (r, q) of every
 * channel equals the other unset cells of its row; then, where c is a multiple of 16, only the
 * cells that can differ are computed (towerPlan), with the same results to the bit (elsewhere the
 * whole tower runs). That path keeps its transposed weights by array, so weights passed with
 * `rows` must not change in place between calls (FastInference's folded weights never do).
 */
export function residualTowerSimd(
  x: CpuTensor,
  blocks: ResidualBlockWeights[],
  out?: Float32Array,
  rows?: Int32Array,
): CpuTensor {
  const K = kernels();
  const [n, c, h, wd] = x.shape;
  const fits = (w: CpuTensor) =>
    w.shape[0] === c && w.shape[1] === c && w.shape[2] === 3 && w.shape[3] === 3;
  if (!K || !blocks.every((b) => fits(b.w1) && fits(b.w2))) {
    let y = x;
    for (const b of blocks) {
      y = conv2dSimd(conv2dSimd(y, b.w1, b.b1, null, true), b.w2, b.b2, y.data, true);
    }
    return y;
  }
  const y: CpuTensor = out && out.length >= n * c * h * wd
    ? { shape: [n, c, h, wd], data: out.subarray(0, n * c * h * wd) }
    : cpuTensor([n, c, h, wd]);
  if (rows !== undefined && wd <= 30 && c % 16 === 0) {
    return residualTowerCells(K, x, blocks, y, rows);
  }
  const g = layout(h, wd, 3), per = c * c * 9, L = 2 * blocks.length;
  // Floats: the mask of valid outputs, the sums, planes A (h) and B (r), weights, biases, a
  // plain scratch.
  const mAt = BASE / 4, accAt = mAt + g.len, aAt = accAt + c * g.len, bAt = aAt + c * g.stride;
  const wAt = bAt + c * g.stride, biasAt = wAt + L * per, plain = biasAt + L * c;
  const f = memory(K, (plain + c * h * wd) * 4);
  const mask = new Int32Array(f.buffer, mAt * 4, g.len);
  for (let i = 0; i < g.len; i++) mask[i] = i < h * g.rowW && i % g.rowW < wd ? -1 : 0;
  blocks.forEach((b, j) => {
    f.set(b.w1.data, wAt + 2 * j * per);
    f.set(b.w2.data, wAt + (2 * j + 1) * per);
    f.set(b.b1, biasAt + 2 * j * c);
    f.set(b.b2, biasAt + (2 * j + 1) * c);
  });
  // A layer's output index i is its padded input's index i + rowW + 1 (one row and column down).
  const shift = g.rowW + 1;
  for (let b = 0; b < n; b++) {
    putPlanes(K, f, aAt, plain, x.data, b, c, h, wd, g.stride, g.rowW, 1);
    f.fill(0, bAt, bAt + c * g.stride);
    for (let l = 0; l < L; l++) {
      const bo = biasAt + l * c;
      for (let o = 0; o < c; o++) f.fill(f[bo + o], accAt + o * g.len, accAt + (o + 1) * g.len);
      const from = l % 2 === 0 ? aAt : bAt, to = l % 2 === 0 ? bAt : aAt;
      K.convAcc(from * 4, c, g.stride, (wAt + l * per) * 4, c, 3, g.rowW, g.len, accAt * 4);
      const out = (to + shift) * 4, res = l % 2 === 0 ? 0 : out;
      K.convFinish(accAt * 4, c, g.len, out, g.stride, res, 1, mAt * 4);
    }
    takePlanes(K, f, aAt + shift, plain, y.data, b, c, h, wd, g.stride, g.rowW);
  }
  return y;
}

/**
 * residualTowerSimd with `rows`: the layers on cell-major planes (each cell's channels side by
 * side, so that convCells reads a cell's input and writes its outputs as whole vectors), each
 * computing only its plan's cells and copying one over the rest of each row (towerPlan).
 */
function residualTowerCells(
  K: Exports,
  x: CpuTensor,
  blocks: ResidualBlockWeights[],
  y: CpuTensor,
  rows: Int32Array,
): CpuTensor {
  const [n, c, h, wd] = x.shape;
  const rowW = wd + 2, cellsPer = (h + 2) * rowW, per = c * c * 9, L = 2 * blocks.length;
  // Floats: planes A (h) and B (r), the weights as [c][tap][o], biases, a plain scratch, then
  // the plans' cells and fills (ints): at most a cell and a fill per cell.
  const aAt = BASE / 4, bAt = aAt + c * cellsPer, wAt = bAt + c * cellsPer;
  const biasAt = wAt + L * per, plain = biasAt + L * c, planAt = plain + c * h * wd;
  const f = memory(K, (planAt + 4 * h * wd) * 4);
  blocks.forEach((b, j) => {
    f.set(transposeTaps(b.w1.data, c), wAt + 2 * j * per);
    f.set(transposeTaps(b.w2.data, c), wAt + (2 * j + 1) * per);
    f.set(b.b1, biasAt + 2 * j * c);
    f.set(b.b2, biasAt + (2 * j + 1) * c);
  });
  // A layer's output cell i is its padded input's cell i + rowW + 1 (one row and column down).
  const shift = (rowW + 1) * c, size = c * h * wd;
  for (let b = 0; b < n; b++) {
    f.set(x.data.subarray(b * size, (b + 1) * size), plain);
    K.padCells(plain * 4, c, h, wd, aAt * 4, rowW);
    f.fill(0, bAt, bAt + c * cellsPer);
    const plans = towerPlan(rows.subarray(b * h, (b + 1) * h), h, wd, rowW, L);
    for (let l = 0; l < L; l++) {
      const p = plans[l], cells = planAt * 4, fills = cells + p.cells.length * 4;
      const ints = new Int32Array(f.buffer, planAt * 4, p.cells.length + p.fills.length);
      ints.set(p.cells);
      ints.set(p.fills, p.cells.length);
      const from = l % 2 === 0 ? aAt : bAt, to = l % 2 === 0 ? bAt : aAt;
      const out = (to + shift) * 4, res = l % 2 === 0 ? 0 : out;
      const wl = (wAt + l * per) * 4, bl = (biasAt + l * c) * 4;
      K.convCells(from * 4, c, rowW, wl, bl, cells, p.cells.length, out, res, 1);
      K.fillCells(out, c, fills, p.fills.length / 3);
    }
    K.unpadCells(aAt * 4, c, h, wd, rowW, plain * 4);
    y.data.set(f.subarray(plain, plain + size), b * size);
  }
  return y;
}

// transposeTaps' results by weight array (weights do not change between a network's calls).
const transposed = new WeakMap<Float32Array, Float32Array>();

/** A c -> c 3 x 3 weight [o][c][tap] as [c][tap][o] (convCells' order), made once per array. */
function transposeTaps(w: Float32Array, c: number): Float32Array {
  let t = transposed.get(w);
  if (t) return t;
  t = new Float32Array(w.length);
  for (let o = 0; o < c; o++) {
    for (let i = 0; i < c; i++) {
      for (let k = 0; k < 9; k++) t[(i * 9 + k) * c + o] = w[(o * c + i) * 9 + k];
    }
  }
  transposed.set(w, t);
  return t;
}

/** The SIMD twin of conv2dBackwardWeightFast: dL/dw of a convolution, written into `dw`. */
export function conv2dBackwardWeightSimd(x: CpuTensor, dy: CpuTensor, dw: CpuTensor): void {
  const K = kernels();
  if (!K) return conv2dBackwardWeightFast(x, dy, dw);
  const [n, ci, h, wd] = x.shape;
  const co = dy.shape[1], k = dw.shape[2];
  const g = layout(h, wd, k);
  const xAt = BASE / 4, gAt = xAt + ci * g.stride, wAt = gAt + co * g.len;
  const plain = wAt + dw.data.length;
  const f = memory(K, (plain + Math.max(ci, co) * h * wd) * 4);
  f.fill(0, wAt, wAt + dw.data.length);
  for (let b = 0; b < n; b++) {
    putPlanes(K, f, xAt, plain, x.data, b, ci, h, wd, g.stride, g.rowW, g.pad);
    putPlanes(K, f, gAt, plain, dy.data, b, co, h, wd, g.len, g.rowW, 0);
    K.convWeightAcc(xAt * 4, ci, g.stride, gAt * 4, co, k, g.rowW, g.len, wAt * 4);
  }
  dw.data.set(f.subarray(wAt, wAt + dw.data.length));
}

/** The SIMD twin of conv2dBackwardInputFast: dy convolved with the flipped, transposed weight. */
export function conv2dBackwardInputSimd(dy: CpuTensor, w: CpuTensor): CpuTensor {
  if (w.shape[0] !== dy.shape[1]) {
    throw new KibitzError("shape_mismatch", `conv dy ${dy.shape} vs weight ${w.shape}`);
  }
  return conv2dSimd(dy, flipTranspose(w));
}
