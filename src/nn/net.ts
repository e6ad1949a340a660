import { isKibitzError, KibitzError } from "../errors.ts";
import { describeAdapter, deviceFailure, type GpuContext, lostDeviceError } from "../gpu/device.ts";
import { withErrorScopes } from "../gpu/error_scope.ts";
import { writeBuffer } from "../gpu/buffers.ts";
import type { SgdHyper } from "./backend.ts";
import type { NetConfig } from "./config.ts";
import { CpuBackend, FastCpuBackend } from "./cpu_backend.ts";
import { FastInference } from "./cpu/fast_infer.ts";
import { l2Penalty } from "./cpu/loss.ts";
import { type NetTensors, type PassOutputs, runPass } from "./graph.ts";
import {
  CELLS_CONV,
  type FoldedConv,
  foldedLayers,
  runFusedInference,
  towerChain,
} from "./graph_fused.ts";
import {
  bridgeName,
  type BridgeStyle,
  loadWinogradBridge,
  parseBridgeStyle,
} from "./gpu/winograd_bridge.ts";
import {
  forcedWgrad,
  forcedWinoGemm,
  type LargeTile,
  parseWinograd6,
  parseWinograd7,
  pickDirectSplits,
  pickLargeBatchBridges,
  pickLargeBatchWinograd,
  pickSmallBatchWinograd,
  pickTrainHalfKernels,
  pickTrainTile,
  pickWgradKernel,
  pickWinoKernels,
  type TrainTiles,
  type Winograd6Policy,
  type Winograd7Policy,
} from "./gpu/winograd_tune.ts";
import {
  chooseWinograd,
  parseWinograd,
  winogradGeometry,
  type WinogradSetting,
  winogradSettingTile,
  type WinogradTile,
} from "./winograd.ts";
import {
  directShapeKey,
  GpuRecorder,
  SUMSQ_GROUPS,
  wgradTileOf,
  winoShapeKey,
} from "./gpu/backend.ts";
import {
  loadWgradHalf,
  WGRAD_VARIANTS,
  wgradVariant,
  type WinoKernels,
} from "./gpu/winograd_gemm.ts";
import { type KernelTiles, loadKernels, type NnKernels } from "./gpu/kernels.ts";
import {
  type GpuTensor,
  type PoolTaken,
  readTensors,
  TensorPool,
  uploadTensor,
} from "./gpu/tensor.ts";
import {
  defaultMapMode,
  type HostPhases,
  type MapMode,
  parseMapGroup,
  ReadbackQueue,
} from "./gpu/readback.ts";
import { allLegalMask, maskWords, packMask } from "./mask_bits.ts";
import { halfBits, isHalfPlanes, type Planes, planesF32 } from "./planes.ts";
import { SPARSE_MIN_BATCH, sparseLayout, sparseUploadSetting } from "./sparse_planes.ts";
import { SparseUpload } from "./gpu/sparse_planes.ts";
import type { MixedKernels } from "./gpu/winograd_mixed.ts";
import {
  defaultWinogradMixed,
  pickMixed,
  type WinogradMixedPolicy,
} from "./gpu/winograd_mixed_tune.ts";
import { mixedAlpha } from "./winograd_mixed.ts";
import {
  COMPACT_MIN_BATCH,
  compactWidthSetting,
  maxLegal,
  scatterCompact,
} from "./compact_probs.ts";
import { type FcKernelPolicy, fcKernelPolicy, pickFcKernels } from "./gpu/fc_tune.ts";
import {
  deviceHasF16,
  ensureWinogradTile,
  type HalfKernels,
  type HalfStorage,
  loadHalfKernels,
} from "./gpu/f16.ts";
import { storageBuffer } from "../gpu/buffers.ts";
import type { NetWeights } from "./params.ts";
import { type CpuTensor, cpuTensor } from "./tensor.ts";

/** A batch of positions: planes [B, C, H, W], legal-move mask [B, moves] (1 legal, 0 not), targets. */
export interface NetBatch {
  size: number;
  /**
   * f32, or f16 (Float16Array) for a network with `halfPlanes` (an f16 inference plan uploads them
   * as they are); other networks and training convert f16 planes to f32 on the host.
   */
  planes: Planes;
  /** Omitted: every move is legal. */
  mask?: Float32Array;
  /** Target move distributions [B, moves] (training). */
  policy?: Float32Array;
  /** Target values in [-1, 1] [B] (training). */
  value?: Float32Array;
  /**
   * The cells head's move table (required by a cells net, ignored by a fully connected one):
   * [size, moveCellsWidth, 4] entries (moveIndex, a, b, slot) as f32 integers, moveIndex -1 for
   * padding; a, b flat indices into the position's head planes (plane * H * W + cell) or -1;
   * slot an index into policy.cells.b or -1 (see NnBackend.cellLogits). Every legal move needs
   * exactly one entry.
   */
  moveCells?: Float32Array;
  /** Entries per position of moveCells. */
  moveCellsWidth?: number;
}

/**
 * A batch with its mask and training targets all present (what Required<NetBatch> meant before
 * the cells head), its planes f32: the move table stays optional, as only cells nets need it.
 */
export type TrainBatch =
  & Required<Omit<NetBatch, "moveCells" | "moveCellsWidth" | "planes">>
  & Pick<NetBatch, "moveCells" | "moveCellsWidth">
  & { planes: Float32Array };

/** Network outputs: masked move probabilities [B, moves] and values [B]. */
export interface NetOutputs {
  probs: Float32Array;
  value: Float32Array;
}

/** Batch-mean losses of one training step (before its update); loss = policy + value + l2. */
export interface TrainStats {
  policyLoss: number;
  valueLoss: number;
  l2: number;
  loss: number;
}

/** The policy/value network on either backend. */
export interface PolicyValueNet {
  readonly config: NetConfig;
  readonly backend: "cpu" | "gpu";
  /**
   * Whether inference takes f16 planes (Float16Array) as they are: a caller that encodes positions
   * should encode into them (allocPlanes); other networks convert them to f32 first.
   */
  readonly halfPlanes: boolean;
  /** Evaluates a batch of any size (inference-mode batch norm). */
  infer(batch: NetBatch): Promise<NetOutputs>;
  /**
   * One SGD step on a batch with targets (training-mode batch norm). `last`: no step follows until
   * this one's losses are read (a GPU net then requests its readback at once, not after its
   * deferred timer).
   */
  trainStep(batch: NetBatch, hyper: SgdHyper, last?: boolean): Promise<TrainStats>;
  /** Copies the current weights (parameters and running statistics) to the host. */
  weights(): Promise<NetWeights>;
  /** Copies SGD's momentum buffers (one per trainable tensor) to the host, for checkpoints. */
  velocity(): Promise<Map<string, Float32Array>>;
  /** Restores momentum buffers saved by `velocity` (missing names stay as they are). */
  setVelocity(v: Map<string, Float32Array>): void;
  /**
   * Readies inference for these batch sizes now (GPU: records the plans, tuning and compiling
   * their kernels on hardware adapters), so that a long run's first calls do not pay for it.
   * Absent where there is nothing to prepare (the CPU).
   */
  prepare?(sizes: readonly number[]): Promise<void>;
  /**
   * The largest inference batch the device could hold a plan for, where a larger one ran out of
   * its memory (larger batches then run in parts); Infinity or absent otherwise.
   */
  readonly memoryCap?: number;
  /** Frees device memory. */
  dispose(): void;
}

/** The batch with f32 planes (f16 planes converted on the host; f32 ones not copied). */
function f32Batch(b: NetBatch): NetBatch & { planes: Float32Array } {
  return { ...b, planes: planesF32(b.planes) };
}

function checkBatch(cfg: NetConfig, b: NetBatch, train: boolean): void {
  const want = (what: string, got: number | undefined, n: number) => {
    if (got !== undefined && got !== n) {
      throw new KibitzError(
        "shape_mismatch",
        `batch ${what} has ${got} values, expected ${n} (batch of ${b.size})`,
      );
    }
  };
  if (!Number.isInteger(b.size) || b.size < 1) {
    throw new KibitzError("shape_mismatch", `batch size must be a positive integer, got ${b.size}`);
  }
  want("planes", b.planes.length, b.size * cfg.planes * cfg.height * cfg.width);
  want("mask", b.mask?.length, b.size * cfg.moves);
  if (train) {
    if (!b.policy || !b.value) {
      throw new KibitzError("bad_batch", "training batches need policy and value targets");
    }
    want("policy targets", b.policy.length, b.size * cfg.moves);
    want("value targets", b.value.length, b.size);
  }
  if (cfg.cells) checkMoveCells(cfg, b);
}

/**
 * The cells head's batch rules: a table of size x width x 4 values whose entries are integers in
 * range, each move index at most once per position, and an entry for every legal (mask 1) move.
 */
function checkMoveCells(cfg: NetConfig, b: NetBatch): void {
  const t = b.moveCells, w = b.moveCellsWidth;
  if (!t) {
    throw new KibitzError(
      "bad_batch",
      "a cells-head network needs the batch's move table (moveCells, moveCellsWidth)",
    );
  }
  if (!Number.isInteger(w) || w! < 1) {
    throw new KibitzError("bad_batch", `moveCellsWidth must be a positive integer, got ${w}`);
  }
  if (t.length !== b.size * w! * 4) {
    throw new KibitzError(
      "shape_mismatch",
      `batch moveCells has ${t.length} values, expected ${b.size * w! * 4} ` +
        `(batch of ${b.size}, width ${w})`,
    );
  }
  const c = cfg.cells!, per = c.planes * cfg.height * cfg.width, moves = cfg.moves;
  const ok = (v: number, hi: number) => Number.isInteger(v) && v >= -1 && v < hi;
  const seen = new Int32Array(moves).fill(-1);
  for (let r = 0; r < b.size; r++) {
    let named = 0;
    for (let j = 0; j < w!; j++) {
      const e = (r * w! + j) * 4, m = t[e];
      if (m === -1) continue;
      if (!ok(m, moves) || !ok(t[e + 1], per) || !ok(t[e + 2], per) || !ok(t[e + 3], c.biases)) {
        throw new KibitzError(
          "bad_batch",
          `move table entry ${j} of position ${r} (${t[e]}, ${t[e + 1]}, ${t[e + 2]}, ${
            t[e + 3]
          }) is out of range (moves ${moves}, cells ${per}, biases ${c.biases}; -1 for none)`,
        );
      }
      if (seen[m] === r) {
        throw new KibitzError("bad_batch", `move ${m} has two entries in position ${r}'s table`);
      }
      seen[m] = r;
      if (!b.mask || b.mask[r * moves + m] > 0) named++;
    }
    // Every legal move must be among the entries (the others' logits would be a silent 0).
    let legal = 0;
    if (!b.mask) legal = moves;
    else for (let m = 0; m < moves; m++) if (b.mask[r * moves + m] > 0) legal++;
    if (named === legal) continue;
    for (let m = 0; m < moves; m++) {
      if ((!b.mask || b.mask[r * moves + m] > 0) && seen[m] !== r) {
        throw new KibitzError(
          "bad_batch",
          `legal move ${m} of position ${r} has no entry in the move table`,
        );
      }
    }
  }
}

