import { FC_THIN, fcNtFits, fcShapeKey } from "./fc.ts";
import type { GpuContext } from "../../gpu/device.ts";
import { uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import type { NnBackend, SgdHyper } from "../backend.ts";
import type { BnParams } from "../cpu/batchnorm.ts";
import { convGeometry } from "../cpu/conv.ts";
import { expectShape, numel } from "../tensor.ts";
import { maskWords } from "../mask_bits.ts";
import type { KernelName, KernelTiles, NnKernels } from "./kernels.ts";
import type { HalfKernelName, HalfKernels, HalfStorage } from "./f16.ts";
import { type GpuTensor, type TensorPool, uploadTensor } from "./tensor.ts";
import { type ConvTile, tileSize } from "./conv_gemm.ts";
import { thinConvFits } from "./conv_thin.ts";
import { KibitzError } from "../../errors.ts";
import {
  type TransformedStorage,
  variantColumns,
  type WgradChoice,
  type WgradHalfKernels,
  type WinoGemm,
  winoGemmGroups,
  type WinoKernels,
} from "./winograd_gemm.ts";
import { fusedGroups, type WinoFused } from "./winograd_fused.ts";
import {
  chooseWinograd,
  outputPlanesPerGroup,
  winogradColumns,
  winogradGeometry,
  type WinogradSetting,
  type WinogradTile,
} from "../winograd.ts";
import type { ChainNext } from "../graph_fused.ts";
import {
  bridgeBindings,
  bridgeFits,
  bridgeGroups,
  bridgeName,
  type BridgeSpec,
  bridgeStagedFits,
} from "./winograd_bridge.ts";
import { stagedGroups } from "./winograd_staged.ts";
import type { MixedKernels } from "./winograd_mixed.ts";
import { mixedThreads } from "../winograd_mixed.ts";
import { mixedStagedGroups } from "./winograd_mixed_staged.ts";

/** How a recorder runs one fused 3x3 conv as Winograd (GpuRecorder.winoPlanOf). */
export interface WinoPlan {
  m: WinogradTile;
  /** The tuned kernels; undefined: the built-in transforms and batched GEMM. */
  choice: WinoKernels | undefined;
  /** Columns of the transformed-domain GEMM (V and M rows). */
  ppad: number;
  /** Storage of V and M. */
  transformed: TransformedStorage;
}

/**
 * The plan of an F(m) conv over p tile columns run by `choice` (undefined: the built-in kernels):
 * a tiling variant pads the columns to its own block width (batch 1's 49 F(4x4) tiles: 64 columns
 * with 64-wide blocks), the built-in GEMM to 128.
 */
function winoPlan(m: WinogradTile, choice: WinoKernels | undefined, p: number): WinoPlan {
  return {
    m,
    choice,
    ppad: choice?.candidate.gemm ? variantColumns(choice.candidate.gemm, p) : winogradColumns(p),
    transformed: choice?.transformed ?? "f32",
  };
}

/** The key of a Winograd layer shape in GpuRecorder.winoChoice. */
export function winoShapeKey(
  m: number,
  n: number,
  ci: number,
  co: number,
  h: number,
  w: number,
): string {
  return `F${m}:${n}x${ci}x${h}x${w}->${co}`;
}

/** The key of a direct conv's shape in GpuRecorder.splitChoice (`half`: the f16-storage conv). */
export function directShapeKey(
  n: number,
  ci: number,
  co: number,
  h: number,
  w: number,
  k: number,
  half = false,
): string {
  return `K${k}${half ? "h" : ""}:${n}x${ci}x${h}x${w}->${co}`;
}

/**
 * The split-K factor the direct conv takes by default: enough workgroups to fill the GPU
 * (SPLIT_TARGET) from gx gy output tiles, with chunks of at least 128 of the kd-deep reduction.
 */
export function defaultSplits(gx: number, gy: number, kd: number): number {
  return Math.max(1, Math.min(Math.floor(SPLIT_TARGET / (gx * gy)), Math.floor(kd / 128)));
}

/**
 * The direct conv's default split-K factor for a layer shape under `tiles` (as convForward and
 * the f16 conv compute it).
 */
export function directDefaultSplits(
  tiles: KernelTiles,
  n: number,
  ci: number,
  co: number,
  h: number,
  w: number,
  k: number,
  tile: DirectTile = defaultDirectTile(co, n * h * w),
): number {
  const cols = n * h * w;
  const { bm, bn } = tileSize(tile === "wide" ? tiles.wide : tiles.small);
  return defaultSplits(Math.ceil(cols / bn), Math.ceil(co / bm), ci * k * k);
}

/** The tile family of a direct (implicit-GEMM) conv: `small` or `wide` (KernelTiles). */
export type DirectTile = "small" | "wide";

/** The tile family a direct conv takes by default: wide from 128 output channels and columns up. */
export function defaultDirectTile(co: number, cols: number): DirectTile {
  return co >= WIDE && cols >= WIDE ? "wide" : "small";
}

/**
 * Workgroups of one sumSquares: each writes a partial sum, out[slot * SUMSQ_GROUPS + g], and the
 * reader adds them (one workgroup per tensor read a 2.4 MB weight through one SM).
 */
export const SUMSQ_GROUPS = 32;

/** One recorded dispatch. */
export interface RecordedOp {
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  groups: [number, number, number];
  label: string;
}

/** The tiled convolution kernels are generated for these kernel sizes (the model's 3x3 and 1x1). */
function kernelSize(k: number): 1 | 3 {
  if (k === 1 || k === 3) return k;
  throw new KibitzError(
    "bad_shape",
    `tiled convolution supports 1x1 and 3x3 kernels, got ${k}x${k}`,
  );
}

/** Convolutions with at least this many output channels and columns use the 128 x 128 tiles. */
const WIDE = 128;

/** The tile training's Winograd weight-gradient GEMM of a (Co, Ci) layer runs (wide from 128). */
export function wgradTileOf(tiles: KernelTiles, co: number, ci: number): ConvTile {
  return co >= WIDE && ci >= WIDE ? tiles.wide : tiles.small;
}
/** Weight gradients aim for this many workgroups, splitting K in chunks of at least SPLIT_MIN. */
const SPLIT_TARGET = 264;
const SPLIT_MIN = 1024;
/** Products with at most this many rows or this deep a K use the untiled matmul. */
const THIN = FC_THIN;
/** Thin products with K this long (and contiguous) split K in a workgroup: matmul.wgsl `rows`. */
const ROWS_MIN_K = 64;

/**
 * The workgroup grid of a Winograd weight-gradient GEMM: output blocks of `tile`, and the tile
 * columns split so that the GEMMs fill the GPU (chunks of at least SPLIT_MIN, whole slices).
 */
function wgradGrid(
  tile: ConvTile,
  co: number,
  ci: number,
  g: { alpha: number; p: number },
): { gx: number; gy: number; splits: number; kchunk: number } {
  const { bm, bn } = tileSize(tile);
  const gx = Math.ceil(co / bm), gy = Math.ceil(ci / bn);
  const want = Math.max(
    1,
    Math.min(Math.ceil(SPLIT_TARGET * 4 / (gx * gy * g.alpha)), Math.floor(g.p / SPLIT_MIN)),
  );
  const kchunk = Math.ceil(g.p / want / tile.bk) * tile.bk;
  return { gx, gy, splits: Math.ceil(g.p / kchunk), kchunk };
}

/**
 * Records the network's ops as dispatches instead of running them: the result is a plan that is
 * encoded into one compute pass and replayed for every batch of the same size. Tensors come from
 * a pool; `release` makes a dead activation's buffer available to later ops of the plan.
 */
export class GpuRecorder implements NnBackend<GpuTensor> {
  readonly ops: RecordedOp[] = [];
  readonly uniforms: GPUBuffer[] = [];
  /** The optimizer uniform (lr, momentum, weight decay); the trainer rewrites it every step. */
  readonly hyper: GPUBuffer;
  /**
   * Winograd for fused 3x3 convs given a transformed filter (tiled family only): off, by the
   * selection table (chooseWinograd), or forced to F(2x2) / F(4x4).
   */
  winograd: WinogradSetting = "off";
  /**
   * f16 storage for the fused inference ops (convFused stores f16 activations, reads f16 weights;
   * linear converts its input back to f32): the compiled f16 kernels, or null for f32.
   */
  half: HalfKernels | null = null;
  /**
   * The Winograd kernels of a tiling variant per layer shape (key winoShapeKey), e.g. the
   * autotuner's pick; shapes without one run the built-in batched GEMM (winogradGemm*).
   */
  readonly winoChoice = new Map<string, WinoKernels>();
  /**
   * Training's Winograd weight-gradient GEMM per layer shape (key winoShapeKey of x and dW): a
   * `vp` variant (loadWgradVariant, compiled for the tile family that shape uses, with its own
   * slice depth), e.g. the tuner's pick; shapes without one run the built-in winogradWgradGemm*.
   */
  readonly wgradChoice = new Map<string, WgradChoice>();
  /**
   * The split-K factor of direct (implicit-GEMM) convs per layer shape (key directShapeKey), e.g.
   * the autotuner's pick; shapes without one take defaultSplits.
   */
  readonly splitChoice = new Map<string, number>();
  /**
   * The tile family of direct convs per layer shape (key directShapeKey): "small" (64 x 64 on
   * hardware) or "wide" (128 x 128), e.g. the small-batch tuner's pick; shapes without one take
   * wide tiles from 128 output channels and 128 columns up.
   */
  readonly tileChoice = new Map<string, DirectTile>();
  /**
   * 3x3 convs whose Winograd tile is chosen per layer shape (key directShapeKey, with the f16 flag
   * of the plan) instead of by the selection table: the small-batch tuner's F(4x4) where it timed
   * faster than the tuned direct conv below the table's threshold, and F(6x6) where it timed
   * faster than F(4x4) above it (inference's fused convs, training's convs; 0: direct).
   */
  readonly winoOverride = new Map<string, 0 | WinogradTile>();
  /**
   * Inference: the fused 3x3 conv shapes (directShapeKey) that run with mixed F(7x7)/F(6x6) tiles
   * (src/nn/gpu/winograd_mixed.ts), and their kernels; such a conv reads the filter transform
   * with the tiling's rows among otherFilters, and is no Winograd conv to the bridges.
   */
  readonly mixedChoice = new Map<string, MixedKernels>();
  /**
   * Filter transforms of the same folded weights at other tiles, by the transform the graph hands
   * convFused (GpuNet's F(4x4) one): a conv whose shape runs at another tile (winoOverride: the
   * large-batch tuner's F(6x6)) reads the twin whose rows match that tile.
   */
  readonly otherFilters = new Map<GpuTensor, GpuTensor[]>();
  /**
   * Training's weight-gradient tile per layer shape (key directShapeKey of x and dW, f32), where it
   * differs from the forward conv's (winoOverride): the training tile tuner's per-pass pick.
   */
  readonly wgradOverride = new Map<string, WinogradTile>();
  /**
   * Training plans keep each forward Winograd conv's V (the input transform of its input) for that
   * layer's weight gradient, which then skips its own input transform: one transform fewer a
   * layer, for the memory of every layer's V until its backward (GpuNet's trainKeepV). f32 V only.
   */
  keepV = false;
  /** The forward convs' kept V by their input tensor (keepV), until the weight gradient takes it. */
  private readonly keptV = new Map<GpuTensor, { v: GpuTensor; m: WinogradTile; ppad: number }>();
  /** Set while the input-gradient conv records: its V (of dY) is not a layer input's. */
  private inBackward = false;
  /**
   * The plan's input tensor, set before recording: the ops binding it are counted, and the f16
   * plan's cast of it noted (see halfInput).
   */
  input: GpuTensor | null = null;
  private inputReaders = 0;
  /** Every buffer bound by an op recorded so far. */
  private readonly bound = new Set<GPUBuffer>();
  private halfCast: { op: number; y: GpuTensor } | null = null;

  /**
   * Where a caller holding f16 planes may upload them into this plan, and the op it then skips:
   * the f16 plan's cast (toHalf) of `input` and its output, where that cast is the input's only
   * reader and its output was bound by no op before it; else null.
   */
  get halfInput(): { op: number; y: GpuTensor } | null {
    return this.inputReaders === 1 ? this.halfCast : null;
  }

  /**
   * Fully connected layers (key fcShapeKey) that run the K-major forward GEMM (fcNt,
   * shaders/nn/fc.wgsl) instead of the tiled matmul: the tuner's pick where it timed faster.
   */
  readonly fcNt = new Set<string>();

  /** Phase marks: the op index where each named phase of the recorded pass begins. */
  readonly marks: { phase: string; at: number }[] = [];
  /**
   * Winograd in conv2d too (the training graph's forward and input gradient), by the same
   * selection table as the fused convs; off by default (GpuNet turns it on for tiled plans).
   */
  winogradTrain = false;
  /**
   * f16 training (with winogradTrain): the Winograd convs store V and M, and the weight gradient V
   * and dM, as f16 ("f16-emulated": the same kernels with f32 storage, for tests); activations,
   * gradients and weights stay f32. Null: f32 throughout. Needs winoChoice (a `half` candidate),
   * winoScaled and wgradHalf filled for every 3x3 shape (GpuNet does).
   */
  trainHalf: HalfStorage | null = null;
  /** f16 training's input-gradient convs per shape: winoChoice's candidate, scaled transforms. */
  readonly winoScaled = new Map<string, WinoKernels>();
  /** f16 training's weight-gradient kernels per shape (key winoShapeKey of x and dW). */
  readonly wgradHalf = new Map<string, WgradHalfKernels>();
  /**
   * Compiled Winograd bridges by bridgeName (loadWinogradBridge), filled before recording: a
   * chained conv (convFused's `next`) whose spec is here ends in one instead of its output
   * transform, and its consumer skips the input transform.
   */
  readonly bridges = new Map<string, GPUComputePipeline>();
  /** Winograd conv shapes (winoShapeKey) the tuner runs unbridged (pickLargeBatchBridges). */
  readonly unbridged = new Set<string>();
  /**
   * Winograd conv shapes (winoShapeKey) whose bridges run column-staged where the plane fits
   * (bridgeSpec's `staged`; the tuner's tower timing, pickLargeBatchBridges).
   */
  readonly stagedBridges = new Set<string>();
  /** The consumer's V written by a bridge, by the producer's output tensor. */
  private readonly bridged = new Map<GpuTensor, { v: GpuTensor; ppad: number }>();
  /** Outputs a bridge did not write (their only reader takes the bridge's V instead). */
  private readonly unwritten = new WeakSet<GpuTensor>();
  private readonly zeroTensors = new Map<number, GpuTensor>();
  private scratchTensor: GpuTensor | null = null;
  /** The words of each integer params uniform (the fused Winograd kernel copies the flags). */
  private readonly paramWords = new WeakMap<GPUBuffer, number[]>();

  /**
   * Whether fused 1x1 convs with few outputs at large batches run the thin kernel (conv_thin.ts;
   * the same bits as the tiled one): tests turn it off to compare the two.
   */
  thinConv = true;

  /**
   * `tiled` selects the workgroup-memory kernels (tiled GEMMs, workgroup reductions: the fast path
   * on real GPUs); without it the direct, barrier-free kernels run (default on software adapters,
   * where llvmpipe compiles each tiled kernel for about a minute).
   */
  constructor(
    readonly ctx: GpuContext,
    readonly kernels: NnKernels,
    readonly pool: TensorPool,
    readonly tiled: boolean = !ctx.report.isFallback,
  ) {
    this.hyper = uniformBuffer(ctx, new Float32Array([0, 0.9, 1e-4, 0]).buffer, "nn.hyper");
    this.uniforms.push(this.hyper);
  }

  private params(words: number[], floats = false): GPUBuffer {
    const data = floats ? new Float32Array(words) : new Uint32Array(words);
    const b = uniformBuffer(this.ctx, data.buffer, "nn.params");
    this.uniforms.push(b);
    if (!floats) this.paramWords.set(b, words);
    return b;
  }

  /** Marks that the ops recorded from now on belong to `phase` (for per-phase GPU timing). */
  mark(phase: string): void {
    this.marks.push({ phase, at: this.ops.length });
  }

  /** Records `kernel` with buffers bound at the given binding numbers. */
  record(
    kernel: KernelName | HalfKernelName,
    bindings: Record<number, GPUBuffer>,
    groups: [number, number, number],
  ): void {
    const pipeline = kernel in this.kernels
      ? this.kernels[kernel as KernelName]
      : this.half?.[kernel as HalfKernelName];
    this.recordPipeline(pipeline, kernel, bindings, groups);
  }

  /** Records a compiled pipeline (one not in the kernel tables) under `label`. */
  recordPipeline(
    pipeline: GPUComputePipeline | undefined,
    kernel: string,
    bindings: Record<number, GPUBuffer>,
    groups: [number, number, number],
  ): void {
    if (!pipeline) {
      throw new KibitzError(
        "missing_kernel",
        `nn kernel ${kernel} was not compiled: load the ${
          this.tiled ? "tiled" : "direct"
        } family (loadKernels(ctx, tiles, "${this.tiled ? "tiled" : "direct"}" or "both"))`,
      );
    }
    for (const b of Object.values(bindings)) {
      if (b === this.input?.buffer) this.inputReaders++;
      this.bound.add(b);
    }
    const bindGroup = this.ctx.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: Object.entries(bindings).map(([k, buffer]) => ({
        binding: Number(k),
        resource: { buffer },
      })),
    });
    this.ops.push({ pipeline, bindGroup, groups, label: kernel });
  }

  private out(shape: readonly number[]): GpuTensor {
    return this.pool.acquire(shape);
  }

  /** An f16-storage tensor of the f16 plan (2 bytes a value; 4 when emulated). */
  private outHalf(shape: readonly number[]): GpuTensor {
    return this.pool.acquire(shape, "nn.tensor16", this.half?.storage === "f16" ? 2 : 4);
  }

  /** Records the f32 -> f16 cast of x into `into` (or a new f16 tensor) and returns it. */
  toHalf(x: GpuTensor, into: GpuTensor | null = null): GpuTensor {
    const y = into ?? this.outHalf(x.shape);
    if (x === this.input && !this.halfCast && !this.bound.has(y.buffer)) {
      this.halfCast = { op: this.ops.length, y };
    }
    const p = this.params([x.size, 0, 0, 0]);
    this.record("toHalf", { 0: x.buffer, 1: y.buffer, 7: p }, this.g1(x.size));
    return y;
  }

  /**
   * Records the compact readback of `probs` [rows, cols] (src/nn/compact_probs.ts): each row's
   * legal moves' probabilities by the packed `mask`, in move order, in a row of `width`.
   */
  compactProbs(probs: GpuTensor, mask: GpuTensor, width: number): GpuTensor {
    const [rows, cols] = probs.shape;
    const y = this.out([rows, width]);
    const p = this.params([rows, cols, width, 0]);
    const groups: [number, number, number] = [Math.min(rows, 65535), Math.ceil(rows / 65535), 1];
    this.record("compactProbs", { 0: probs.buffer, 1: mask.buffer, 2: y.buffer, 3: p }, groups);
    return y;
  }

  /** Records the f16 -> f32 cast of x and returns the f32 copy. */
  toFull(x: GpuTensor): GpuTensor {
    const y = this.out(x.shape);
    const p = this.params([x.size, 0, 0, 0]);
    this.record("toFull", { 2: x.buffer, 3: y.buffer, 7: p }, this.g1(x.size));
    return y;
  }

  private g1(n: number): [number, number, number] {
    return workgroups1d(this.ctx, n, 64);
  }

  /**
   * Implicit-GEMM convolution forward; with `winogradTrain`, 3x3 layers the selection table gives
   * Winograd run it (filter transform of the current weight, then the Winograd conv with a zero
   * bias and no activation): the training graph's forward and, through the flipped weight, its
   * input gradient.
   */
  conv2d(x: GpuTensor, w: GpuTensor): GpuTensor {
    return this.conv2dScaled(x, w, null);
  }

  /**
   * conv2d; f16 training's input-gradient conv passes the scale of x (= dY, gradScale) for its
   * scaled Winograd transforms.
   */
  private conv2dScaled(x: GpuTensor, w: GpuTensor, scale: GpuTensor | null): GpuTensor {
    const co = w.shape[0], ci = x.shape[1];
    const m = this.trainWinograd(x, w);
    if (!m) return this.convForward(x, w, null);
    const u = this.pool.acquire([(m + 2) * (m + 2), co, ci], "nn.wino_u");
    this.winogradFilter(w, u, m);
    const fz = this.params([0, 0, 0, 0]);
    const zero = this.zeros(co);
    const y = this.convWinograd(x, u, m, zero, zero, fz, false, scale);
    this.release(u);
    return y;
  }

  /**
   * The Winograd tile conv2d and its weight gradient use for x and w (0: direct): winoOverride's
   * (the training tile tuner's F(6x6)), else the selection table's.
   */
  private trainWinograd(x: GpuTensor, w: GpuTensor): 0 | WinogradTile {
    const [n, ci, h, wd] = x.shape, [co, wci, k] = w.shape;
    if (!this.winogradTrain || !this.tiled || k !== 3 || wci !== ci || x.half) return 0;
    return this.winoTileOf(n, ci, co, h, wd);
  }

  /**
   * Keeps a training forward conv's V for the weight gradient (keepV, set on training plans only;
   * not `skip`: f16 or scaled V), else releases it.
   */
  private keepOrRelease(
    x: GpuTensor,
    v: GpuTensor,
    m: WinogradTile,
    ppad: number,
    skip: boolean,
  ): void {
    if (!this.keepV || this.inBackward || skip || this.keptV.has(x)) {
      this.release(v);
    } else this.keptV.set(x, { v, m, ppad });
  }

  /**
   * The V kept for input x at tile m and ppad columns (then forgotten), or null; a kept V of
   * another tile or width is released.
   */
  private takeKeptV(x: GpuTensor, m: WinogradTile, ppad: number): GpuTensor | null {
    const k = this.keptV.get(x);
    if (!k) return null;
    this.keptV.delete(x);
    if (k.m === m && k.ppad === ppad) return k.v;
    this.release(k.v);
    return null;
  }

  /**
   * Weight gradient by Winograd: V = the input transform of x (or the forward's, keepV), dM = A dY
   * A^T per output tile, dU[xi] = dM[xi] V[xi]^T (split-K over the tiles), dW = G^T dU G summed
   * over the splits. f16 training (`scale` = gradScale(dy)): V and dM stored as f16, dM times S,
   * dW times 1/S.
   */
  private wgradWinograd(
    x: GpuTensor,
    dy: GpuTensor,
    dw: GpuTensor,
    m: WinogradTile,
    scale: GpuTensor | null,
  ): void {
    const [n, ci, h, wd] = x.shape, co = dw.shape[0];
    const k = this.wgradKernels(m, winoShapeKey(m, n, ci, co, h, wd), co, ci, scale !== null);
    const sc: Record<number, GPUBuffer> = scale ? { 10: scale.buffer } : {};
    const g = winogradGeometry(m, n, h, wd), ppad = winogradColumns(g.p);
    const kept = k.bytes === null ? this.takeKeptV(x, m, ppad) : null;
    const v = kept ?? this.pool.acquire([g.alpha, ci, 1, ppad], "nn.wino", k.bytes);
    if (!kept) {
      const pv = this.params([n, ci, co, h, wd, g.tw, g.tiles, ppad]);
      const vb = { 2: x.buffer, 3: v.buffer, 8: pv };
      this.recordPipeline(k.input, k.labels[0], vb, this.g1(n * ci * g.tiles));
    }
    const pd = this.params([n, co, ci, h, wd, g.tw, g.tiles, ppad]);
    const dm = this.pool.acquire([g.alpha, co, 1, ppad], "nn.wino", k.bytes);
    const db = { 2: dy.buffer, 3: dm.buffer, 8: pd, ...sc };
    this.recordPipeline(k.dout, k.labels[1], db, this.g1(n * co * g.tiles));
    const { gx, gy, splits, kchunk } = wgradGrid(k.tile, co, ci, g);
    const part = this.out([splits, g.alpha, co, ci]);
    const pg = this.params([co, ci, ppad, kchunk, g.p, g.alpha, 0, 0]);
    const gb = { 0: dm.buffer, 1: v.buffer, 2: part.buffer, 3: pg };
    this.recordPipeline(k.gemm, k.labels[2], gb, [gx, gy, splits * g.alpha]);
    this.release(v);
    this.release(dm);
    const pf = this.params([splits, ci, co, 0, 0, 0, 0, 0]);
    const fb = { 1: dw.buffer, 4: part.buffer, 8: pf, ...sc };
    this.recordPipeline(k.filterGrad, k.labels[3], fb, this.g1(co * ci));
    this.release(part);
  }

  /**
   * The four pipelines of a Winograd weight gradient (input and dM transforms, GEMM, filter
   * gradient), their labels, the GEMM's tile and the bytes of a V/dM element: f16 training's set
   * (wgradHalf) when `half`, else the kernel tables' with the tuned `vp` GEMM where there is one.
   */
  private wgradKernels(m: WinogradTile, key: string, co: number, ci: number, half: boolean) {
    if (half) {
      const k = this.wgradHalf.get(key);
      if (!k) {
        throw new KibitzError("bad_state", `f16 training: no weight-gradient kernels for ${key}`);
      }
      return {
        ...k,
        labels: [
          "winogradInputH",
          "winogradDoutH",
          `winogradWgradGemmH${k.variant.toUpperCase()}`,
          "winogradFilterGradH",
        ],
        bytes: (k.storage === "f16" ? 2 : 4) as 2 | 4 | null,
      };
    }
    const wide = co >= WIDE && ci >= WIDE;
    const kernel = wide ? "winogradWgradGemmWide" : "winogradWgradGemm";
    const choice = this.wgradChoice.get(key);
    const names = [`winogradInput${m}`, `winogradDout${m}`, kernel, `winogradFilterGrad${m}`];
    const [input, dout, gemm, filterGrad] = names.map((s) => this.kernels[s as KernelName]);
    return {
      tile: choice?.tile ?? wgradTileOf(this.kernels.tiles, co, ci),
      input,
      dout,
      gemm: choice?.pipeline ?? gemm,
      filterGrad,
      labels: [names[0], names[1], `${kernel}${choice?.name.toUpperCase() ?? ""}`, names[3]],
      bytes: null as 2 | 4 | null,
    };
  }

  /**
   * [S, 1/S] for storing `x` in f16 (shaders/nn/gradscale.wgsl): S the power of two that brings
   * max |x| to at most 8, computed on the GPU in the plan (no readback, no loss-scale state).
   */
  gradScale(x: GpuTensor): GpuTensor {
    const n = x.size;
    const parts = Math.max(1, Math.min(512, Math.ceil(n / 2048)));
    const part = this.out([parts]);
    const sc = this.out([2]);
    const p = this.params([n, parts, 0, 0]);
    this.record("gradAmax", { 0: x.buffer, 1: part.buffer, 3: p }, [parts, 1, 1]);
    this.record("gradScale", { 1: part.buffer, 2: sc.buffer, 3: p }, [1, 1, 1]);
    this.release(part);
    return sc;
  }

  /** A recorder-owned f32 tensor of zeros (a bias for epilogues that add none). */
  private zeros(size: number): GpuTensor {
    let t = this.zeroTensors.get(size);
    if (!t) {
      t = uploadTensor(this.ctx, [size], new Float32Array(size), "nn.zeros");
      this.zeroTensors.set(size, t);
    }
    return t;
  }

  /**
   * Inference convolution with its epilogue fused: y = act(conv(x, w) + bias[co] + res), the
   * residual `res` ([N, Co, H, W]) optional and the ReLU by flag (w, bias: a folded batch norm).
   */
  convFused(
    x: GpuTensor,
    w: GpuTensor,
    bias: GpuTensor,
    res: GpuTensor | null,
    relu: boolean,
    u: GpuTensor | null = null,
    next: ChainNext<GpuTensor> | null = null,
  ): GpuTensor {
    expectShape("fused conv bias", bias.shape, [w.shape[0]]);
    if (res) {
      expectShape("fused conv residual", res.shape, [x.shape[0], w.shape[0], ...x.shape.slice(2)]);
    }
    const fz = this.params([relu ? 1 : 0, res ? 1 : 0, 0, 0]);
    const [n, ci, h, wd] = x.shape, co = w.shape[0];
    const mixed = w.shape[2] === 3 && u ? this.mixedConv(n, ci, co, h, wd, u) : null;
    const wc = w.shape[2] === 3 && u && !mixed ? this.winoConv(n, ci, co, h, wd, u) : null;
    const plan = wc?.plan ?? null;
    u = wc?.u ?? u;
    if (this.unwritten.has(x) && !(plan && this.bridged.has(x))) {
      throw new KibitzError(
        "bad_state",
        "a bridged conv output was read by other than its consumer",
      );
    }
    if (mixed) return this.convMixed(x, mixed.u, mixed.k, bias, res ?? bias, fz);
    if (this.half) return this.convFusedHalf(x, w, bias, res, fz, u, plan, next);
    if (plan && u) return this.convWinograd(x, u, plan.m, bias, res ?? bias, fz, false, null, next);
    return this.convForward(x, w, { bias, res: res ?? bias, fz });
  }

  /**
   * How a fused 3x3 conv of this shape runs as Winograd in this recorder (its tile, tuned kernels,
   * GEMM columns and V/M storage), or null where it runs direct; `uRows`: the rows of the filter
   * transform it is given ((m+2)^2 of the tile it was computed for).
   */
  winoPlanOf(
    n: number,
    ci: number,
    co: number,
    h: number,
    wd: number,
    uRows: number,
  ): WinoPlan | null {
    const m = this.winoTileOf(n, ci, co, h, wd);
    return m && uRows === (m + 2) * (m + 2) ? this.planAt(m, n, ci, co, h, wd) : null;
  }

  /** The plan of an F(m) conv of this shape with this recorder's kernels for it. */
  private planAt(
    m: WinogradTile,
    n: number,
    ci: number,
    co: number,
    h: number,
    wd: number,
  ): WinoPlan {
    const choice = this.winoChoice.get(winoShapeKey(m, n, ci, co, h, wd));
    return winoPlan(m, choice, winogradGeometry(m, n, h, wd).p);
  }

  /**
   * The Winograd tile a fused 3x3 conv of this shape runs at in this recorder (0: direct, or mixed
   * tiles: see mixedChoice).
   */
  winoTileOf(n: number, ci: number, co: number, h: number, wd: number): 0 | WinogradTile {
    const half = this.half !== null;
    if (!half && !this.tiled) return 0;
    const key = directShapeKey(n, ci, co, h, wd, 3, half);
    if (this.mixedChoice.has(key)) return 0;
    return this.winoOverride.get(key) ?? chooseWinograd(this.winograd, n, h, wd, ci, co);
  }

  /**
   * A fused 3x3 conv's mixed-tile kernels and the filter transform they read (`u` or its twin with
   * the tiling's rows, otherFilters), or null where the conv does not run mixed tiles.
   */
  private mixedConv(
    n: number,
    ci: number,
    co: number,
    h: number,
    wd: number,
    u: GpuTensor,
  ): { k: MixedKernels; u: GpuTensor } | null {
    const k = this.mixedChoice.get(directShapeKey(n, ci, co, h, wd, 3, this.half !== null));
    if (!k) return null;
    const rows = k.tiling.alpha, at = this.filterRows(u, rows);
    if (!at) {
      throw new KibitzError(
        "bad_state",
        `mixed Winograd tiles on ${n}x${ci}x${h}x${wd}->${co}: no filter transform of ${rows} rows`,
      );
    }
    return { k, u: at };
  }

  /**
   * A fused 3x3 conv's Winograd plan and the filter transform it reads: `u` when it was computed
   * for the plan's tile, else u's twin at that tile (otherFilters); null where the conv runs
   * direct or no transform of its tile exists.
   */
  winoConv(
    n: number,
    ci: number,
    co: number,
    h: number,
    wd: number,
    u: GpuTensor,
  ): { plan: WinoPlan; u: GpuTensor } | null {
    const m = this.winoTileOf(n, ci, co, h, wd);
    if (!m) return null;
    const at = this.filterRows(u, (m + 2) * (m + 2));
    return at ? { plan: this.planAt(m, n, ci, co, h, wd), u: at } : null;
  }

  /** Filter transform u where it has `rows` rows, else its twin with that many (otherFilters). */
  private filterRows(u: GpuTensor, rows: number): GpuTensor | undefined {
    return u.shape[0] === rows ? u : this.otherFilters.get(u)?.find((t) => t.shape[0] === rows);
  }

  /**
   * The bridge that would join a fused conv producing [n, c, h, w] to the next one (c -> cNext),
   * given both plans, column-staged with `staged` where that fits; null where either is not an
   * unfused Winograd conv of the same tile, or the plane does not fit a workgroup.
   */
  bridgeSpec(
    from: WinoPlan | null,
    to: WinoPlan | null,
    h: number,
    wd: number,
    keepY: boolean,
    staged = false,
  ): BridgeSpec | null {
    if (!from || !to || from.m !== to.m || from.choice?.candidate.fused) return null;
    if (to.choice?.candidate.fused || !bridgeFits(from.m, h, wd)) return null;
    const splits = from.choice?.candidate.gemm?.splits;
    return {
      ...(staged && bridgeStagedFits(from.m, h, wd) ? { staged: true } : {}),
      m: from.m,
      act: this.half?.storage ?? "f32",
      mIn: from.transformed,
      vOut: to.transformed,
      h,
      w: wd,
      keepY,
      ...(splits ? { splits } : {}),
    };
  }

  /**
   * The f16-storage fused conv: x (cast to f16 first when it is f32: the stem's input), w and res
   * f16, f32 accumulation, y f16; Winograd (f16 transforms, f32 GEMMs) when u is given and chosen,
   * else the tiled GEMM (split-K partials in f32, summed with the epilogue by sumSplitsFusedH).
   */
  private convFusedHalf(
    x: GpuTensor,
    w: GpuTensor,
    bias: GpuTensor,
    res: GpuTensor | null,
    fz: GPUBuffer,
    u: GpuTensor | null,
    plan: WinoPlan | null,
    next: ChainNext<GpuTensor> | null,
  ): GpuTensor {
    if (!this.tiled) throw new KibitzError("bad_args", "f16 storage needs the tiled kernels");
    if (!w.half || (res && !res.half)) {
      throw new KibitzError("bad_args", "f16 fused conv: weight and residual must be f16 tensors");
    }
    const xh = x.half ? x : this.toHalf(x);
    const [n, ci, h, wd] = xh.shape, co = w.shape[0];
    if (plan && u) {
      const y = this.convWinograd(xh, u, plan.m, bias, res ?? bias, fz, true, null, next);
      if (xh !== x) this.release(xh);
      return y;
    }
    const { k, pad } = convGeometry(w.shape);
    expectShape("conv input channels", [ci], [w.shape[1]]);
    const y = this.outHalf([n, co, h, wd]);
    const p = this.params([n, ci, co, h, wd, k, pad, 0]);
    const resBuf = (res ?? bias).buffer;
    const cols = n * h * wd;
    const fused = {
      0: xh.buffer,
      1: w.buffer,
      2: y.buffer,
      3: p,
      4: bias.buffer,
      5: resBuf,
      6: fz,
    };
    if (this.thinConv && thinConvFits(k, co, cols)) {
      this.record("convThinFusedH", fused, this.g1(cols));
      if (xh !== x) this.release(xh);
      return y;
    }
    const wide = (this.tileChoice.get(directShapeKey(n, ci, co, h, wd, k, true)) ??
      defaultDirectTile(co, cols)) === "wide";
    const tile = wide ? this.kernels.tiles.wide : this.kernels.tiles.small;
    const { bm, bn } = tileSize(tile);
    const gx = Math.ceil(cols / bn), gy = Math.ceil(co / bm), kd = ci * k * k;
    const kind = wide ? "convForwardWide" : "convForward";
    let splits = this.splitChoice.get(directShapeKey(n, ci, co, h, wd, k, true)) ??
      defaultSplits(gx, gy, kd);
    const kchunk = splits > 1 ? Math.ceil(kd / splits / tile.bk) * tile.bk : 0;
    if (splits > 1) splits = Math.ceil(kd / kchunk);
    if (splits === 1) {
      this.record(`${kind}FusedH${kernelSize(k)}`, fused, [gx, gy, 1]);
    } else {
      const ps = this.params([n, ci, co, h, wd, k, pad, kchunk]);
      const part = this.out([splits, n, co, h, wd]);
      this.record(`${kind}PartH${kernelSize(k)}`, {
        0: xh.buffer,
        1: w.buffer,
        2: part.buffer,
        3: ps,
      }, [
        gx,
        gy,
        splits,
      ]);
      const ny = numel(y.shape);
      const pn = this.params([ny, splits, co, h * wd]);
      this.record("sumSplitsFusedH", {
        7: pn,
        8: part.buffer,
        9: bias.buffer,
        10: resBuf,
        11: y.buffer,
        12: fz,
      }, this.g1(ny));
      this.release(part);
    }
    if (xh !== x) this.release(xh);
    return y;
  }

  /** Writes the Winograd filter transform U [(m+2)^2, Co, Ci] of a 3x3 weight into u. */
  winogradFilter(w: GpuTensor, u: GpuTensor, m: WinogradTile): void {
    const [co, ci] = w.shape;
    expectShape("Winograd filter", u.shape, [(m + 2) * (m + 2), co, ci]);
    const p = this.params([0, ci, co, 0, 0, 0, 0, 0]);
    this.record(`winogradFilter${m}`, { 0: w.buffer, 1: u.buffer, 8: p }, this.g1(co * ci));
  }

  /** Writes the mixed-tile filter transform U [alpha, Co, Ci] of a 3x3 weight into u. */
  mixedFilter(w: GpuTensor, u: GpuTensor, k: MixedKernels): void {
    const [co, ci] = w.shape;
    expectShape("mixed Winograd filter", u.shape, [k.tiling.alpha, co, ci]);
    const p = this.params([0, ci, co, 0, 0, 0, 0, 0]);
    const bind = { 0: w.buffer, 1: u.buffer, 8: p };
    this.recordPipeline(k.filter, "wino.mixed.filter", bind, this.g1(co * ci));
  }

  /**
   * The mixed-tile conv alone (y = act(conv + bias + res) from x and its filter transform u), as
   * convWinogradFused: the tuner times it.
   */
  convMixedFused(
    x: GpuTensor,
    u: GpuTensor,
    k: MixedKernels,
    bias: GpuTensor,
    res: GpuTensor | null,
    relu: boolean,
  ): GpuTensor {
    const fz = this.params([relu ? 1 : 0, res ? 1 : 0, 0, 0]);
    return this.convMixed(x, u, k, bias, res ?? bias, fz);
  }

  /**
   * Winograd with mixed F(7x7)/F(6x6) tiles (src/nn/winograd_mixed.ts) and the fused epilogue:
   * input transform, the batched GEMM over the tiling's slices, output transform (column-staged for
   * a `-c` candidate); f16 activations where the recorder stores them (x cast first where it is
   * f32), V and M f32.
   */
  private convMixed(
    x: GpuTensor,
    u: GpuTensor,
    k: MixedKernels,
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
  ): GpuTensor {
    const half = this.half !== null;
    if (half !== (k.act !== "f32") || (half && res !== bias && !res.half)) {
      throw new KibitzError(
        "bad_args",
        "mixed Winograd tiles: kernels and tensors differ in storage",
      );
    }
    const xs = half && !x.half ? this.toHalf(x) : x;
    const [n, ci, h, wd] = xs.shape, co = u.shape[1];
    const t = k.tiling;
    if (t.h !== h || t.w !== wd) {
      throw new KibitzError(
        "shape_mismatch",
        `mixed Winograd tiles of ${t.h} x ${t.w} on ${h} x ${wd}`,
      );
    }
    expectShape("mixed Winograd filter", u.shape, [t.alpha, co, ci]);
    const ppad = variantColumns(k.candidate.gemm, n * t.tiles);
    const pp = this.params([n, ci, co, h, wd, 0, t.tiles, ppad]);
    const v = this.pool.acquire([t.alpha, ci, 1, ppad], "nn.wino");
    const name = `wino.mixed.${k.candidate.name}`;
    this.recordPipeline(
      k.input,
      `${name}.input`,
      { 2: xs.buffer, 3: v.buffer, 8: pp },
      this.g1(mixedThreads(t, n, ci)),
    );
    if (xs !== x) this.release(xs);
    const mm = this.pool.acquire([t.alpha, co, 1, ppad], "nn.wino");
    this.recordWinoGemm(k.gemm, `${name}.gemm`, k.candidate.gemm, u, v, mm, t.alpha);
    this.release(v);
    const y = half ? this.outHalf([n, co, h, wd]) : this.out([n, co, h, wd]);
    const threads = k.candidate.stagedOut;
    const [pipeline, entry, groups] = k.outputStaged && threads
      ? [k.outputStaged, "output-staged", mixedStagedGroups(this.ctx, t, threads, n, co)] as const
      : [k.output, "output", this.g1(mixedThreads(t, n, co))] as const;
    this.recordPipeline(
      pipeline,
      `${name}.${entry}`,
      { 4: mm.buffer, 5: bias.buffer, 6: res.buffer, 7: y.buffer, 8: pp, 9: fz },
      groups,
    );
    this.release(mm);
    return y;
  }

  /**
   * The Winograd conv alone (y = act(conv + bias + res) from x and the filter transform u): f16
   * storage when the recorder has f16 kernels (x must be f16 then); the autotuner times it, and
   * with `next` (see convFused) a chain of them.
   */
  convWinogradFused(
    x: GpuTensor,
    u: GpuTensor,
    m: WinogradTile,
    bias: GpuTensor,
    res: GpuTensor | null,
    relu: boolean,
    next: ChainNext<GpuTensor> | null = null,
  ): GpuTensor {
    const fz = this.params([relu ? 1 : 0, res ? 1 : 0, 0, 0]);
    return this.convWinograd(x, u, m, bias, res ?? bias, fz, this.half !== null, null, next);
  }

  /**
   * Winograd F(m x m, 3x3) forward with the fused epilogue: input transform, one GEMM per
   * transformed element (the batched tiled GEMM), output transform + bias/residual/ReLU.
   */
  private convWinograd(
    x: GpuTensor,
    u: GpuTensor,
    m: WinogradTile,
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
    half = false,
    scale: GpuTensor | null = null,
    next: ChainNext<GpuTensor> | null = null,
  ): GpuTensor {
    const [n, ci, h, wd] = x.shape, co = u.shape[1];
    const H = half ? "H" : "";
    const g = winogradGeometry(m, n, h, wd);
    const key = winoShapeKey(m, n, ci, co, h, wd);
    const choice = scale ? this.winoScaled.get(key) : this.winoChoice.get(key);
    if (scale && !choice) {
      throw new KibitzError("bad_state", `f16 training: no scaled Winograd kernels for ${key}`);
    }
    const from = winoPlan(m, choice, g.p), ppad = from.ppad;
    const pp = this.params([n, ci, co, h, wd, g.tw, g.tiles, ppad]);
    if (choice) {
      return this.convWinogradVariant(choice, x, u, bias, res, fz, half, pp, g, from, scale, next);
    }
    let v = this.takeBridged(x, ppad);
    if (!v) {
      v = this.out([g.alpha, ci, 1, ppad]);
      this.record(
        `winogradInput${H}${m}`,
        { 2: x.buffer, 3: v.buffer, 8: pp },
        this.g1(n * ci * g.tiles),
      );
    }
    const mm = this.convForward(v, u, null, true);
    this.keepOrRelease(x, v, m, ppad, half || scale !== null);
    const y =
      this.bridgeOut(mm, from, [n, co, h, wd], bias, res, fz, this.bridgeNext(key, next), key) ??
        this.winoOutput(
          (b, groups) => this.record(`winogradOutput${H}${m}`, b, groups),
          { 4: mm.buffer, 5: bias.buffer, 6: res.buffer, 8: pp, 9: fz },
          [n, co, h, wd],
          g.tiles,
          half,
        );
    this.release(mm);
    return y;
  }

  /**
   * Records a Winograd output transform through `emit` (the bindings but y's, which it adds as
   * binding 7, one thread a tile of each plane) and returns y.
   */
  private winoOutput(
    emit: (bindings: Record<number, GPUBuffer>, groups: [number, number, number]) => void,
    bindings: Record<number, GPUBuffer>,
    shape: [number, number, number, number],
    tiles: number,
    half: boolean,
  ): GpuTensor {
    const y = half ? this.outHalf(shape) : this.out(shape);
    emit({ ...bindings, 7: y.buffer }, this.g1(shape[0] * shape[1] * tiles));
    return y;
  }

  /** The chain's next conv where this conv (shape `key`) may end in a bridge, else null. */
  private bridgeNext(
    key: string,
    next: ChainNext<GpuTensor> | null,
  ): ChainNext<GpuTensor> | null {
    return this.unbridged.has(key) ? null : next;
  }

  /** The V a producer's bridge wrote for this conv input (then taken), or null. */
  private takeBridged(x: GpuTensor, ppad: number): GpuTensor | null {
    const b = this.bridged.get(x);
    if (!b) return null;
    this.bridged.delete(x);
    if (b.ppad !== ppad) {
      throw new KibitzError(
        "bad_state",
        `Winograd bridge wrote ${b.ppad} columns, the conv reads ${ppad}`,
      );
    }
    return b.v;
  }

  /**
   * Ends a Winograd conv (shape `key`) in a bridge to `next` where one is compiled for the pair
   * (see bridges; column-staged where the shape is in stagedBridges): records it, leaves the next
   * conv's V in `bridged` under the returned y (unwritten unless next.keepY), and returns y; null
   * where the output transform must run instead.
   */
  private bridgeOut(
    mm: GpuTensor,
    from: WinoPlan,
    shape: [number, number, number, number],
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
    next: ChainNext<GpuTensor> | null,
    key: string,
  ): GpuTensor | null {
    if (!next?.u) return null;
    const [n, c, h, wd] = shape;
    const to = this.winoConv(n, c, next.u.shape[1], h, wd, next.u)?.plan ?? null;
    const spec = this.bridgeSpec(from, to, h, wd, next.keepY, this.stagedBridges.has(key));
    const pipeline = spec && this.bridges.get(bridgeName(spec));
    if (!spec || !to || !pipeline) return null;
    const tb = to.transformed === "f32" ? null : to.transformed === "f16" ? 2 : 4;
    const alpha = (spec.m + 2) * (spec.m + 2);
    const v = this.pool.acquire([alpha, c, 1, to.ppad], "nn.wino", tb);
    const half = this.half !== null;
    let y: GpuTensor;
    if (next.keepY) {
      y = half ? this.outHalf(shape) : this.out(shape);
    } else {
      y = { shape: [...shape], buffer: v.buffer, size: numel(shape), half: half || undefined };
      this.unwritten.add(y);
    }
    const g = winogradGeometry(spec.m, n, h, wd);
    const bp = this.params([n, c, h, wd, g.tw, g.tiles, from.ppad, to.ppad]);
    const bind = bridgeBindings({
      mm: mm.buffer,
      bias: bias.buffer,
      res: res.buffer,
      y: next.keepY ? y.buffer : null,
      v: v.buffer,
      params: bp,
      fuse: fz,
    });
    this.recordPipeline(
      pipeline,
      `wino.bridge.${bridgeName(spec)}`,
      bind,
      bridgeGroups(this.ctx, n * c),
    );
    this.bridged.set(y, { v, ppad: to.ppad });
    return y;
  }

  /** convWinograd through a variant's kernels (transforms and GEMM, V and M f32 or f16). */
  private convWinogradVariant(
    k: WinoKernels,
    x: GpuTensor,
    u: GpuTensor,
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
    half: boolean,
    pp: GPUBuffer,
    g: { alpha: number; tiles: number; tw: number; p: number },
    from: WinoPlan,
    scale: GpuTensor | null,
    next: ChainNext<GpuTensor> | null,
  ): GpuTensor {
    const [n, ci, h, wd] = x.shape, co = u.shape[1];
    const ppad = from.ppad;
    if (k.scaled !== (scale !== null)) {
      throw new KibitzError("bad_state", "Winograd: scaled kernels need a scale and only they do");
    }
    const sc: Record<number, GPUBuffer> = scale ? { 10: scale.buffer } : {};
    if (k.candidate.fused) {
      return this.convWinogradFusedKernel(k, k.candidate.fused, x, u, bias, res, fz, half, pp, g);
    }
    const tb = k.transformed === "f32" ? null : k.transformed === "f16" ? 2 : 4;
    let v = this.takeBridged(x, ppad);
    if (!v) {
      v = this.pool.acquire([g.alpha, ci, 1, ppad], "nn.wino", tb);
      const threads = k.candidate.stagedIn;
      const [pipeline, entry, groups] = k.inputStaged && threads
        ? [k.inputStaged, "input-staged", stagedGroups(this.ctx, from.m, threads, ci, g.p)] as const
        : [k.input, "input", this.g1(n * ci * g.tiles)] as const;
      this.recordPipeline(
        pipeline,
        `wino.${k.candidate.name}.${entry}`,
        { 2: x.buffer, 3: v.buffer, 8: pp, ...sc },
        groups,
      );
    }
    // A split-K GEMM writes its partials side by side: M [alpha, splits, Co, ppad].
    const splits = k.candidate.gemm.splits ?? 1;
    const mm = this.pool.acquire([g.alpha * splits, co, 1, ppad], "nn.wino", tb);
    this.recordWinoGemm(
      k.gemm,
      `wino.${k.candidate.name}.gemm`,
      k.candidate.gemm,
      u,
      v,
      mm,
      g.alpha,
    );
    this.keepOrRelease(x, v, from.m, ppad, half || tb !== null || scale !== null);
    const key = winoShapeKey(from.m, n, ci, co, h, wd);
    const y = (scale ? null : this.bridgeOut(
      mm,
      from,
      [n, co, h, wd],
      bias,
      res,
      fz,
      this.bridgeNext(key, next),
      key,
    )) ??
      this.winoOutputStaged(k, from.m, mm, bias, res, fz, pp, [n, co, h, wd], g.p, half, sc) ??
      this.winoOutput(
        (b, groups) => this.recordPipeline(k.output, `wino.${k.candidate.name}.output`, b, groups),
        { 4: mm.buffer, 5: bias.buffer, 6: res.buffer, 8: pp, 9: fz, ...sc },
        [n, co, h, wd],
        g.tiles,
        half,
      );
    this.release(mm);
    return y;
  }

  /**
   * Records a tuned batched Winograd GEMM (variant `gemm`): M [alpha (x splits), Co, ppad] =
   * U [alpha, Co, Ci] V [alpha, Ci, ppad], Ci, Co and ppad read from U and V.
   */
  private recordWinoGemm(
    pipeline: GPUComputePipeline,
    label: string,
    gemm: WinoGemm,
    u: GpuTensor,
    v: GpuTensor,
    mm: GpuTensor,
    alpha: number,
  ): void {
    const [, co, ci] = u.shape, ppad = v.shape[3];
    this.recordPipeline(
      pipeline,
      label,
      { 0: u.buffer, 1: v.buffer, 2: mm.buffer, 3: this.params([ci, co, ppad / 4, 0]) },
      winoGemmGroups(gemm, co, ppad, alpha),
    );
  }

  /**
   * The staged output transform of a candidate that has one: column-staged (stagedOut) or
   * plane-staged (planeOut, fz._a = planes a workgroup); null where it has none, or where a plane's
   * tile grid does not fit the plane-staged kernel's workgroup memory.
   */
  private winoOutputStaged(
    k: WinoKernels,
    m: WinogradTile,
    mm: GpuTensor,
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
    pp: GPUBuffer,
    shape: [number, number, number, number],
    p: number,
    half: boolean,
    sc: Record<number, GPUBuffer>,
  ): GpuTensor | null {
    const [n, co, h, wd] = shape;
    const threads = k.candidate.stagedOut;
    let run: [GPUComputePipeline, string, GPUBuffer, [number, number, number]];
    if (k.outputStaged && threads) {
      run = [k.outputStaged, "output-staged", fz, stagedGroups(this.ctx, m, threads, co, p)];
    } else {
      const pg = outputPlanesPerGroup(m, h, wd), words = this.paramWords.get(fz);
      if (!k.outputPlanes || !pg || !words) return null;
      const [relu, hasRes] = words;
      const fzp = this.params([relu, hasRes, pg, 0]);
      run = [
        k.outputPlanes,
        "output-planes",
        fzp,
        bridgeGroups(this.ctx, Math.ceil((n * co) / pg)),
      ];
    }
    const [pipeline, entry, fuse, groups] = run;
    const y = half ? this.outHalf(shape) : this.out(shape);
    this.recordPipeline(
      pipeline,
      `wino.${k.candidate.name}.${entry}`,
      { 4: mm.buffer, 5: bias.buffer, 6: res.buffer, 7: y.buffer, 8: pp, 9: fuse, ...sc },
      groups,
    );
    return y;
  }

  /**
   * convWinograd through a fused kernel: M stays in the workgroup; V is built in its tile load
   * (`f.input`) or by the input-transform kernel first.
   */
  private convWinogradFusedKernel(
    k: WinoKernels,
    f: WinoFused,
    x: GpuTensor,
    u: GpuTensor,
    bias: GpuTensor,
    res: GpuTensor,
    fz: GPUBuffer,
    half: boolean,
    pp: GPUBuffer,
    g: { alpha: number; tiles: number; tw: number; p: number },
  ): GpuTensor {
    const [n, ci, h, wd] = x.shape, co = u.shape[1];
    const m = (Math.sqrt(g.alpha) - 2) as WinogradTile;
    const ppad = winogradColumns(g.p);
    let src = x;
    if (!f.input) {
      src = this.pool.acquire([g.alpha, ci, 1, ppad], "nn.wino");
      this.recordPipeline(
        k.input,
        `wino.${k.candidate.name}.input`,
        { 2: x.buffer, 3: src.buffer, 8: pp },
        this.g1(n * ci * g.tiles),
      );
    }
    const y = half ? this.outHalf([n, co, h, wd]) : this.out([n, co, h, wd]);
    // The relu / residual flags of the epilogue uniform, in the fused kernel's own params.
    const [relu, hasRes] = this.paramWords.get(fz) ?? [0, 0];
    const fp = this.params([n, ci, co, h, wd, g.tw, g.tiles, g.p, ppad / 4, relu, hasRes, 0]);
    this.recordPipeline(k.gemm, `wino.${k.candidate.name}.gemm`, {
      0: u.buffer,
      1: src.buffer,
      2: bias.buffer,
      3: res.buffer,
      4: y.buffer,
      5: fp,
    }, fusedGroups(f, m, n, co, h, wd));
    if (src !== x) this.release(src);
    return y;
  }

  /**
   * Folds inference batch norm into a convolution: wf = w s, bf = beta - mean s per output
   * channel, s = gamma / sqrt(var + eps).
   */
  foldBn(w: GpuTensor, bn: BnParams<GpuTensor>, wf: GpuTensor, bf: GpuTensor): void {
    const n = numel(w.shape), co = w.shape[0];
    const p = this.params([n, n / co, co, 0]);
    this.record("bnFold", {
      0: w.buffer,
      1: bn.gamma.buffer,
      2: bn.beta.buffer,
      3: bn.runMean.buffer,
      4: bn.runVar.buffer,
      5: wf.buffer,
      6: bf.buffer,
      7: p,
    }, this.g1(n));
  }

  /**
   * The forward GEMM; `batched`: x = [N, Ci, 1, Q] with w = [N, Co, Ci] (one weight per image,
   * Q a multiple of 128: the Winograd GEMMs).
   */
  private convForward(
    x: GpuTensor,
    w: GpuTensor,
    fuse: { bias: GpuTensor; res: GpuTensor; fz: GPUBuffer } | null,
    batched = false,
  ): GpuTensor {
    if (batched && !this.tiled) {
      throw new KibitzError("bad_args", "Winograd GEMMs need the tiled kernels");
    }
    const { k, pad } = batched ? { k: 1, pad: 0 } : convGeometry(w.shape);
    const [n, ci, h, wd] = x.shape;
    const co = batched ? w.shape[1] : w.shape[0];
    expectShape("conv input channels", [ci], [batched ? w.shape[2] : w.shape[1]]);
    const y = this.out([n, co, h, wd]);
    const p = this.params([n, ci, co, h, wd, k, pad, 0]);
    const extra: Record<number, GPUBuffer> = fuse
      ? { 4: fuse.bias.buffer, 5: fuse.res.buffer, 6: fuse.fz }
      : {};
    if (!this.tiled) {
      const bind = { 0: x.buffer, 1: w.buffer, 2: y.buffer, 3: p, ...extra };
      const kernel = fuse ? "convForwardFusedDirect" : "convForwardDirect";
      this.record(kernel, bind, this.g1(n * co * h * wd));
      return y;
    }
    const cols = n * h * wd;
    if (fuse && !batched && this.thinConv && thinConvFits(k, co, cols)) {
      this.record(
        "convThinFused",
        { 0: x.buffer, 1: w.buffer, 2: y.buffer, 3: p, ...extra },
        this.g1(cols),
      );
      return y;
    }
    const choice = batched ? undefined : this.tileChoice.get(directShapeKey(n, ci, co, h, wd, k));
    const wide = (choice ?? defaultDirectTile(co, cols)) === "wide";
    const tile = wide ? this.kernels.tiles.wide : this.kernels.tiles.small;
    const { bm, bn } = tileSize(tile);
    const gx = Math.ceil(cols / bn), gy = Math.ceil(co / bm), kd = ci * k * k;
    const kernel = batched
      ? (wide ? "winogradGemmWide" : "winogradGemm")
      : `${wide ? "convForwardWide" : "convForward"}${fuse ? "Fused" : ""}${
        kernelSize(k)
      }` as const;
    // Small batches give too few output tiles to fill the GPU: split the K reduction across
    // workgroups (each writes its own copy of Y) and sum the copies.
    let splits =
      (batched ? undefined : this.splitChoice.get(directShapeKey(n, ci, co, h, wd, k))) ??
        defaultSplits(gx, gy, kd);
    const kchunk = splits > 1 ? Math.ceil(kd / splits / tile.bk) * tile.bk : 0;
    if (splits > 1) splits = Math.ceil(kd / kchunk);
    if (splits === 1) {
      this.record(kernel, { 0: x.buffer, 1: w.buffer, 2: y.buffer, 3: p, ...extra }, [gx, gy, 1]);
      return y;
    }
    const ps = this.params([n, ci, co, h, wd, k, pad, kchunk]);
    const part = this.out([splits, n, co, h, wd]);
    const bind = { 0: x.buffer, 1: w.buffer, 2: part.buffer, 3: ps, ...extra };
    this.record(kernel, bind, [gx, gy, splits]);
    const ny = numel(y.shape);
    if (fuse) {
      const pn = this.params([ny, splits, co, h * wd]);
      this.record("sumSplitsFused", {
        7: pn,
        8: part.buffer,
        9: fuse.bias.buffer,
        10: fuse.res.buffer,
        11: y.buffer,
        12: fuse.fz,
      }, this.g1(ny));
    } else {
      const pn = this.params([ny, splits, 0, 0]);
      this.record("sumSplits", { 0: part.buffer, 2: y.buffer, 3: pn }, this.g1(ny));
    }
    this.release(part);
    return y;
  }

  /** Weight gradient by the wgrad GEMM; input gradient as a forward conv with the flipped weight. */
  conv2dBackward(x: GpuTensor, w: GpuTensor, dy: GpuTensor, dw: GpuTensor, needDx: boolean) {
    const { k, pad } = convGeometry(w.shape);
    const [n, ci, h, wd] = x.shape;
    const co = w.shape[0];
    const p = this.params([n, ci, co, h, wd, k, pad, 0]);
    const kd = ci * k * k, cols = n * h * wd;
    const fm = this.trainWinograd(x, w);
    const m = fm && (this.wgradOverride.get(directShapeKey(n, ci, co, h, wd, 3, false)) ?? fm);
    // f16 training: one scale of dY for both of its f16 uses (dM and the input gradient's V).
    const scale = m && this.trainHalf ? this.gradScale(dy) : null;
    if (m) this.wgradWinograd(x, dy, dw, m, scale);
    else if (!this.tiled) {
      const bind = { 0: x.buffer, 1: dy.buffer, 2: dw.buffer, 3: p };
      this.record("convWgradDirect", bind, this.g1(co * kd));
    } else this.wgradTiled(x, dy, dw, [n, ci, co, h, wd, k, pad], kd, cols);
    if (!needDx) {
      if (scale) this.release(scale);
      return null;
    }
    const wt = this.out([ci, co, k, k]);
    this.record("convFlip", { 0: w.buffer, 2: wt.buffer, 3: p }, this.g1(numel(w.shape)));
    this.inBackward = true;
    const dx = this.conv2dScaled(dy, wt, scale);
    this.inBackward = false;
    this.release(wt);
    if (scale) this.release(scale);
    return dx;
  }

  private wgradTiled(
    x: GpuTensor,
    dy: GpuTensor,
    dw: GpuTensor,
    [n, ci, co, h, wd, k, pad]: number[],
    kd: number,
    cols: number,
  ): void {
    const wide = co >= WIDE && kd >= WIDE;
    const { bm, bn } = tileSize(wide ? this.kernels.tiles.wide : this.kernels.tiles.small);
    const gx = Math.ceil(kd / bn), gy = Math.ceil(co / bm);
    // Split the long reduction (batch x pixels) when the output alone gives too few workgroups.
    let splits = Math.max(
      1,
      Math.min(Math.floor(SPLIT_TARGET / (gx * gy)), Math.floor(cols / SPLIT_MIN)),
    );
    const kchunk = splits > 1 ? Math.ceil(cols / splits / 16) * 16 : 0;
    if (splits > 1) splits = Math.ceil(cols / kchunk);
    const pw = this.params([n, ci, co, h, wd, k, pad, kchunk]);
    const kernel = `${wide ? "convWgradWide" : "convWgrad"}${kernelSize(k)}` as const;
    if (splits === 1) {
      this.record(kernel, { 0: x.buffer, 1: dy.buffer, 2: dw.buffer, 3: pw }, [gx, gy, 1]);
    } else {
      const part = this.out([splits, co, kd]);
      this.record(kernel, { 0: x.buffer, 1: dy.buffer, 2: part.buffer, 3: pw }, [gx, gy, splits]);
      const ps = this.params([co * kd, splits, 0, 0]);
      this.record("sumSplits", { 0: part.buffer, 2: dw.buffer, 3: ps }, this.g1(co * kd));
      this.release(part);
    }
  }

  /** Batch norm: a per-channel stats kernel (batch or running), then an elementwise apply. */
  batchNorm(x: GpuTensor, bn: BnParams<GpuTensor>, train: boolean) {
    const [n, c, h, wd] = x.shape;
    const p = this.params([n, c, h * wd, 0]);
    const stats = this.bnStats(x, bn, train);
    const y = this.out(x.shape);
    this.record(
      "bnApply",
      { 0: x.buffer, 2: bn.gamma.buffer, 3: bn.beta.buffer, 4: stats.buffer, 7: y.buffer, 10: p },
      this.g1(numel(x.shape)),
    );
    return { y, stats };
  }

  /** Records batch norm's per-channel [mean, invStd] (batch statistics or running averages). */
  private bnStats(x: GpuTensor, bn: BnParams<GpuTensor>, train: boolean): GpuTensor {
    const [n, c, h, wd] = x.shape;
    const p = this.params([n, c, h * wd, 0]);
    const stats = this.out([2, c]);
    if (train) {
      this.record(
        this.tiled ? "bnBatchStats" : "bnBatchStatsDirect",
        { 0: x.buffer, 4: stats.buffer, 5: bn.runMean.buffer, 6: bn.runVar.buffer, 10: p },
        this.tiled ? [c, 1, 1] : [Math.ceil(c / 64), 1, 1],
      );
    } else {
      this.record(
        "bnRunningStats",
        { 4: stats.buffer, 5: bn.runMean.buffer, 6: bn.runVar.buffer, 10: p },
        [Math.ceil(c / 64), 1, 1],
      );
    }
    return stats;
  }

  /**
   * Batch norm, residual add and ReLU: the stats kernel as batchNorm's, then one elementwise pass
   * y = max(bn(x) + res, 0) (bnApplyRelu, labelled bnApplyAddRelu with a residual) where the
   * unfused graph ran bnApply, add and relu (three reads and writes of the activation).
   */
  batchNormRelu(x: GpuTensor, bn: BnParams<GpuTensor>, train: boolean, res: GpuTensor | null) {
    const [n, c, h, wd] = x.shape;
    if (res) expectShape("batch norm residual", res.shape, x.shape);
    const stats = this.bnStats(x, bn, train);
    const p = this.params([n, c, h * wd, res ? 1 : 0]);
    const y = this.out(x.shape);
    const v4 = (h * wd) % 4 === 0;
    this.recordPipeline(
      v4 ? this.kernels.bnApplyRelu4 : this.kernels.bnApplyRelu,
      res ? "bnApplyAddRelu" : "bnApplyRelu",
      {
        0: x.buffer,
        2: bn.gamma.buffer,
        3: bn.beta.buffer,
        4: stats.buffer,
        7: y.buffer,
        10: p,
        11: (res ?? x).buffer,
      },
      this.g1(numel(x.shape) / (v4 ? 4 : 1)),
    );
    return { y, stats };
  }

  /**
   * Backward of batchNormRelu in two dispatches: per-channel sums of dz = (dy + dy2) where y > 0
   * (formed on the fly, never stored), then dx (and dz when keepDz) in one elementwise pass, where
   * the unfused graph ran add, reluBackward, bnBackwardReduce and bnBackwardApply.
   */
  batchNormReluBackward(
    x: GpuTensor,
    y: GpuTensor,
    dy: GpuTensor,
    dy2: GpuTensor | null,
    stats: GpuTensor,
    gamma: GpuTensor,
    dgamma: GpuTensor,
    dbeta: GpuTensor,
    keepDz: boolean,
  ): { dx: GpuTensor; dz: GpuTensor | null } {
    const [n, c, h, wd] = x.shape;
    expectShape("batch norm relu output", y.shape, x.shape);
    expectShape("batch norm relu dy", dy.shape, x.shape);
    if (dy2) expectShape("batch norm relu dy2", dy2.shape, x.shape);
    const p = this.params([n, c, h * wd, (dy2 ? 1 : 0) | (keepDz ? 2 : 0)]);
    const coef = this.out([4, c]);
    const two = (dy2 ?? dy).buffer;
    this.record(
      this.tiled ? "bnReluBackwardReduce" : "bnReluBackwardReduceDirect",
      {
        0: x.buffer,
        1: dy.buffer,
        4: stats.buffer,
        8: dgamma.buffer,
        9: dbeta.buffer,
        10: p,
        11: y.buffer,
        12: two,
        13: coef.buffer,
      },
      this.tiled ? [c, 1, 1] : [Math.ceil(c / 64), 1, 1],
    );
    const dx = this.out(x.shape);
    const dz = keepDz ? this.out(x.shape) : null;
    const v4 = (h * wd) % 4 === 0;
    this.recordPipeline(
      v4 ? this.kernels.bnReluBackwardApply4 : this.kernels.bnReluBackwardApply,
      dy2 ? "bnAddReluBackwardApply" : "bnReluBackwardApply",
      {
        0: x.buffer,
        1: dy.buffer,
        2: gamma.buffer,
        7: dx.buffer,
        10: p,
        11: y.buffer,
        12: two,
        13: coef.buffer,
        14: (dz ?? this.scratch()).buffer,
      },
      this.g1(numel(x.shape) / (v4 ? 4 : 1)),
    );
    this.release(coef);
    return { dx, dz };
  }

  /** A recorder-owned 4-value tensor (one vec4) bound where a kernel's optional output is off. */
  private scratch(): GpuTensor {
    return this.scratchTensor ??= uploadTensor(this.ctx, [4], new Float32Array(4), "nn.scratch");
  }

  /** Batch-norm backward: per-channel sums, then the elementwise dx. */
  batchNormBackward(
    x: GpuTensor,
    dy: GpuTensor,
    stats: GpuTensor,
    gamma: GpuTensor,
    dgamma: GpuTensor,
    dbeta: GpuTensor,
  ): GpuTensor {
    const [n, c, h, wd] = x.shape;
    const p = this.params([n, c, h * wd, 0]);
    this.record(
      this.tiled ? "bnBackwardReduce" : "bnBackwardReduceDirect",
      { 0: x.buffer, 1: dy.buffer, 4: stats.buffer, 8: dgamma.buffer, 9: dbeta.buffer, 10: p },
      this.tiled ? [c, 1, 1] : [Math.ceil(c / 64), 1, 1],
    );
    const dx = this.out(x.shape);
    this.record(
      "bnBackwardApply",
      {
        0: x.buffer,
        1: dy.buffer,
        2: gamma.buffer,
        4: stats.buffer,
        7: dx.buffer,
        8: dgamma.buffer,
        9: dbeta.buffer,
        10: p,
      },
      this.g1(numel(x.shape)),
    );
    return dx;
  }

  private elementwise(kernel: KernelName, a: GpuTensor, b: GpuTensor | null): GpuTensor {
    const n = numel(a.shape);
    if (b) expectShape(kernel, b.shape, a.shape);
    const y = this.out(a.shape);
    const p = this.params([n, 0, 0, 0]);
    const bind: Record<number, GPUBuffer> = { 0: a.buffer, 2: y.buffer, 3: p };
    if (b) bind[1] = b.buffer;
    this.record(kernel, bind, this.g1(n));
    return y;
  }

  /** ReLU. */
  relu(x: GpuTensor): GpuTensor {
    return this.elementwise("relu", x, null);
  }
  /** ReLU backward from its output. */
  reluBackward(y: GpuTensor, dy: GpuTensor): GpuTensor {
    return this.elementwise("reluBackward", y, dy);
  }
  /** Elementwise add. */
  add(a: GpuTensor, b: GpuTensor): GpuTensor {
    return this.elementwise("add", a, b);
  }

  private matmul(
    a: GpuTensor,
    b: GpuTensor,
    c: GpuTensor,
    [m, n, k]: [number, number, number],
    strides: [number, number, number, number],
    bias: GpuTensor | null,
  ): void {
    const p = this.params([m, n, k, ...strides, bias ? 1 : 0]);
    const bind: Record<number, GPUBuffer> = { 0: a.buffer, 1: b.buffer, 2: c.buffer, 3: p };
    if (bias) bind[4] = bias.buffer;
    if (m <= THIN && k >= ROWS_MIN_K && strides[1] === 1 && strides[2] === 1) {
      bind[4] = (bias ?? this.zeros(n)).buffer;
      this.record("matmulRows", bind, workgroups1d(this.ctx, n, 1));
    } else if (!this.tiled || m <= THIN || k <= THIN) {
      this.record(bias ? "matmulThinBias" : "matmulThin", bind, this.g1(m * n));
    } else if (bias && this.fcNt.has(fcShapeKey(m, n, k)) && fcNtFits(m, n, k, strides)) {
      const tw = this.kernels.tiles.matmul;
      const fc = {
        0: a.buffer,
        1: b.buffer,
        2: c.buffer,
        3: this.params([m, n, k, 0]),
        4: bias.buffer,
      };
      this.record("fcNt", fc, [Math.ceil(n / (8 * tw)), Math.ceil(m / (4 * tw)), 1]);
    } else {
      const tile = 4 * this.kernels.tiles.matmul;
      const groups: [number, number, number] = [Math.ceil(n / tile), Math.ceil(m / tile), 1];
      this.record(bias ? "matmulBias" : "matmul", bind, groups);
    }
  }

  /** Fully connected layer as a tiled GEMM with the bias fused. */
  linear(x: GpuTensor, w: GpuTensor, bias: GpuTensor): GpuTensor {
    if (x.half) {
      const full = this.toFull(x);
      const y = this.linear(full, w, bias);
      this.release(full);
      return y;
    }
    const [out, inp] = w.shape;
    const b = x.shape[0];
    expectShape("fully connected input", [numel(x.shape)], [b * inp]);
    const y = this.out([b, out]);
    this.matmul(x, w, y, [b, out, inp], [inp, 1, 1, inp], bias);
    return y;
  }

  /** Fully connected backward: dx = dy w, dw = dy^T x, dbias = column sums of dy. */
  linearBackward(
    x: GpuTensor,
    w: GpuTensor,
    dy: GpuTensor,
    dw: GpuTensor,
    dbias: GpuTensor,
    needDx: boolean,
  ): GpuTensor | null {
    const [out, inp] = w.shape;
    const b = x.shape[0];
    this.matmul(dy, x, dw, [out, inp, b], [1, out, inp, 1], null);
    const p = this.params([0, b, out, 0]);
    this.record("colsum", { 0: dy.buffer, 2: dbias.buffer, 3: p }, this.g1(out));
    if (!needDx) return null;
    const dx = this.out(x.shape);
    this.matmul(dy, w, dx, [b, inp, out], [out, 1, inp, 1], null);
    return dx;
  }

  /**
   * Masked softmax, with cross-entropy and its gradient when a target is given; `mask` holds the
   * legal moves packed as bits, [rows, maskWords(cols)] words (src/nn/mask_bits.ts).
   */
  policyLoss(logits: GpuTensor, mask: GpuTensor, target: GpuTensor | null) {
    const [rows, cols] = logits.shape;
    expectShape("policy mask (packed bits)", mask.shape, [rows, maskWords(cols)]);
    const p = this.params([rows, cols, 0, 0]);
    const probs = this.out(logits.shape);
    // One workgroup per row (tiled family) or one invocation per row (direct family).
    const groups: [number, number, number] = this.tiled
      ? [rows, 1, 1]
      : [Math.ceil(rows / 64), 1, 1];
    if (!target) {
      const bind = { 0: logits.buffer, 1: mask.buffer, 3: probs.buffer, 6: p };
      this.record(this.tiled ? "softmax" : "softmaxDirect", bind, groups);
      return { probs, loss: null, dlogits: null };
    }
    expectShape("policy target", target.shape, logits.shape);
    const loss = this.out([rows]);
    const dlogits = this.out(logits.shape);
    this.record(
      this.tiled ? "policyLoss" : "policyLossDirect",
      {
        0: logits.buffer,
        1: mask.buffer,
        2: target.buffer,
        3: probs.buffer,
        4: loss.buffer,
        5: dlogits.buffer,
        6: p,
      },
      groups,
    );
    return { probs, loss, dlogits };
  }

  /** The uniform of the cells kernels for q [B, planes, H, W] and table [B, W, 4]. */
  private cellParams(q: GpuTensor, table: GpuTensor, moves: number, nbias: number, n: number) {
    const b = q.shape[0], width = table.shape[1];
    expectShape("cell move table", table.shape, [b, width, 4]);
    return this.params([b, width, moves, numel(q.shape) / b, nbias, n, 0, 0]);
  }

  /** Records out[0 .. n) = 0 (cellZero). */
  private zeroFill(out: GpuTensor, p: GPUBuffer, n: number): void {
    this.record("cellZero", { 7: p, 8: out.buffer }, this.g1(n));
  }

  /**
   * Policy logits gathered from per-cell head planes q by the move table (cells head): the logits
   * zero-filled, then one invocation per table entry writes its move's logit (each move index at
   * most once per position, so no two invocations write one logit). An f16 q is cast to f32 first.
   */
  cellLogits(q: GpuTensor, table: GpuTensor, bias: GpuTensor, moves: number): GpuTensor {
    if (q.half) {
      const full = this.toFull(q);
      const y = this.cellLogits(full, table, bias, moves);
      this.release(full);
      return y;
    }
    const b = q.shape[0], width = table.shape[1];
    const logits = this.out([b, moves]);
    const p = this.cellParams(q, table, moves, bias.size, b * moves);
    this.zeroFill(logits, p, b * moves);
    const bind = { 0: q.buffer, 1: table.buffer, 2: bias.buffer, 3: logits.buffer, 7: p };
    this.record("cellLogits", bind, this.g1(b * width));
    return logits;
  }

  /**
   * Each channel's mean over the board, x [B, C, H, W] -> [B, C] (the pooled value head): a
   * workgroup per (b, c) row with a fixed tree reduction in the tiled family, an invocation per
   * row summing it serially in the direct one; both sum in a fixed order (deterministic). An f16 x
   * is cast to f32 first.
   */
  meanPool(x: GpuTensor): GpuTensor {
    if (x.half) {
      const full = this.toFull(x);
      const y = this.meanPool(full);
      this.release(full);
      return y;
    }
    if (x.shape.length !== 4) {
      throw new KibitzError(
        "shape_mismatch",
        `mean pool input: shape [${x.shape.join(", ")}], expected [B, C, H, W]`,
      );
    }
    const [b, c, h, wd] = x.shape;
    const rows = b * c, y = this.out([b, c]);
    const p = this.params([rows, h * wd, rows, 0]);
    const bind = { 0: x.buffer, 1: y.buffer, 4: p };
    if (this.tiled) this.record("meanPool", bind, workgroups1d(this.ctx, rows, 1));
    else this.record("meanPoolDirect", bind, this.g1(rows));
    return y;
  }

  /** Backward of meanPool: dx [B, C, H, W] = dy[b, c] / (H x W), one invocation per dx value. */
  meanPoolBackward(x: GpuTensor, dy: GpuTensor): GpuTensor {
    const [b, c, h, wd] = x.shape;
    expectShape("mean pool gradient", dy.shape, [b, c]);
    const dx = this.out(x.shape), n = numel(x.shape);
    const p = this.params([b * c, h * wd, n, 0]);
    this.record("meanPoolBackward", { 2: dy.buffer, 3: dx.buffer, 4: p }, this.g1(n));
    return dx;
  }

  /**
   * Backward of cellLogits: dbias by a reduction per slot (a workgroup per slot in the tiled
   * family, an invocation per slot in the direct one), and dq zero-filled then accumulated by one
   * invocation per position over its entries (writes stay within that position's planes: no races).
   */
  cellLogitsBackward(
    q: GpuTensor,
    table: GpuTensor,
    dlogits: GpuTensor,
    dbias: GpuTensor,
  ): GpuTensor {
    const b = q.shape[0], moves = dlogits.shape[1], nbias = dbias.size;
    expectShape("cell logits gradient", dlogits.shape, [b, moves]);
    const dq = this.out(q.shape);
    const p = this.cellParams(q, table, moves, nbias, dq.size);
    this.zeroFill(dq, p, dq.size);
    this.record(
      "cellDq",
      { 1: table.buffer, 4: dlogits.buffer, 5: dq.buffer, 7: p },
      this.g1(b),
    );
    const bind = { 1: table.buffer, 4: dlogits.buffer, 6: dbias.buffer, 7: p };
    if (this.tiled) this.record("cellBiasGrad", bind, [nbias, 1, 1]);
    else this.record("cellBiasGradDirect", bind, [Math.ceil(nbias / 64), 1, 1]);
    return dq;
  }

  /** tanh value, with squared error and its gradient when a target is given. */
  valueLoss(z: GpuTensor, target: GpuTensor | null) {
    const rows = z.shape[0];
    const p = this.params([rows, 1, 0, 0]);
    const value = this.out([rows, 1]);
    const groups: [number, number, number] = [Math.ceil(rows / 64), 1, 1];
    if (!target) {
      this.record("valueOnly", { 0: z.buffer, 3: value.buffer, 6: p }, groups);
      return { value, loss: null, dz: null };
    }
    const loss = this.out([rows]);
    const dz = this.out([rows, 1]);
    this.record(
      "valueLoss",
      { 0: z.buffer, 2: target.buffer, 3: value.buffer, 4: loss.buffer, 5: dz.buffer, 6: p },
      groups,
    );
    return { value, loss, dz };
  }

  /** SGD step reading the shared hyper-parameter uniform (rewritten each step by the trainer). */
  sgd(p: GpuTensor, g: GpuTensor, v: GpuTensor, _h: SgdHyper): void {
    const n = numel(p.shape);
    const u = this.params([n, 0, 0, 0]);
    this.record(
      "sgdStep",
      { 0: p.buffer, 1: g.buffer, 2: v.buffer, 3: u, 4: this.hyper },
      this.g1(n),
    );
  }

  /**
   * Records sum(p^2) as SUMSQ_GROUPS partials in out[slot * SUMSQ_GROUPS ..] (their sum is the
   * tensor's; every partial is written, so the reader may add the whole buffer).
   */
  sumSquares(p: GpuTensor, out: GpuTensor, slot: number): void {
    if (out.size < (slot + 1) * SUMSQ_GROUPS) {
      throw new KibitzError(
        "bad_shape",
        `sum of squares: slot ${slot} needs ${
          (slot + 1) * SUMSQ_GROUPS
        } partials, out has ${out.size}`,
      );
    }
    const u = this.params([numel(p.shape), slot, 0, 0]);
    this.record("sumsq", { 0: p.buffer, 3: u, 5: out.buffer }, [SUMSQ_GROUPS, 1, 1]);
  }

  /** Returns a dead tensor's buffer to the pool. */
  release(t: GpuTensor): void {
    // An unwritten bridge output shares its V's buffer, which its consumer releases.
    if (!this.unwritten.has(t)) this.pool.release(t);
  }

  /**
   * Encodes every recorded op (but op `skip`: halfInput's cast where the caller uploaded halves)
   * into one compute pass, skipping the pipeline and bind group calls that would set what is
   * already set (each API call costs the host a crossing into the runtime).
   */
  encode(pass: GPUComputePassEncoder, skip = -1): void {
    let pipeline: GPUComputePipeline | null = null;
    let group: GPUBindGroup | null = null;
    for (let i = 0; i < this.ops.length; i++) {
      if (i === skip) continue;
      const op = this.ops[i];
      if (op.pipeline !== pipeline) {
        pass.setPipeline(pipeline = op.pipeline);
        group = null; // a bind group is made for its pipeline's own ("auto") layout
      }
      if (op.bindGroup !== group) pass.setBindGroup(0, group = op.bindGroup);
      pass.dispatchWorkgroups(op.groups[0], op.groups[1], op.groups[2]);
    }
  }

  /** Encodes and submits the plan. */
  submit(): void {
    this.ctx.device.queue.submit([this.encoded().finish()]);
  }

  /**
   * A command encoder holding the plan's pass (after what `enc` already holds), for a caller to
   * append copies before submitting (`skip`: see encode).
   */
  encoded(
    enc: GPUCommandEncoder = this.ctx.device.createCommandEncoder(),
    skip = -1,
  ): GPUCommandEncoder {
    const pass = enc.beginComputePass();
    this.encode(pass, skip);
    pass.end();
    return enc;
  }

  /** Frees the plan's uniform buffers (pooled tensors belong to the pool). */
  destroy(): void {
    for (const u of this.uniforms) u.destroy();
    this.uniforms.length = 0;
    for (const t of this.zeroTensors.values()) t.buffer.destroy();
    this.zeroTensors.clear();
    this.scratchTensor?.buffer.destroy();
    this.scratchTensor = null;
  }
}