function trainStats(policy: Float32Array, value: Float32Array, l2: number): TrainStats {
  const mean = (a: Float32Array) => a.reduce((s, v) => s + v, 0) / a.length;
  const p = mean(policy), v = mean(value);
  return { policyLoss: p, valueLoss: v, l2, loss: p + v + l2 };
}

function checkVelocity(specs: NetWeights["specs"], v: Map<string, Float32Array>): void {
  for (const [name, data] of v) {
    const s = specs.find((x) => x.name === name && x.trainable);
    if (!s) throw new KibitzError("shape_mismatch", `velocity for unknown tensor ${name}`);
    if (data.length !== s.shape.reduce((a, d) => a * d, 1)) {
      throw new KibitzError("shape_mismatch", `velocity ${name} has ${data.length} values`);
    }
  }
}

function cloneWeights(w: NetWeights): NetWeights {
  const tensors = new Map<string, CpuTensor>();
  for (const s of w.specs) {
    const t = w.tensors.get(s.name);
    if (!t) throw new KibitzError("shape_mismatch", `weights lack tensor ${s.name}`);
    tensors.set(s.name, cpuTensor(s.shape, t.data.slice()));
  }
  return { config: { ...w.config }, specs: w.specs, tensors };
}

/** The network on the TypeScript reference backend. */
export class CpuNet implements PolicyValueNet {
  readonly backend = "cpu" as const;
  readonly halfPlanes = false;
  readonly config: NetConfig;
  private readonly net: NetTensors<CpuTensor>;

  /** `b`: the reference ops by default, or FastCpuBackend (same results up to f32 rounding). */
  constructor(weights: NetWeights, private readonly b: CpuBackend = new CpuBackend()) {
    const w = cloneWeights(weights);
    this.config = w.config;
    const zeros = () =>
      new Map(w.specs.filter((s) => s.trainable).map((s) => [s.name, cpuTensor(s.shape)]));
    this.net = {
      config: w.config,
      specs: w.specs,
      params: w.tensors,
      grads: zeros(),
      velocity: zeros(),
    };
  }

  /** Whether this network runs on the fast CPU ops (FastCpuBackend) rather than the reference. */
  get fastOps(): boolean {
    return this.b instanceof FastCpuBackend;
  }

  private inputs(batch: NetBatch & { planes: Float32Array }, train: boolean) {
    const c = this.config;
    // The output mask is for the fully connected policy layer; a cells net has none.
    if (this.b instanceof FastCpuBackend) this.b.outputMask = c.cells ? null : batch.mask ?? null;
    return {
      x: cpuTensor([batch.size, c.planes, c.height, c.width], batch.planes),
      mask: cpuTensor(
        [batch.size, c.moves],
        batch.mask ?? new Float32Array(batch.size * c.moves).fill(1),
      ),
      policyTarget: train ? cpuTensor([batch.size, c.moves], batch.policy) : null,
      valueTarget: train ? cpuTensor([batch.size], batch.value) : null,
      moveCells: c.cells
        ? cpuTensor([batch.size, batch.moveCellsWidth!, 4], batch.moveCells)
        : null,
    };
  }

  /**
   * Inference: the reference pass, or on FastCpuBackend the one-position fast path per row
   * (folded batch norm, only the legal moves' logits; rebuilt after each training step).
   */
  infer(given: NetBatch): Promise<NetOutputs> {
    return Promise.resolve().then(() => {
      checkBatch(this.config, given, false);
      const batch = f32Batch(given);
      if (this.b instanceof FastCpuBackend) return this.inferFast(batch);
      const out = runPass(this.b, this.net, this.inputs(batch, false), null);
      return { probs: out.probs.data, value: out.value.data };
    });
  }

  private fast: FastInference | null = null;

  private inferFast(batch: NetBatch & { planes: Float32Array }): NetOutputs {
    const c = this.config, per = c.planes * c.height * c.width;
    this.fast ??= new FastInference({
      config: this.config,
      specs: this.net.specs,
      tensors: this.net.params,
    });
    const probs = new Float32Array(batch.size * c.moves);
    const value = new Float32Array(batch.size);
    const moves: number[] = [];
    const cells: number[] = [];
    const w = batch.moveCellsWidth ?? 0, t = batch.moveCells;
    let priors = new Float32Array(c.moves);
    for (let r = 0; r < batch.size; r++) {
      moves.length = 0;
      cells.length = 0;
      if (c.cells && t) {
        // The legal moves are the table's entries with mask 1 (checkBatch: no legal move lacks one).
        for (let j = 0; j < w; j++) {
          const e = (r * w + j) * 4, m = t[e];
          if (m < 0 || (batch.mask && !(batch.mask[r * c.moves + m] > 0))) continue;
          moves.push(m);
          cells.push(t[e + 1], t[e + 2], t[e + 3]);
        }
      } else {
        for (let m = 0; m < c.moves; m++) {
          if (!batch.mask || batch.mask[r * c.moves + m] > 0) moves.push(m);
        }
      }
      if (priors.length < moves.length) priors = new Float32Array(moves.length);
      value[r] = this.fast.evaluate(
        batch.planes,
        r * per,
        moves,
        priors,
        c.cells ? cells : undefined,
      );
      for (let j = 0; j < moves.length; j++) probs[r * c.moves + moves[j]] = priors[j];
    }
    return { probs, value };
  }

  /** Reference training step. */
  trainStep(given: NetBatch, hyper: SgdHyper): Promise<TrainStats> {
    return Promise.resolve().then(() => {
      checkBatch(this.config, given, true);
      const batch = f32Batch(given);
      this.fast = null; // the weights change: fold them again at the next inference
      const trainable = this.net.specs.filter((s) => s.trainable);
      const l2 = l2Penalty(trainable.map((s) => this.net.params.get(s.name)!), hyper.weightDecay);
      const out = runPass(this.b, this.net, this.inputs(batch, true), hyper);
      return trainStats(out.policyLoss!.data, out.valueLoss!.data, l2);
    });
  }

  /** A copy of the current weights. */
  weights(): Promise<NetWeights> {
    return Promise.resolve(
      cloneWeights({ config: this.config, specs: this.net.specs, tensors: this.net.params }),
    );
  }

  /** Copies of the momentum buffers. */
  velocity(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const [k, t] of this.net.velocity!) out.set(k, t.data.slice());
    return Promise.resolve(out);
  }

  /** Overwrites momentum buffers. */
  setVelocity(v: Map<string, Float32Array>): void {
    checkVelocity(this.net.specs, v);
    for (const [k, data] of v) this.net.velocity!.get(k)!.data.set(data);
  }

  /** Nothing to free on the host. */
  dispose(): void {}
}

interface GpuPlan {
  rec: GpuRecorder;
  x: GpuTensor;
  mask: GpuTensor;
  /** A cells net's move table [size, cellWidth, 4] (null for the fully connected head). */
  moveCells: GpuTensor | null;
  /** Entries per position of moveCells: batches with fewer are padded with -1 rows. */
  cellWidth: number;
  policyTarget: GpuTensor | null;
  valueTarget: GpuTensor | null;
  out: PassOutputs<GpuTensor>;
  /** Inference plans with compaction (GpuNet.compactWidth): the compact readback [size, width]. */
  compact: GpuTensor | null;
  l2: GpuTensor | null;
  /** The mask buffer holds all ones (the last call had no mask): a call without one skips it. */
  maskOnes: boolean;
  /** The packed mask of the last upload (reused: packMask writes every word of a batch's rows). */
  maskBits: Uint32Array;
  /**
   * uploadAhead: two staging pairs (planes, mask) that calls fill in turn, and the one the next
   * call fills; null until the first such call.
   */
  ahead: { x: GPUBuffer[]; mask: GPUBuffer[]; next: number } | null;
  /** The sparse plane upload's buffers (GpuNet.sparseUpload); null until a call first uses it. */
  sparse: SparseUpload | null;
}

/** The expansion of a sparse upload into the plan's input (see GpuNet.inputUpload). */
interface Expand {
  sparse: SparseUpload;
  pipeline: GPUComputePipeline;
  target: GPUBuffer;
}

/**
 * What a call's upload did: the op its plan skips (-1: none), the packed mask it wrote and the
 * expansion its planes need (sparse) or null (dense).
 */
interface Uploaded {
  skip: number;
  mask: Uint32Array | null;
  expand: Expand | null;
}

/** Storage precision of GPU inference: f32, f16 storage with f32 accumulation, or auto. */
export type NetPrecision = "f32" | "f16" | "auto";

/**
 * Whether "auto" picks f16 on hardware adapters with `shader-f16`: on since session 24, the gate
 * being met by then. f16 parity passed on the H200 (session 23: tests/nn/f16_test.ts with real
 * f16, the network at batch 1 and 8 and the pooled head against the CPU f16 twin), and the bench
 * had f16 ahead where the GPU, not the readback floor, sets the pace (H200, session 15: 1,503
 * against 1,447 positions/s at batch 64, 2,006 against 1,967 at 256; the 3x3 layer 2.82 against
 * 2.90 ms; one call at a time at batch 1 and 8 within 1 %, both at the floor). A small gain: the
 * GEMMs that dominate run in f32 either way. Pipelined small batches were not yet measured in f16
 * (`bench nn only=latency precision=f32,f16` measures both).
 */
export const AUTO_F16 = true;

/**
 * The storage the fused inference plans use. `f16` needs the tiled fused graph and a device with
 * `shader-f16` (an error otherwise); `f32` is f32; `auto` (the default) is f16 where it is possible
 * and KIBITZ_NN_F16=1 asks for it, f32 where KIBITZ_NN_F16=0, and otherwise f16 only if AUTO_F16 and
 * the adapter is a hardware one. `emulate` runs the f16 code path with f32 storage (tests).
 */
export function resolvePrecision(
  ctx: GpuContext,
  requested: NetPrecision | undefined,
  tiled: boolean,
  fused: boolean,
  emulate = false,
): "f32" | "f16" | "f16-emulated" {
  const possible = tiled && fused;
  if (emulate) {
    if (!possible) throw new KibitzError("bad_args", "f16 emulation needs the tiled fused graph");
    return "f16-emulated";
  }
  const want = requested ?? "auto";
  if (want === "f32") return "f32";
  const ok = possible && deviceHasF16(ctx);
  if (want === "f16") {
    if (ok) return "f16";
    throw new KibitzError(
      "bad_args",
      `precision f16: ${
        possible
          ? "the device has no shader-f16 feature"
          : "needs the tiled kernels and the fused graph"
      }`,
    );
  }
  const env = envString("KIBITZ_NN_F16");
  if (env !== undefined) return envFlag("KIBITZ_NN_F16", false) && ok ? "f16" : "f32";
  return AUTO_F16 && ok && !ctx.report.isFallback ? "f16" : "f32";
}

/** The storage of a training step's Winograd transformed tensors (see resolveTrainPrecision). */
export type TrainPrecision = "f32" | "f16" | "f16-emulated";

/**
 * Training precision: "f32" (the default), or "f16" (KIBITZ_NN_TRAIN_F16=1): the Winograd convs
 * of the training step store their transformed tensors (V and M, the weight gradient's V and dM)
 * as f16 and multiply in f32, with f32 activations, gradients and master weights; each output
 * gradient is scaled by a power of two from its maximum before f16 storage and unscaled exactly
 * after (no loss-scale state). Needs the tiled kernels and `shader-f16`; "f16-emulated" runs the
 * same kernels with f32 storage (tests on software adapters). Null: f32.
 */
export function resolveTrainPrecision(
  ctx: GpuContext,
  requested: TrainPrecision | undefined,
  tiled: boolean,
): HalfStorage | null {
  const fromEnv = requested === undefined;
  const want = requested ?? (envFlag("KIBITZ_NN_TRAIN_F16", false) ? "f16" : "f32");
  if (want === "f32") return null;
  if (want !== "f16" && want !== "f16-emulated") {
    throw new KibitzError("bad_args", `training precision must be f32 or f16, got "${want}"`);
  }
  const why = !tiled
    ? "needs the tiled kernels (Winograd training)"
    : want === "f16" && !deviceHasF16(ctx)
    ? "the device has no shader-f16 feature"
    : null;
  if (why && fromEnv) {
    // The switch reaches every network a process makes, inference-only ones on other adapters too.
    if (!warnedTrainF16) console.warn(`KIBITZ_NN_TRAIN_F16 ignored: f16 training ${why}`);
    warnedTrainF16 = true;
    return null;
  }
  if (why) throw new KibitzError("bad_args", `f16 training ${why}`);
  return want;
}
let warnedTrainF16 = false;

/** A boolean environment switch: "0"/"false"/"off"/"no" turn it off, anything else on; unset: `def`. */
function envFlag(name: string, def: boolean): boolean {
  let v: string | undefined;
  try {
    v = (globalThis as { Deno?: typeof Deno }).Deno?.env.get(name);
  } catch {
    return def;
  }
  if (v === undefined || v === "") return def;
  return !["0", "false", "off", "no"].includes(v.toLowerCase());
}

/** An environment variable, or undefined where there is none (or no permission). */
function envString(name: string): string | undefined {
  try {
    return (globalThis as { Deno?: typeof Deno }).Deno?.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/** Longest a training step's deferred readback waits for the next step before requesting its map. */
const TRAIN_MAX_WAIT_MS = 10_000;

/**
 * The network on WebGPU: one recorded plan per (mode, batch size), replayed every call. Plans share
 * pooled scratch buffers; that is safe because each call uploads its inputs, submits its plan and
 * queues its readback copy without yielding, so the work of two calls never interleaves on the queue.
 */
export class GpuNet implements PolicyValueNet {
  readonly backend = "gpu" as const;
  readonly config: NetConfig;
  /**
   * Host time of inference calls so far: `ms` summed over `calls` of the synchronous part of each
   * call (upload, encoding and submit of the plan and its readback copy, and the map requests made
   * then: in Deno each waits for the GPU to finish what was submitted; see ReadbackQueue), the part
   * that pipelined calls cannot overlap on the JavaScript thread.
   */
  readonly hostTime = { calls: 0, ms: 0 };
  /** Persistent staging buffers and the map requests of inference calls (see ReadbackQueue). */
  private readonly readback: ReadbackQueue;
  /**
   * The loss readbacks of training steps: deferred, so that a step submitted while the previous
   * one runs (runTrainSteps) requests the previous step's map only then, and the GPU never waits
   * on the host's readback floor or batch preparation between steps.
   */
  private readonly trainReadback: ReadbackQueue;
  private readonly pool: TensorPool;
  private readonly net: NetTensors<GpuTensor>;
  private readonly plans = new Map<string, Promise<GpuPlan>>();
  private readonly live: GpuPlan[] = [];
  /** All-legal masks (packed) by batch size, for batches without one. */
  private readonly ones = new Map<number, Uint32Array>();
  private readonly owned: GpuTensor[] = [];
  /** Folded conv weights of the fused inference plans, refreshed after training changes them. */
  private readonly folded = new Map<string, FoldedConv<GpuTensor>>();
  private foldRec: GpuRecorder | null = null;
  private foldDirty = true;
  /** Plans recorded with the current folds (a failed first plan drops them only if it is alone). */
  private foldUses = 0;
  /** The folded f32 weight of each 3x3 conv with a filter transform (the large tiles' come from it). */
  private readonly foldedF32 = new Map<string, GpuTensor>();
  /**
   * The large tiles' (F(6x6), F(7x7)) filter transforms by the folded conv's own (F(4x4))
   * transform, made once a plan takes that tile for some layer (the tuners), and their recorders,
   * resubmitted with foldRec.
   */
  private readonly filtersLarge = new Map<LargeTile, Map<GpuTensor, GpuTensor>>();
  private readonly foldLargeRecs = new Map<LargeTile, GpuRecorder>();

  private constructor(
    readonly ctx: GpuContext,
    private readonly kernels: NnKernels,
    weights: NetWeights,
    private readonly batchCap: number,
    private readonly tiled: boolean | undefined,
    /** Inference runs the fused graph (batch norm folded, conv epilogues); see runFusedInference. */
    readonly fused: boolean,
    /** Winograd for the fused graph's 3x3 convs (tiled family only); see chooseWinograd. */
    readonly winograd: WinogradSetting,
    /** The f16 kernels when inference stores f16 (see resolvePrecision); null: f32. */
    private readonly half: HalfKernels | null = null,
    /** A forced Winograd GEMM variant (see pickWinoKernels); undefined: tuned on hardware. */
    readonly winogradGemm: string | undefined = undefined,
    /**
     * A forced weight-gradient GEMM ("legacy" or a WGRAD_VARIANTS name; see pickWgradKernel);
     * undefined: tuned.
     */
    readonly wgradGemm: string | undefined = undefined,
    mapMode: MapMode = defaultMapMode(ctx),
    /** f16 training's V/M storage (see GpuRecorder.trainHalf); null: f32 training. */
    private readonly trainHalf: HalfStorage | null = null,
  ) {
    this.config = { ...weights.config };
    this.compactWidth = compactWidthSetting(this.config.moves);
    this.sparseUpload = sparseUploadSetting(!ctx.report.isFallback);
    this.readback = new ReadbackQueue(ctx, mapMode);
    this.trainReadback = new ReadbackQueue(ctx, "deferred", TRAIN_MAX_WAIT_MS, 1.5);
    this.pool = new TensorPool(ctx);
    const params = new Map<string, GpuTensor>();
    const grads = new Map<string, GpuTensor>();
    const velocity = new Map<string, GpuTensor>();
    for (const s of weights.specs) {
      const t = weights.tensors.get(s.name);
      if (!t) throw new KibitzError("shape_mismatch", `weights lack tensor ${s.name}`);
      const p = uploadTensor(ctx, s.shape, t.data, s.name);
      params.set(s.name, p);
      this.owned.push(p);
      if (!s.trainable) continue;
      const g = uploadTensor(ctx, s.shape, new Float32Array(t.data.length), `${s.name}.grad`);
      const v = uploadTensor(ctx, s.shape, new Float32Array(t.data.length), `${s.name}.vel`);
      grads.set(s.name, g);
      velocity.set(s.name, v);
      this.owned.push(g, v);
    }
    this.net = { config: this.config, specs: weights.specs, params, grads, velocity };
  }

  /**
   * Uploads `weights` and compiles the kernels; `maxBatch` caps the positions per submit, `tiled`
   * overrides the kernel family (default: tiled GEMMs on hardware adapters, direct on software),
   * `tiles` the tile sizes of the tiled GEMMs (default HARDWARE_TILES), `fused` the inference graph
   * (default on; KIBITZ_NN_FUSED=0 turns it off: one op per layer as in training), `winograd` the
   * fused graph's 3x3 algorithm (default "auto" with the tiled kernels: F(4x4,3x3) where the
   * selection table picks it; KIBITZ_NN_WINOGRAD=off|auto|2|4|6|7 overrides; direct kernels: off),
   * `precision` the inference storage (see resolvePrecision),
   * `f16Emulate` (tests) the f16 code path with f32 storage, and `winogradGemm` a forced Winograd
   * GEMM variant ("legacy" or a candidate name; default KIBITZ_NN_WINO_GEMM, else autotuned on
   * hardware adapters and the built-in GEMM on software ones), `wgradGemm` training's Winograd
   * weight-gradient GEMM ("legacy" or a variant: vp, vpu, vpud, vpu16; default KIBITZ_NN_WGRAD,
   * else tuned the same way),
   * `mapMode` when inference calls request their readback maps (see defaultMapMode),
   * `trainPrecision` the training steps' (see resolveTrainPrecision), `winogradBridge` whether
   * chained Winograd convs are joined by bridges (default KIBITZ_NN_WINO_BRIDGE, else on),
   * `bridgeStyle` which bridges (see BridgeStyle; default KIBITZ_NN_WINO_BRIDGE_STYLE, else
   * "tuned"), and
   * `winograd6` whether layers the selection table runs as F(4x4) may run as F(6x6), in inference
   * and f32 training (see Winograd6Policy; default KIBITZ_NN_WINO6, else tuned), `winograd7` the
   * same for F(7x7) (see Winograd7Policy; default KIBITZ_NN_WINO7, else tuned), `winogradMixed`
   * whether those layers may run mixed F(7x7)/F(6x6) tiles in inference (see winogradMixed;
   * default KIBITZ_NN_WINO_MIXED, else tuned), and `trainKeepV`
   * whether f32 training keeps each layer's Winograd V for its weight gradient (see
   * GpuRecorder.keepV; default KIBITZ_NN_TRAIN_KEEP_V=1, else off).
   */
  static async create(
    ctx: GpuContext,
    weights: NetWeights,
    opts: {
      maxBatch?: number;
      tiled?: boolean;
      tiles?: KernelTiles;
      fused?: boolean;
      winograd?: WinogradSetting;
      precision?: NetPrecision;
      f16Emulate?: boolean;
      winogradGemm?: string;
      wgradGemm?: string;
      mapMode?: MapMode;
      trainPrecision?: TrainPrecision;
      winogradBridge?: boolean;
      bridgeStyle?: BridgeStyle;
      winograd6?: Winograd6Policy;
      winograd7?: Winograd7Policy;
      winogradMixed?: WinogradMixedPolicy;
      trainKeepV?: boolean;
    } = {},
  ): Promise<GpuNet> {
    const tiled = opts.tiled ?? !ctx.report.isFallback;
    const kernels = await loadKernels(ctx, opts.tiles, tiled ? "tiled" : "direct");
    const fused = opts.fused ?? envFlag("KIBITZ_NN_FUSED", true);
    const env = envString("KIBITZ_NN_WINOGRAD");
    const winograd = !tiled || !fused
      ? "off"
      : opts.winograd ?? (env ? parseWinograd(env) : "auto");
    const precision = resolvePrecision(ctx, opts.precision, tiled, fused, opts.f16Emulate);
    const half = precision === "f32" ? null : await loadHalfKernels(ctx, kernels.tiles, precision);
    if (typeof winograd === "number") await ensureWinogradTile(ctx, kernels, half, winograd);
    const net = new GpuNet(
      ctx,
      kernels,
      weights,
      opts.maxBatch ?? Infinity,
      tiled,
      fused,
      winograd,
      half,
      opts.winogradGemm ?? forcedWinoGemm(),
      opts.wgradGemm ?? forcedWgrad(),
      opts.mapMode,
      resolveTrainPrecision(ctx, opts.trainPrecision, tiled),
    );
    net.winogradBridge = opts.winogradBridge ?? envFlag("KIBITZ_NN_WINO_BRIDGE", true);
    const style = envString("KIBITZ_NN_WINO_BRIDGE_STYLE");
    net.bridgeStyle = opts.bridgeStyle ?? (style ? parseBridgeStyle(style) : "tuned");
    const w6 = envString("KIBITZ_NN_WINO6");
    net.winograd6 = opts.winograd6 ?? (w6 ? parseWinograd6(w6) : "tuned");
    const w7 = envString("KIBITZ_NN_WINO7");
    net.winograd7 = opts.winograd7 ?? (w7 ? parseWinograd7(w7) : "tuned");
    net.winogradMixed = opts.winogradMixed ?? defaultWinogradMixed();
    net.trainKeepV = opts.trainKeepV ?? envFlag("KIBITZ_NN_TRAIN_KEEP_V", false);
    return net;
  }

  /**
   * Inference plans join chained Winograd convs by bridges (src/nn/gpu/winograd_bridge.ts: the
   * output transform, epilogue and next input transform in one kernel, the block's inner
   * activation never written). Read when a plan is recorded.
   */
  winogradBridge = true;

  /**
   * Which bridges join the chains (BridgeStyle): the tuner's choice per layer shape, or every
   * chain bridged one thread a tile ("plain") or column-staged ("staged"). Read when a plan is
   * recorded.
   */
  bridgeStyle: BridgeStyle = "tuned";

  /**
   * Whether layers the selection table runs as F(4x4) may run as F(6x6) (with winograd "auto"; in
   * inference and f32 training): timed per layer shape on hardware adapters ("tuned"), always
   * ("on") or never ("off"). Read when a plan is recorded.
   */
  winograd6: Winograd6Policy = "tuned";

  /**
   * Whether layers the selection table runs as F(4x4) may run as F(7x7) (with winograd "auto"; in
   * inference and f32 training): timed per layer shape on hardware adapters beside F(6x6)
   * ("tuned"), always ("on", before winograd6's "on") or never ("off"). F(7x7) does 27 % fewer
   * products than F(4x4) on 26 x 26, with about 5x its f32 rounding error (6.4e-5 against 1.2e-5
   * of the largest output, 128 channels). Read when a plan is recorded.
   */
  winograd7: Winograd7Policy = "tuned";

  /**
   * Whether inference layers the selection table runs as F(4x4) may run with mixed F(7x7) and
   * F(6x6) tiles where the board allows them (src/nn/winograd_mixed.ts; 26 x 26: 10.8 % fewer
   * GEMM products than F(7x7)): timed against the layer's tile and kernels on hardware adapters
   * ("tuned"), always ("on"), never ("off"). Not in training. Read when a plan is recorded.
   */
  winogradMixed: WinogradMixedPolicy = "tuned";

  /**
   * f32 training plans keep each layer's Winograd V (the input transform of its input) from the
   * forward pass for the weight gradient instead of computing it again (GpuRecorder.keepV): one
   * transform fewer a layer (16.8 of the 411 GPU ms of the 19 x 256 step at batch 256 on the
   * H200), for about 0.46 GB a layer held until its backward at that size. Read when a plan is
   * recorded.
   */
  trainKeepV = false;

  /** When inference calls request their readback maps (see ReadbackQueue; KIBITZ_NN_MAP). */
  get mapMode(): MapMode {
    return this.readback.mode;
  }

  /** Switches the map mode (the bench's A/B); calls already submitted are requested first. */
  setMapMode(mode: MapMode): void {
    this.readback.requestPending();
    this.readback.mode = mode;
  }

  /**
   * Inference calls upload their planes and mask into one of two staging buffers, flushed to the
   * queue at once (an empty submit), and copy them into the plan's inputs on the GPU at the start
   * of their own command buffer (off by default; KIBITZ_NN_UPLOAD_AHEAD=1 turns it on). Results
   * are the same bits. With calls in flight the upload then waits behind the previous call's work
   * instead of after the drain before the next one: it touches no buffer that work reads, so the
   * GPU may overlap the two. Read per call.
   */
  uploadAhead = envFlag("KIBITZ_NN_UPLOAD_AHEAD", false);
  /**
   * Slots a row of the compact readback holds (src/nn/compact_probs.ts; 0: none), read when a
   * batch size's inference plan is recorded: calls whose rows all have at most that many legal
   * moves read back only those moves' probabilities. Default KIBITZ_NN_COMPACT, else
   * defaultCompactWidth (512 for Hive's 5,489 moves, none below 2,048); see compactWidthSetting.
   */
  compactWidth: number;
  /** Smallest batch whose plan has the compact readback (COMPACT_MIN_BATCH; tests lower it). */
  compactMinBatch = COMPACT_MIN_BATCH;
  /** Whether calls use the compact readback where their plan has it (off: every move's, A/B). */
  compactReadback = true;
  /** Inference calls that read back compact so far. */
  compactCalls = 0;
  /**
   * Whether inference calls of at least sparseMinBatch positions upload their planes sparse
   * (src/nn/sparse_planes.ts: bases and the cells off them, expanded on the GPU) where the batch
   * fits SPARSE_SHARE; others, and training, upload dense. Default KIBITZ_NN_SPARSE, else off on
   * hardware adapters (see sparseUploadSetting). The same bits either way; read per call (flipped:
   * the bench's A/B row).
   */
  sparseUpload: boolean;
  /** Smallest batch whose inference calls may upload sparse (SPARSE_MIN_BATCH; tests lower it). */
  sparseMinBatch = SPARSE_MIN_BATCH;
  /** Inference calls that uploaded their planes sparse so far. */
  sparseCalls = 0;
  /**
   * How inference plans pick the fully connected layers' kernel (src/nn/gpu/fc_tune.ts): "tuned"
   * (the default; KIBITZ_NN_FC overrides) times the tiled matmul against the K-major fcNt on
   * hardware adapters, "nt" and "tiled" force one. Read when a plan is recorded.
   */
  fcKernel: FcKernelPolicy = fcKernelPolicy();

  /**
   * Training (and unfused) plans run the plain 3x3 convs as Winograd too (default on;
   * KIBITZ_NN_WINOGRAD_TRAIN=0 turns it off). Read when a plan is recorded.
   */
  winogradTrain = envFlag("KIBITZ_NN_WINOGRAD_TRAIN", true);

  /**
   * Calls one map request covers in the grouped mode (default 2, KIBITZ_NN_MAP_GROUP): larger
   * groups empty the GPU's queue less often where many calls are in flight (groups of G need G + 2
   * in flight).
   */
  get mapGroup(): number {
    return this.readback.mapGroup;
  }

  /** Sets mapGroup (2 to 64); calls already submitted are requested first. */
  set mapGroup(g: number) {
    const n = parseMapGroup(g);
    this.readback.requestPending();
    this.readback.mapGroup = n;
  }

  /**
   * Times the host phases of inference calls into `p` (summed; see HostPhases) until set to null:
   * the bench's host-side profile. Off by default (it costs a few timer reads a call).
   */
  profileHost(p: HostPhases | null): void {
    this.readback.profile = p;
  }

  /** The inference storage: f32, f16, or the f16 path emulated with f32 storage. */
  get precision(): "f32" | "f16" | "f16-emulated" {
    return this.half?.storage ?? "f32";
  }

  /**
   * f16 storage (fused inference on `shader-f16`): f16 planes are uploaded as they are, half the
   * bytes, into where the plan would cast its f32 input (see PolicyValueNet.halfPlanes).
   */
  get halfPlanes(): boolean {
    return this.fused && this.precision === "f16";
  }

  /** Records (once) the batch-norm folds of every conv and submits them if the weights changed. */
  private refreshFolds(): void {
    if (!this.foldRec) {
      const rec = new GpuRecorder(this.ctx, this.kernels, this.pool, this.tiled);
      rec.half = this.half;
      const m = winogradSettingTile(this.winograd);
      for (const [conv, bn] of foldedLayers(this.config)) {
        const w = this.net.params.get(conv)!;
        const [co, ci, k] = w.shape;
        const f: FoldedConv<GpuTensor> = {
          w: uploadTensor(this.ctx, w.shape, new Float32Array(w.size), `${conv}.folded`),
          b: uploadTensor(this.ctx, [co], new Float32Array(co), `${conv}.bias`),
          u: null,
        };
        this.owned.push(f.w, f.b);
        const P = (n: string) => this.net.params.get(`${bn}.${n}`)!;
        const bnp = { gamma: P("gamma"), beta: P("beta"), runMean: P("mean"), runVar: P("var") };
        rec.foldBn(w, bnp, f.w, f.b);
        const wf32 = f.w;
        if (this.half) {
          // f16 plans read the folded weight as f16: one cast after every fold.
          const eb = this.half.storage === "f16" ? 2 : 4;
          const wh: GpuTensor = {
            shape: [...w.shape],
            buffer: storageBuffer(
              this.ctx,
              Math.max(4, Math.ceil(w.size * eb / 4) * 4),
              `${conv}.f16`,
            ),
            size: w.size,
            half: true,
          };
          this.owned.push(wh);
          rec.toHalf(f.w, wh);
          f.w = wh;
        }
        this.folded.set(conv, f);
        if (m && k === 3) {
          this.foldedF32.set(conv, wf32);
          const shape = [(m + 2) * (m + 2), co, ci];
          f.u = uploadTensor(this.ctx, shape, new Float32Array(shape[0] * co * ci), `${conv}.wino`);
          this.owned.push(f.u);
          rec.winogradFilter(wf32, f.u, m);
        }
      }
      const cells = this.config.cells;
      if (cells) {
        // The score conv has no batch norm: the weight as it is (cast for f16 plans), zero bias.
        const w = this.net.params.get(CELLS_CONV)!;
        const f: FoldedConv<GpuTensor> = {
          w,
          b: uploadTensor(this.ctx, [cells.planes], new Float32Array(cells.planes), "cells.bias"),
          u: null,
        };
        this.owned.push(f.b);
        if (this.half) {
          const eb = this.half.storage === "f16" ? 2 : 4;
          f.w = {
            shape: [...w.shape],
            buffer: storageBuffer(
              this.ctx,
              Math.max(4, Math.ceil(w.size * eb / 4) * 4),
              `${CELLS_CONV}.f16`,
            ),
            size: w.size,
            half: true,
          };
          this.owned.push(f.w);
          rec.toHalf(w, f.w);
        }
        this.folded.set(CELLS_CONV, f);
      }
      this.foldRec = rec;
    }
    if (this.foldDirty) {
      this.foldRec.submit();
      for (const r of this.foldLargeRecs.values()) r.submit();
      this.foldMixedRec?.submit();
    }
    this.foldDirty = false;
  }

  /** Destroys the batch-norm folds (`made`, what the failed first plan made of `owned`). */
  private dropFolds(made: GpuTensor[]): void {
    const drop = new Set(made);
    for (const t of made) t.buffer.destroy();
    const keep = this.owned.filter((t) => !drop.has(t));
    this.owned.length = 0;
    this.owned.push(...keep);
    this.foldRec?.destroy();
    this.foldRec = null;
    this.folded.clear();
    this.foldedF32.clear();
    this.foldDirty = true;
  }

  /** Bytes of the buffers the net owns apart from its pool (weights, folds, filter transforms). */
  private ownedBytes(): number {
    return this.owned.reduce((sum, t) => sum + t.buffer.size, 0);
  }

  /**
   * The largest inference batch the device could allocate a plan for, after a plan of a larger one
   * failed for lack of memory (Infinity until then); inference splits larger batches into chunks.
   */
  get memoryCap(): number {
    return this.inferCap;
  }
  private inferCap = Infinity;

  /**
   * After `e` failed a plan of `size`: where the device could not hold it (gpu_too_large) and it
   * can be halved, lowers the memory cap to half of it, so this and every later batch as large
   * runs in halves (the failed recording has given back what it took); else rethrows `e`.
   */
  private halveCap(e: unknown, size: number): void {
    if (!isKibitzError(e, "gpu_too_large") || size < 2) throw e;
    this.inferCap = Math.min(this.inferCap, Math.ceil(size / 2));
  }

  /** Largest batch per submit: its biggest activation fits one storage binding (and the cap). */
  maxBatch(): number {
    const c = this.config;
    let per = Math.max(
      Math.max(c.filters, c.valuePool ?? 0) * c.height * c.width,
      c.moves,
      c.planes * c.height * c.width,
      this.cellCap * 4,
    ) * 4;
    const m = winogradSettingTile(this.winograd);
    // The transformed input and product: (m+2)^2 values per tile and channel, at the large tiles
    // too where a plan may take them.
    const tiles: WinogradTile[] = !m ? [] : [m, ...this.mayTakeLarge()];
    for (const t of tiles) {
      const g = winogradGeometry(t, 1, c.height, c.width);
      per = Math.max(per, g.alpha * g.tiles * Math.max(c.filters, c.planes) * 4 * 1.1);
    }
    const fit = Math.floor(this.ctx.device.limits.maxStorageBufferBindingSize / per);
    return Math.max(1, Math.min(this.batchCap, fit));
  }

  /**
   * The move-table width plans take for a batch of `width` entries a position: the largest power of
   * two seen so far (at least 8), so a width that changes between calls re-plans at most once per
   * doubling and smaller tables are padded with -1 rows (0 for the fully connected head).
   */
  private cellWidthFor(width: number | undefined): number {
    if (!this.config.cells) return 0;
    const w = Math.max(8, width ?? 0);
    while (this.cellCap < w) this.cellCap = Math.max(8, this.cellCap * 2);
    return this.cellCap;
  }
  private cellCap = 0;

  /**
   * The recorded plan for (mode, size, move-table width); concurrent first calls share one
   * recording.
   */
  private plan(size: number, train: boolean, cellWidth = 0): Promise<GpuPlan> {
    const key = `${train ? "train" : "infer"}:${size}${cellWidth ? `:cells${cellWidth}` : ""}`;
    const hit = this.plans.get(key);
    if (hit) return hit;
    const p = this.recordPlan(key, size, train, cellWidth);
    this.plans.set(key, p);
    p.catch(() => this.plans.delete(key));
    return p;
  }

  private async recordPlan(
    key: string,
    size: number,
    train: boolean,
    cellWidth: number,
  ): Promise<GpuPlan> {
    const c = this.config;
    const rec = new GpuRecorder(this.ctx, this.kernels, this.pool, this.tiled);
    rec.winograd = this.winograd;
    if (!train && this.fused) rec.half = this.half;
    // Training (and unfused) plans: Winograd in the plain convs too, unless winogradTrain is off.
    rec.winogradTrain = this.winogradTrain;
    if (train && this.trainHalf) {
      if (!rec.winogradTrain || this.winograd === "off") {
        throw new KibitzError(
          "bad_args",
          "f16 training stores the Winograd convs' transformed tensors: it needs Winograd in " +
            "training (winogradTrain, KIBITZ_NN_WINOGRAD_TRAIN, not off; winograd not off)",
        );
      }
      rec.trainHalf = this.trainHalf;
    }
    rec.keepV = train && this.trainKeepV && !rec.trainHalf;
    await this.pickWinograd(rec, size, train);
    if (!train) {
      await pickFcKernels(this.ctx, this.kernels, rec, this.fcProducts(size), this.fcKernel);
    }
    if (!train && this.fused) {
      for (const filters of [...this.filtersLarge.values(), this.filtersMixed]) {
        for (const [u4, u] of filters) {
          rec.otherFilters.set(u4, [...rec.otherFilters.get(u4) ?? [], u]);
        }
      }
      if (this.winogradBridge) await this.loadBridges(rec, size);
    }
    // What this recording takes from the shared pool: all of it inside the synchronous window, so
    // no other recording's buffers are among it; given back if the recording fails.
    let taken: PoolTaken = { made: [], reused: [] };
    // The batch-norm folds, made by the net's first fused plan: rolled back with it if it fails
    // (after an allocation failure some are invalid) and no plan recorded since uses them, so the
    // next plan makes them again.
    let folds: GpuTensor[] = [];
    const recordWindow = () => {
      if (!train && this.fused) {
        const from = this.owned.length, made = !this.foldRec;
        this.refreshFolds();
        if (made) folds = this.owned.slice(from), this.foldUses = 0;
        this.foldUses++;
      }
      const before = this.pool.snapshot();
      try {
        return this.recordGraph(rec, size, train, cellWidth);
      } finally {
        taken = this.pool.takenSince(before);
      }
    };

    let recorded;
    try {
      const { value, errors } = await withErrorScopes(
        this.ctx,
        ["out-of-memory", "validation"],
        recordWindow,
      );
      const oom = errors["out-of-memory"], invalid = errors.validation;
      if (oom) {
        const foldBytes = folds.reduce((sum, t) => sum + t.buffer.size, 0);
        const scratch = taken.made.reduce((sum, b) => sum + b.size, 0), bytes = scratch + foldBytes;
        const mib = (b: number) => (b / 2 ** 20).toFixed(1);
        throw new KibitzError(
          "gpu_too_large",
          `the batch-${size} ${train ? "training" : "inference"} plan needs ${mib(bytes)} MiB${
            foldBytes ? ` (${mib(foldBytes)} MiB of it the folded weights)` : ""
          } more device memory (the net holds ${
            mib(this.pool.bytes - scratch + this.ownedBytes() - foldBytes)
          } MiB already) and ${
            describeAdapter(this.ctx.report)
          } could not allocate it: ${oom.message}; use smaller batches`,
        );
      }
      if (invalid) {
        throw new KibitzError(
          "shader_error",
          `recording the ${key} plan failed: ${invalid.message}`,
        );
      }
      recorded = value;
    } catch (e) {
      rec.destroy();
      this.pool.giveBack(taken);
      if (folds.length > 0 && this.foldUses === 1) this.dropFolds(folds);
      throw e;
    }
    const { x, mask, moveCells, policyTarget, valueTarget, l2, out, compact } = recorded;
    const plan = {
      rec,
      x,
      mask,
      moveCells,
      cellWidth,
      policyTarget,
      valueTarget,
      out,
      compact,
      l2,
      maskOnes: false,
      maskBits: new Uint32Array(size * maskWords(c.moves)),
      ahead: null,
      sparse: null,
    };
    this.live.push(plan);
    return plan;
  }

  /** Records a plan's graph on `rec`: its inputs, targets and outputs, taken from the pool. */
  private recordGraph(rec: GpuRecorder, size: number, train: boolean, cellWidth: number) {
    const c = this.config;
    const x = this.pool.acquire([size, c.planes, c.height, c.width], "nn.input");
    if (!train) rec.input = x; // f16 plans: where f16 planes may go (GpuRecorder.halfInput)
    const mask = this.pool.acquire([size, maskWords(c.moves)], "nn.mask");
    const moveCells = cellWidth ? this.pool.acquire([size, cellWidth, 4], "nn.move_cells") : null;
    const policyTarget = train ? this.pool.acquire([size, c.moves], "nn.policy_target") : null;
    const valueTarget = train ? this.pool.acquire([size], "nn.value_target") : null;
    let l2: GpuTensor | null = null;
    if (train) {
      const trainable = this.net.specs.filter((s) => s.trainable);
      // Partial sums of squares, SUMSQ_GROUPS a tensor: trainStep adds them all.
      l2 = this.pool.acquire([trainable.length * SUMSQ_GROUPS], "nn.l2");
      rec.mark("L2 norm (loss readout)");
      trainable.forEach((s, i) => rec.sumSquares(this.net.params.get(s.name)!, l2!, i));
    }
    const hyper = { lr: 0, momentum: 0.9, weightDecay: 1e-4 };
    const out = !train && this.fused
      ? runFusedInference(rec, c, this.net.params, this.folded, x, mask, moveCells)
      : runPass(
        rec,
        this.net,
        { x, mask, policyTarget, valueTarget, moveCells },
        train ? hyper : null,
      );
    const width = train || size < this.compactMinBatch ? 0 : this.compactWidth;
    const compact = width > 0 ? rec.compactProbs(out.probs, mask, width) : null;
    return { x, mask, moveCells, policyTarget, valueTarget, l2, out, compact };
  }

  /** The fully connected layers' products [rows, outputs, inputs] at batch `size`. */
  private fcProducts(size: number): [number, number, number][] {
    return this.net.specs.filter((s) => s.role === "fc" && s.shape.length === 2)
      .map((s) => [size, s.shape[0], s.shape[1]]);
  }

  /**
   * Fills rec.winoChoice for the Winograd layers of a batch-`size` plan (training plans: the
   * input-gradient convs, Co and Ci swapped, too), and for inference plans rec.splitChoice for the
   * direct convs (both tuned on hardware adapters; see pickWinoKernels, pickDirectSplits).
   */
  private async pickWinograd(rec: GpuRecorder, size: number, train: boolean): Promise<void> {
    if (!this.tiled) return;
    const c = this.config;
    if (!train && this.fused) {
      for (const [conv] of foldedLayers(c)) {
        const [co, ci, k] = this.net.params.get(conv)!.shape;
        const wm = k === 3 ? chooseWinograd(this.winograd, size, c.height, c.width, ci, co) : 0;
        const key = directShapeKey(size, ci, co, c.height, c.width, k, rec.half !== null);
        if (rec.splitChoice.has(key) || rec.winoOverride.has(key)) continue;
        const shape = { n: size, ci, co, h: c.height, w: c.width, k };
        if (wm === 4) {
          // Above the table's threshold F(6x6) or F(7x7) may beat F(4x4) (fewer products, larger
          // transforms).
          const { tile, unbridged, staged } = await this.largeTile(rec, shape);
          if (tile) await this.takeTile(rec, shape, tile.m, tile.kernels);
          const at = winoShapeKey(tile?.m ?? 4, size, ci, co, c.height, c.width);
          if (unbridged && this.bridgeStyle === "tuned") rec.unbridged.add(at);
          if (staged && this.bridgeStyle === "tuned") rec.stagedBridges.add(at);
          await this.takeMixed(rec, shape, tile);
          continue;
        }
        if (wm) continue;
        if (k === 3 && this.winograd === "auto") {
          // Below the table's threshold F(4x4) may still beat the direct conv (timed: batch 8).
          const small = await pickSmallBatchWinograd(
            this.ctx,
            this.kernels,
            rec.half,
            shape,
            this.winogradGemm,
            // The tower's convs share their shape: all go F(4x4) together, then bridged.
            this.winogradBridge,
            this.tunedLarge(),
          );
          if (small) {
            await this.takeTile(rec, shape, small.m, small.kernels);
            if (small.staged && this.bridgeStyle === "tuned") {
              rec.stagedBridges.add(winoShapeKey(small.m, size, ci, co, c.height, c.width));
            }
            continue;
          }
        }
        const pick = await pickDirectSplits(this.ctx, this.kernels, rec.half, shape);
        if (pick !== null) {
          rec.splitChoice.set(key, pick.splits);
          rec.tileChoice.set(key, pick.tile);
        }
      }
    }
    if (this.winograd === "off" || (train && !rec.winogradTrain)) return;
    if (train) await this.trainTiles(rec, size);
    const shapes = foldedLayers(c).flatMap(([conv]) => {
      const [co, ci, k] = this.net.params.get(conv)!.shape;
      return k !== 3 ? [] : train ? [[co, ci], [ci, co]] : [[co, ci]];
    });
    for (const [co, ci] of shapes) {
      const m = rec.winoTileOf(size, ci, co, c.height, c.width);
      if (!m) continue;
      const key = winoShapeKey(m, size, ci, co, c.height, c.width);
      if (rec.winoChoice.has(key)) continue;
      const shape = { n: size, ci, co, h: c.height, w: c.width };
      if (rec.trainHalf) {
        const k = await pickTrainHalfKernels(
          this.ctx,
          this.kernels,
          rec.trainHalf,
          m,
          shape,
          this.winogradGemm,
        );
        rec.winoChoice.set(key, k.forward);
        rec.winoScaled.set(key, k.scaled);
        continue;
      }
      const pick = await pickWinoKernels(
        this.ctx,
        this.kernels,
        rec.half,
        m,
        shape,
        this.winogradGemm,
      );
      if (pick) rec.winoChoice.set(key, pick);
    }
    if (!train || !rec.winogradTrain) return;
    // The weight gradients of the 3x3 layers (x [size, ci], dW [co, ci]): the tuned GEMM.
    for (const [conv] of foldedLayers(c)) {
      const [co, ci, k] = this.net.params.get(conv)!.shape;
      const dk = directShapeKey(size, ci, co, c.height, c.width, 3, false);
      const m = k !== 3
        ? 0
        : rec.wgradOverride.get(dk) ?? rec.winoTileOf(size, ci, co, c.height, c.width);
      const key = winoShapeKey(m || 4, size, ci, co, c.height, c.width);
      if (!m || rec.wgradChoice.has(key) || rec.wgradHalf.has(key)) continue;
      const shape = { n: size, ci, co, h: c.height, w: c.width };
      const pick = await pickWgradKernel(this.ctx, this.kernels, m, shape, this.wgradGemm);
      if (rec.trainHalf) {
        // f16 dM and V: the f32 tuner's (or the forced) variant, compiled for f16 storage (`vp`
        // where the built-in GEMM won: f16 operands need a vp kernel).
        const tile = wgradTileOf(this.kernels.tiles, co, ci);
        const v = pick ? wgradVariant(pick.name)! : WGRAD_VARIANTS[0];
        rec.wgradHalf.set(key, await loadWgradHalf(this.ctx, m, tile, rec.trainHalf, v));
        continue;
      }
      if (pick) rec.wgradChoice.set(key, pick);
    }
  }

  /**
   * Runs an inference plan's fused 3x3 layers of `shape` at tile m, with the tuner's `kernels`
   * (null: the built-in GEMM), in place of the selection table's choice; a large tile reads the
   * network's filter transforms at that tile, made first.
   */
  private async takeTile(
    rec: GpuRecorder,
    shape: { n: number; ci: number; co: number; h: number; w: number },
    m: WinogradTile,
    kernels: WinoKernels | null,
  ): Promise<void> {
    const { n, ci, co, h, w } = shape;
    if (m === 6 || m === 7) await this.ensureFiltersLarge(m);
    rec.winoOverride.set(directShapeKey(n, ci, co, h, w, 3, rec.half !== null), m);
    if (kernels) rec.winoChoice.set(winoShapeKey(m, n, ci, co, h, w), kernels);
  }

  /**
   * Runs an inference plan's fused 3x3 layers of `shape` with mixed tiles where winogradMixed says
   * so against the tile they were given (`tile`, null: F(4x4) with its tuned kernels), making the
   * network's mixed filter transforms first.
   */
  private async takeMixed(
    rec: GpuRecorder,
    shape: { n: number; ci: number; co: number; h: number; w: number },
    tile: { m: LargeTile; kernels: WinoKernels | null } | null,
  ): Promise<void> {
    const alpha = mixedAlpha(shape.h, shape.w);
    if (this.winogradMixed === "off" || !alpha || !this.tiled) return;
    // The mixed transforms are 3.6x F(7x7)'s (289 rows against 81: 2.9 GB for the 19 x 256
    // network), past the quarter of the largest buffer the square tiles keep to (the H200's is
    // 4.29 GB): they are taken where they fit one largest buffer.
    if (this.filterBytes(alpha) > this.ctx.device.limits.maxBufferSize) return;
    const own = tile
      ? tile.kernels
      : await pickWinoKernels(this.ctx, this.kernels, rec.half, 4, shape, this.winogradGemm);
    const k = await pickMixed(
      this.ctx,
      this.kernels,
      rec.half,
      shape,
      tile?.m ?? 4,
      own,
      this.winogradMixed,
    );
    if (!k) return;
    this.ensureFiltersMixed(k);
    const { n, ci, co, h, w } = shape;
    rec.mixedChoice.set(directShapeKey(n, ci, co, h, w, 3, rec.half !== null), k);
  }

  /**
   * Makes (once) the mixed-tile filter transforms of the folded 3x3 convs (filtersMixed) with k's
   * filter kernel, and records them to be remade whenever the folds are.
   */
  private ensureFiltersMixed(k: MixedKernels): void {
    if (this.foldMixedRec) return;
    this.refreshFolds();
    const { filters, rec } = this.makeFilterSet(
      k.tiling.alpha,
      "winoMixed",
      (r, w, u) => r.mixedFilter(w, u, k),
    );
    this.filtersMixed = filters;
    this.foldMixedRec = rec;
  }
  private filtersMixed = new Map<GpuTensor, GpuTensor>();
  private foldMixedRec: GpuRecorder | null = null;

  /**
   * The large tiles an inference plan may run a layer at where the selection table says F(4x4):
   * the forced one (forcedLarge), else on hardware adapters each tile whose policy is "tuned".
   */
  private mayTakeLarge(): LargeTile[] {
    if (this.winograd !== "auto" || !this.fused || !this.tiled) return [];
    const forced = this.forcedLarge();
    if (forced) return [forced];
    if (this.ctx.report.isFallback) return [];
    return this.tunedLarge();
  }

  /** The large tile set "on" (winograd7's before winograd6's), else null. */
  private forcedLarge(): LargeTile | null {
    return this.winograd7 === "on" ? 7 : this.winograd6 === "on" ? 6 : null;
  }

  /** The large tiles whose policy (winograd6, winograd7) is not "off". */
  private largeOn(): LargeTile[] {
    const on: LargeTile[] = [];
    if (this.winograd6 !== "off") on.push(6);
    if (this.winograd7 !== "off") on.push(7);
    return on;
  }

  /** The large tiles the inference tuners may time beside F(4x4): largeOn whose transforms fit. */
  private tunedLarge(): LargeTile[] {
    return this.largeOn().filter((m) => this.filtersFit(m));
  }

  /**
   * Whether a batch-`size` inference layer of `shape` that the selection table runs as F(4x4)
   * runs at a large tile (see winograd6, winograd7), with its tuned kernels (null: the built-in
   * GEMM; `tile` null: stay at F(4x4)), and whether the same comparison found it faster unbridged
   * or with column-staged bridges at its tile (bridges on, no tile forced).
   */
  private async largeTile(
    rec: GpuRecorder,
    shape: { n: number; ci: number; co: number; h: number; w: number },
  ): Promise<
    {
      tile: { m: LargeTile; kernels: WinoKernels | null } | null;
      unbridged: boolean;
      staged: boolean;
    }
  > {
    const large = this.mayTakeLarge(), forced = this.forcedLarge();
    const plain = { unbridged: false, staged: false };
    if (!large.length) return { tile: null, ...plain };
    if (forced) {
      const kernels = await pickWinoKernels(
        this.ctx,
        this.kernels,
        rec.half,
        forced,
        shape,
        this.winogradGemm,
      );
      return { tile: { m: forced, kernels }, ...plain };
    }
    const tile = await pickLargeBatchWinograd(
      this.ctx,
      this.kernels,
      rec.half,
      shape,
      this.winogradGemm,
      this.winogradBridge,
      large,
    );
    // The same comparison (cached) says whether the layer runs faster unbridged at its tile, or
    // with column-staged bridges.
    const joins = this.winogradBridge
      ? await pickLargeBatchBridges(
        this.ctx,
        this.kernels,
        rec.half,
        shape,
        this.winogradGemm,
        large,
      )
      : plain;
    return { tile, ...joins };
  }

  /**
   * Sets the tiles of the training layers the selection table runs as F(4x4) where winograd6 and
   * winograd7 say so: the tile set "on" throughout (forcedLarge); else on hardware adapters each
   * pass's fastest of F(4x4) and the "tuned" tiles (pickTrainTile): the forward and input-gradient
   * convs in rec.winoOverride, the weight gradient in rec.wgradOverride. f32 training only: f16
   * training keeps F(4x4).
   */
  private async trainTiles(rec: GpuRecorder, size: number): Promise<void> {
    const c = this.config;
    if (this.winograd !== "auto" || !this.tiled || rec.trainHalf) return;
    // Training makes its filter transforms each step: no network-held transforms to fit. Where no
    // tile is forced, "on" is absent and largeOn is the tiles set "tuned".
    const large = this.largeOn();
    const forced = this.forcedLarge();
    if (!forced && (this.ctx.report.isFallback || !large.length)) return;
    for (const [conv] of foldedLayers(c)) {
      const [co, ci, k] = this.net.params.get(conv)!.shape;
      if (k !== 3 || chooseWinograd(this.winograd, size, c.height, c.width, ci, co) !== 4) continue;
      const key = directShapeKey(size, ci, co, c.height, c.width, 3, false);
      if (rec.winoOverride.has(key)) continue;
      const shape = { n: size, ci, co, h: c.height, w: c.width };
      const t: TrainTiles | null = forced
        ? { forward: forced, inputGrad: forced, wgrad: forced }
        : await pickTrainTile(
          this.ctx,
          this.kernels,
          shape,
          this.winogradGemm ?? this.wgradGemm,
          large,
        );
      if (!t) continue;
      for (const m of new Set(Object.values(t))) {
        await ensureWinogradTile(this.ctx, this.kernels, null, m);
      }
      rec.winoOverride.set(key, t.forward);
      rec.wgradOverride.set(key, t.wgrad);
      const swapped = directShapeKey(size, co, ci, c.height, c.width, 3, false);
      if (!rec.winoOverride.has(swapped)) rec.winoOverride.set(swapped, t.inputGrad);
    }
  }

  /**
   * Whether the tuner may take large tile m in inference: the network then keeps filter
   * transforms at F(4x4) and at m ((m+2)^2/36 the size of F(4x4)'s), so only where all of m's fit
   * a quarter of the adapter's largest buffer.
   */
  private filtersFit(m: LargeTile): boolean {
    return this.filterBytes((m + 2) * (m + 2)) <= this.ctx.device.limits.maxBufferSize / 4;
  }

  /** Bytes of the filter transforms of every 3x3 conv (f32) with `rows` rows ((m+2)^2 at F(m)). */
  private filterBytes(rows: number): number {
    let total = 0;
    for (const [conv] of foldedLayers(this.config)) {
      const [co, ci, k] = this.net.params.get(conv)!.shape;
      if (k === 3) total += rows * co * ci * 4;
    }
    return total;
  }

  /**
   * Makes (once per tile) large tile m's filter transforms of the folded 3x3 convs (filtersLarge),
   * from the folded weights, and records them to be remade whenever the folds are.
   */
  private ensureFiltersLarge(m: LargeTile): Promise<void> {
    // Plans recorded concurrently share one making.
    let made = this.filtersMade.get(m);
    if (!made) {
      made = this.makeFiltersLarge(m);
      this.filtersMade.set(m, made);
      made.catch(() => this.filtersMade.delete(m));
    }
    return made;
  }
  private readonly filtersMade = new Map<LargeTile, Promise<void>>();

  private async makeFiltersLarge(m: LargeTile): Promise<void> {
    await ensureWinogradTile(this.ctx, this.kernels, this.half, m);
    this.refreshFolds();
    const { filters, rec } = this.makeFilterSet(
      (m + 2) * (m + 2),
      `wino${m}`,
      (r, w, u) => r.winogradFilter(w, u, m),
    );
    this.filtersLarge.set(m, filters);
    this.foldLargeRecs.set(m, rec);
  }

  /**
   * Filter transforms of `rows` rows for every folded 3x3 conv, written by `record` in a recorder
   * submitted now (and again whenever the folds are remade), by the conv's F(4x4) transform.
   */
  private makeFilterSet(
    rows: number,
    label: string,
    record: (rec: GpuRecorder, w: GpuTensor, u: GpuTensor) => void,
  ): { filters: Map<GpuTensor, GpuTensor>; rec: GpuRecorder } {
    const rec = new GpuRecorder(this.ctx, this.kernels, this.pool, this.tiled);
    const filters = new Map<GpuTensor, GpuTensor>();
    for (const [conv, w] of this.foldedF32) {
      const [co, ci] = w.shape;
      const u: GpuTensor = {
        shape: [rows, co, ci],
        buffer: storageBuffer(this.ctx, rows * co * ci * 4, `${conv}.${label}`),
        size: rows * co * ci,
      };
      this.owned.push(u);
      record(rec, w, u);
      filters.set(this.folded.get(conv)!.u!, u);
    }
    rec.submit();
    return { filters, rec };
  }

  /**
   * Compiles the bridges a batch-`size` inference plan's tower chain can use (GpuRecorder.bridges;
   * column-staged for shapes in rec.stagedBridges).
   */
  private async loadBridges(rec: GpuRecorder, size: number): Promise<void> {
    const c = this.config, m = winogradSettingTile(this.winograd);
    if (!m) return;
    // A layer's tile: the setting's, or a large tile where the plan overrides it (filtersLarge
    // exist then; the folds, and with them the transforms convFused is handed, are made after
    // this).
    const key = (conv: string) => {
      const [co, ci, k] = this.net.params.get(conv)!.shape;
      const t = k === 3 ? rec.winoTileOf(size, ci, co, c.height, c.width) : 0;
      if (!t || (t !== m && !((t === 6 || t === 7) && this.foldLargeRecs.has(t)))) return null;
      return { t, ci, co, key: winoShapeKey(t, size, ci, co, c.height, c.width) };
    };
    const plan = (at: ReturnType<typeof key>) =>
      !at || rec.unbridged.has(at.key)
        ? null
        : rec.winoPlanOf(size, at.ci, at.co, c.height, c.width, (at.t + 2) * (at.t + 2));
    for (const l of towerChain(c)) {
      if (!l.next) continue;
      const from = key(l.conv);
      if (from && this.bridgeStyle === "staged") rec.stagedBridges.add(from.key);
      const staged = from !== null && rec.stagedBridges.has(from.key);
      const to = plan(key(l.next));
      const spec = rec.bridgeSpec(plan(from), to, c.height, c.width, l.keepY, staged);
      if (spec) rec.bridges.set(bridgeName(spec), await loadWinogradBridge(this.ctx, spec));
    }
  }

  /**
   * uploadAhead's upload of an inference call: planes and packed mask into the plan's next staging
   * pair, flushed to the queue now; returns the encoder that copies them into the plan's inputs,
   * the op the plan then skips (see inputUpload) and the packed mask.
   */
  private uploadAheadOf(plan: GpuPlan, batch: NetBatch): Uploaded & { enc: GPUCommandEncoder } {
    if (!plan.ahead) {
      const make = (bytes: number, label: string) =>
        this.ctx.device.createBuffer({ size: bytes, usage: 0x4 | 0x8, label }); // COPY_SRC | COPY_DST
      const [n, planes, h, w] = plan.x.shape;
      const x = Math.max(plan.x.size, sparseLayout(n, planes, h * w).words) * 4;
      plan.ahead = {
        x: [0, 1].map(() => make(x, "nn.input.ahead")),
        mask: [0, 1].map(() => make(plan.mask.size * 4, "nn.mask.ahead")),
        next: 0,
      };
    }
    const a = plan.ahead, k = a.next;
    a.next = 1 - k;
    const mask = this.packedMask(plan, batch), input = this.inputUpload(plan, batch, true);
    writeBuffer(this.ctx, a.x[k], input.data);
    writeBuffer(this.ctx, a.mask[k], mask);
    this.ctx.device.queue.submit([]);
    plan.maskOnes = false;
    if (plan.moveCells) writeBuffer(this.ctx, plan.moveCells.buffer, this.paddedCells(plan, batch));
    const enc = this.ctx.device.createCommandEncoder();
    enc.copyBufferToBuffer(a.x[k], 0, input.buffer, 0, Math.ceil(input.data.byteLength / 4) * 4);
    enc.copyBufferToBuffer(a.mask[k], 0, plan.mask.buffer, 0, mask.byteLength);
    return { enc, skip: input.skip, mask, expand: input.expand };
  }

  /**
   * The batch's mask packed as bits (src/nn/mask_bits.ts), its rows only: packed into the plan's
   * scratch, or all legal (cached per batch size) where the batch has none.
   */
  private packedMask(plan: GpuPlan, batch: NetBatch): Uint32Array {
    const moves = this.config.moves, words = batch.size * maskWords(moves);
    if (batch.mask) {
      return packMask(batch.mask, batch.size, moves, plan.maskBits).subarray(0, words);
    }
    let ones = this.ones.get(batch.size);
    if (!ones) this.ones.set(batch.size, ones = allLegalMask(batch.size, moves));
    return ones;
  }

  /**
   * Where a call's planes go and what is written there: f32 planes into the plan's input; f16
   * planes, where the plan has a halfInput, into its cast's output as they are (f16 storage) or
   * widened (f16 emulated with f32 storage), the cast then skipped; else widened into the input.
   * An inference call (`infer`) that may upload sparse (see sparseUpload) and fits writes its
   * packed planes instead, and returns the expansion into that same place.
   */
  private inputUpload(
    plan: GpuPlan,
    batch: NetBatch,
    infer = false,
  ): {
    buffer: GPUBuffer;
    data: Float32Array | Uint16Array | Uint32Array;
    skip: number;
    expand: Expand | null;
  } {
    const planes = batch.planes;
    const half = isHalfPlanes(planes) ? plan.rec.halfInput : null;
    const target = half ? half.y.buffer : plan.x.buffer, skip = half ? half.op : -1;
    const [n, p, h, w] = plan.x.shape;
    if (infer && this.sparseUpload && n >= this.sparseMinBatch) {
      const sparse = plan.sparse ??= new SparseUpload(this.ctx, n, p, h * w);
      const data = sparse.pack(planes);
      if (data) {
        const pipeline = half ? this.half!.expandPlanesH : this.kernels.expandPlanes;
        this.sparseCalls++;
        return { buffer: sparse.buffer, data, skip, expand: { sparse, pipeline, target } };
      }
    }
    const data = half && this.precision === "f16"
      ? halfBits(planes as Float16Array)
      : planesF32(planes);
    return { buffer: target, data, skip, expand: null };
  }

  private upload(plan: GpuPlan, batch: NetBatch, infer = false): Uploaded {
    const input = this.inputUpload(plan, batch, infer);
    writeBuffer(this.ctx, input.buffer, input.data);
    // The plan's input buffers are its own (never released to the pool): a mask of all ones
    // written by an earlier call is still there.
    let mask: Uint32Array | null = null;
    if (batch.mask || !plan.maskOnes) {
      writeBuffer(this.ctx, plan.mask.buffer, mask = this.packedMask(plan, batch));
    }
    plan.maskOnes = !batch.mask;
    if (plan.moveCells) writeBuffer(this.ctx, plan.moveCells.buffer, this.paddedCells(plan, batch));
    if (plan.policyTarget && batch.policy) {
      writeBuffer(this.ctx, plan.policyTarget.buffer, batch.policy);
    }
    if (plan.valueTarget && batch.value) {
      writeBuffer(this.ctx, plan.valueTarget.buffer, batch.value);
    }
    return { skip: input.skip, mask, expand: input.expand };
  }

  /** The batch's move table at the plan's width: each position's rows, then -1 padding rows. */
  private paddedCells(plan: GpuPlan, batch: NetBatch): Float32Array {
    const t = batch.moveCells!, w = batch.moveCellsWidth!, cap = plan.cellWidth;
    if (w === cap) return t;
    const out = new Float32Array(batch.size * cap * 4).fill(-1);
    for (let r = 0; r < batch.size; r++) {
      out.set(t.subarray(r * w * 4, (r + 1) * w * 4), r * cap * 4);
    }
    return out;
  }

  /**
   * Runs `work` and reports a failure caused by a lost device as gpu_lost (work on a lost device
   * fails with odd errors, or none); refuses at once once the device is known to be lost.
   */
  private async guarded<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.ctx.lost) throw await lostDeviceError(this.ctx, what);
    try {
      return await work();
    } catch (e) {
      throw await deviceFailure(this.ctx, what, e);
    }
  }

  /** GPU inference; batches larger than one storage binding allows are split into chunks. */
  infer(batch: NetBatch): Promise<NetOutputs> {
    return this.guarded("inference", () => this.inferOn(batch));
  }

  private async inferOn(batch: NetBatch): Promise<NetOutputs> {
    checkBatch(this.config, batch, false);
    const cellWidth = this.cellWidthFor(batch.moveCellsWidth);
    const c = this.config, chunk = Math.min(this.maxBatch(), this.inferCap);
    if (batch.size > chunk) return await this.inferChunked(batch, chunk);
    let plan: GpuPlan;
    try {
      plan = await this.plan(batch.size, false, cellWidth);
    } catch (e) {
      this.halveCap(e, batch.size);
      return await this.inferChunked(batch, this.inferCap);
    }
    const t0 = performance.now();
    if (this.fused) this.refreshFolds();
    const up = this.uploadAhead
      ? this.uploadAheadOf(plan, batch)
      : { enc: undefined, ...this.upload(plan, batch, true) };
    const { skip, mask, expand } = up;
    let enc = up.enc;
    if (expand) {
      enc ??= this.ctx.device.createCommandEncoder();
      expand.sparse.encode(enc, expand.pipeline, expand.target);
    }
    // The compact readback where every row's legal moves fit (with the mask it needs kept: the
    // plan's packing scratch serves the next call).
    const compact = plan.compact && this.compactReadback && batch.mask && mask &&
        maxLegal(mask, batch.size, c.moves) <= plan.compact.shape[1]
      ? { t: plan.compact, bits: mask.slice() }
      : null;
    if (compact) this.compactCalls++;
    const prof = this.readback.profile;
    const t1 = prof ? performance.now() : 0;
    if (prof) prof.upload += t1 - t0;
    // The plan and its readback copies in one submit, all before the first yield (see the class
    // comment); when its map is requested: see ReadbackQueue.
    const pending = this.readback.submit(
      plan.rec.encoded(enc, skip),
      [compact?.t ?? plan.out.probs, plan.out.value],
      t1,
    );
    this.hostTime.calls++;
    this.hostTime.ms += performance.now() - t0;
    const [probs, value] = await pending;
    return {
      probs: compact
        ? scatterCompact(probs, compact.bits, batch.size, c.moves, compact.t.shape[1])
        : probs.subarray(0, batch.size * c.moves),
      value: value.subarray(0, batch.size),
    };
  }

  private async inferChunked(batch: NetBatch, chunk: number): Promise<NetOutputs> {
    const c = this.config, per = c.planes * c.height * c.width;
    const probs = new Float32Array(batch.size * c.moves), value = new Float32Array(batch.size);
    const cw = (batch.moveCellsWidth ?? 0) * 4;
    for (let s = 0; s < batch.size; s += chunk) {
      const n = Math.min(chunk, batch.size - s);
      const r = await this.infer({
        size: n,
        planes: batch.planes.subarray(s * per, (s + n) * per),
        mask: batch.mask?.subarray(s * c.moves, (s + n) * c.moves),
        moveCells: batch.moveCells?.subarray(s * cw, (s + n) * cw),
        moveCellsWidth: batch.moveCellsWidth,
      });
      probs.set(r.probs, s * c.moves);
      value.set(r.value, s);
    }
    return { probs, value };
  }

  /**
   * One GPU training step: forward, backward and SGD in one submit, one batched readback (its map
   * requested at once when `last`, see PolicyValueNet.trainStep).
   */
  trainStep(batch: NetBatch, hyper: SgdHyper, last = false): Promise<TrainStats> {
    return this.guarded("training step", () => this.trainOn(batch, hyper, last));
  }

  private async trainOn(batch: NetBatch, hyper: SgdHyper, last: boolean): Promise<TrainStats> {
    checkBatch(this.config, batch, true);
    const cellWidth = this.cellWidthFor(batch.moveCellsWidth);
    if (batch.size > this.maxBatch()) {
      throw new KibitzError(
        "batch_too_large",
        `training batch ${batch.size} exceeds ${this.maxBatch()} on this adapter`,
      );
    }
    const plan = await this.plan(batch.size, true, cellWidth);
    this.foldDirty = true;
    this.upload(plan, batch);
    writeBuffer(
      this.ctx,
      plan.rec.hyper,
      new Float32Array([hyper.lr, hyper.momentum, hyper.weightDecay, 0]),
    );
    // No yield between the upload above and this submit (see the class comment); the step's map
    // is requested when the next step is submitted, or alone or last at once (see ReadbackQueue).
    const [pl, vl, sq] = await this.trainReadback.submit(
      plan.rec.encoded(),
      [
        plan.out.policyLoss!,
        plan.out.valueLoss!,
        plan.l2!,
      ],
      0,
      last,
    );
    const l2 = 0.5 * hyper.weightDecay * sq.reduce((s, v) => s + v, 0);
    return trainStats(pl.subarray(0, batch.size), vl.subarray(0, batch.size), l2);
  }

  /** Reads every parameter and running statistic back in one batched readback. */
  async weights(): Promise<NetWeights> {
    const specs = this.net.specs;
    const data = await this.guarded(
      "reading the weights",
      () => readTensors(this.ctx, specs.map((s) => this.net.params.get(s.name)!)),
    );
    const tensors = new Map<string, CpuTensor>();
    specs.forEach((s, i) => tensors.set(s.name, cpuTensor(s.shape, data[i])));
    return { config: { ...this.config }, specs, tensors };
  }

  /** Reads the momentum buffers back in one batched readback. */
  async velocity(): Promise<Map<string, Float32Array>> {
    const names = [...this.net.velocity!.keys()];
    const data = await this.guarded(
      "reading the momentum",
      () => readTensors(this.ctx, names.map((n) => this.net.velocity!.get(n)!)),
    );
    return new Map(names.map((n, i) => [n, data[i]]));
  }

  /** Uploads momentum buffers. */
  setVelocity(v: Map<string, Float32Array>): void {
    checkVelocity(this.net.specs, v);
    for (const [k, data] of v) writeBuffer(this.ctx, this.net.velocity!.get(k)!.buffer, data);
  }

  /** The keys of the plans recorded so far ("infer:SIZE[:cellsWIDTH]", "train:SIZE..."). */
  planKeys(): string[] {
    return [...this.plans.keys()];
  }

  /** Records the inference plans of `sizes` (each split as infer would) at the current table width. */
  prepare(sizes: readonly number[]): Promise<void> {
    return this.guarded("preparing plans", () => this.prepareOn(sizes));
  }

  private async prepareOn(sizes: readonly number[]): Promise<void> {
    const width = this.cellWidthFor(undefined);
    for (const size of sizes) {
      if (!Number.isInteger(size) || size < 1) {
        throw new KibitzError(
          "bad_batch",
          `prepare: batch sizes are positive integers, got ${size}`,
        );
      }
      // The plans infer will take: halved, as infer does, while the device cannot hold one.
      for (;;) {
        const chunk = Math.min(this.maxBatch(), this.inferCap), first = Math.min(size, chunk);
        try {
          await this.plan(first, false, width);
          if (size > chunk && size % chunk) await this.plan(size % chunk, false, width);
          break;
        } catch (e) {
          this.halveCap(e, first);
        }
      }
    }
  }

  /** Encodes a recorded plan (for benchmarks that time it inside one pass). */
  async planFor(size: number, train: boolean): Promise<GpuRecorder> {
    return (await this.plan(size, train, this.cellWidthFor(undefined))).rec;
  }

  /** Frees every buffer of the network and its plans. */
  dispose(): void {
    this.readback.destroy();
    this.trainReadback.destroy();
    for (const p of this.live) {
      p.rec.destroy();
      for (const b of [...p.ahead?.x ?? [], ...p.ahead?.mask ?? []]) b.destroy();
      p.sparse?.destroy();
    }
    this.live.length = 0;
    this.plans.clear();
    this.foldRec?.destroy();
    this.foldRec = null;
    for (const r of this.foldLargeRecs.values()) r.destroy();
    this.foldLargeRecs.clear();
    this.filtersMade.clear();
    this.filtersLarge.clear();
    this.foldMixedRec?.destroy();
    this.foldMixedRec = null;
    this.filtersMixed.clear();
    this.pool.destroy();
    for (const t of this.owned) t.buffer.destroy();
    this.owned.length = 0;
  }
}
