import { KibitzError } from "../../errors.ts";
import { describeAdapter, type GpuContext } from "../../gpu/device.ts";
import { type GpuArray, readStaging, storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { type BindingKind, computePipeline } from "../../gpu/pipeline.ts";
import { withErrorScope, withValidation } from "../../gpu/error_scope.ts";
import { withRollback } from "../../gpu/owned.ts";
import { type CfrExploitability, dealMass } from "../evaluate.ts";
import type { CfrGame } from "../game.ts";
import type { CfrSolver, SolverOptions } from "../solver.ts";
import type { QuantStore } from "../../quant/store.ts";
import {
  type CfrAlgorithm,
  DCFR_PAPER,
  defaultDiscount,
  type DiscountParams,
  iterationDiscount,
} from "../schedule.ts";
import { CFR_CHANCE, CFR_TERMINAL, type PublicTree } from "../tree.ts";
import {
  cfrKernels,
  DISC_MODE,
  DISC_WORDS,
  MODE_BR,
  MODE_EV,
  MODE_TRAIN,
  NODE_WORDS,
  WG,
} from "./kernels.ts";
import { buildTables, type GpuTables, isPokerSource } from "./tables.ts";
import { type ChunkPlan, planChunks } from "./chunks.ts";
import {
  defaultRounding,
  formatInfo,
  payloadWords,
  type QuantFormat,
  regretFormat,
  type Rounding,
  strategyFormat,
} from "../../quant/format.ts";
import { QUANT_CODEC_WGSL } from "../../quant/gpu.ts";
import { regretsNonNegative } from "../schedule.ts";

const BINDINGS: BindingKind[] = [
  "uniform-dynamic",
  "uniform-dynamic",
  "read-only-storage",
  "storage",
  "storage",
  "storage",
  "storage",
  "storage",
  "storage",
  "storage",
];
const QUANT_BINDINGS: BindingKind[] = [...BINDINGS, "storage", "storage"];
const ENTRIES = [
  "init",
  "down",
  "dense",
  "fold",
  "showdown",
  "up",
  "accum",
  "settle",
  "result",
] as const;
type Entry = string;
/** Seeds of the strategy and prediction rounding keys: the CPU engine's (src/cfr/solver.ts). */
const STRATEGY_SALT = 0x5bd1e995, PREDICT_SALT = 0x27d4eb2f;
/** Workgroups of the grid-stride terminal kernels (the showdown scratch is per workgroup). */
const FOLD_GROUPS = 8192, SD_GROUPS = 4096, SD_GROUPS_TIGHT = 128;
/** Bytes between two dispatches' parameters in the params buffer (dynamic uniform offsets). */
const PARAM_STRIDE = 256;
/** Smallest chunk region the default plan aims for (see GpuSolveOptions). */
const MIN_CHUNK_BYTES = 256 * 2 ** 20;

/**
 * A recorded dispatch: entry, offset of its parameters, workgroups, and which per-iteration uniform
 * slot it reads (training: the iteration's; checks: the best-response or EV slot).
 */
export interface Command {
  entry: Entry;
  offset: number;
  groups: [number, number, number];
  disc: number;
}
/** Per-iteration uniform slots: TRAIN_SLOTS iterations of one submission, then the check modes. */
const TRAIN_SLOTS = 32,
  BR_SLOT = TRAIN_SLOTS,
  EV_SLOT = TRAIN_SLOTS + 1,
  DISC_SLOTS = TRAIN_SLOTS + 2;
/** Bytes between two slots of the per-iteration uniform (dynamic offsets). */
const DISC_STRIDE = 256;

/**
 * How much device memory a GPU solve may take: `memoryBudget` (bytes, the whole solve) picks the
 * fewest chunks that fit; `chunks` asks for about that many; neither: the default, chunks no larger
 * than max(256 MiB, the stores and tables), so the per-node vectors never dominate the footprint
 * while the dispatch count stays within a few times the unchunked one.
 */
export interface GpuSolveOptions {
  memoryBudget?: number;
  chunks?: number;
}

/** A GPU solve's memory plan: the chunking and the device bytes by part. */
export interface GpuSolvePlan {
  plan: ChunkPlan;
  bytes: number;
  parts: Record<string, number>;
  /** Workgroups of the showdown kernel (each with its scratch of card sums). */
  sdGroups: number;
}

/** Words of the block scales: scale, next scale and its inverse per block and store. */
function scaleWords(algorithm: CfrAlgorithm, blocks: number): number {
  return 3 * (algorithm === "pdcfr+" ? 3 : 2) * Math.max(1, blocks);
}

/** Stores, scales and tables of a solve: what does not shrink with chunking. */
function fixedParts(
  tree: PublicTree,
  algorithm: CfrAlgorithm,
  formats: [QuantFormat, QuantFormat],
  auxBytes: number,
): Record<string, number> {
  let elems = 0;
  for (let b = 0; b < tree.blockSize.length; b++) elems += tree.blockSize[b];
  const [rf, sf] = formats;
  const quant = rf !== "f32" || sf !== "f32";
  const w = (f: QuantFormat) => Math.max(4, payloadWords(f, elems) * 4);
  return {
    "regret store": w(rf),
    "strategy store": w(sf),
    "prediction store": algorithm === "pdcfr+" ? w(rf) : 4,
    "block scales": quant ? scaleWords(algorithm, tree.blockNode.length) * 4 : 0,
    "tables": auxBytes,
  };
}

/**
 * Estimated aux bytes of `tree` (node table, lists, deal masks, terminal and board tables) when the
 * tables are not built: board tables are guessed from the chance depth (1, 48 or 1,128 boards).
 */
export function estimateAuxBytes(tree: PublicTree): number {
  const hm = Math.max(tree.numHands[0], tree.numHands[1]), aw = Math.ceil(hm / 32);
  let deals = 0, terms = 0, chanceDepth = 0;
  const cd = new Uint8Array(tree.size);
  for (let n = 1; n < tree.size; n++) {
    const p = tree.parent[n];
    cd[n] = cd[p] + (tree.kind[p] === CFR_CHANCE ? 1 : 0);
    chanceDepth = Math.max(chanceDepth, cd[n]);
    if (tree.kind[p] === CFR_CHANCE) deals++;
    if (tree.kind[n] === CFR_TERMINAL) terms++;
  }
  const boards = [1, 48, 1128][Math.min(2, chanceDepth)];
  const words = tree.size * (NODE_WORDS + 4) + 4 * tree.blockNode.length + deals * (2 * aw + 4) +
    5 * terms + boards * 2 * (6 * hm + 53) + tree.isoWeight.length * 3 +
    tree.permutations.length * hm;
  return 4 * words;
}

/**
 * Plans a GPU solve of `tree`: chunking and device bytes (stores, tables, vectors, instant regrets,
 * scratch, dispatch parameters). `auxBytes`: the built tables' size (estimated when absent);
 * `chunkable`: false for games without poker terminals (dense payoffs: one chunk).
 */
export function planGpuSolve(
  tree: PublicTree,
  algorithm: CfrAlgorithm,
  formats: [QuantFormat, QuantFormat],
  options: GpuSolveOptions = {},
  auxBytes = estimateAuxBytes(tree),
  chunkable = true,
  maxNT = Math.max(tree.numHands[0], tree.numHands[1]),
): GpuSolvePlan {
  const hm = Math.max(tree.numHands[0], tree.numHands[1]);
  const quant = formats[0] !== "f32" || formats[1] !== "f32";
  const fixed = fixedParts(tree, algorithm, formats, auxBytes);
  let fixedBytes = 0;
  for (const v of Object.values(fixed)) fixedBytes += v;
  // Poker games keep reach and values in one buffer (KernelLayout.inPlace), others in two.
  const vectors = chunkable ? 1 : 2;
  const costs = { rowBytes: vectors * hm * 4, elemBytes: quant ? 8 : 0 };
  // Under a budget, fewer showdown workgroups (smaller scratch; they loop over more nodes each).
  const sdCap = options.memoryBudget !== undefined ? SD_GROUPS_TIGHT : SD_GROUPS;
  const measure = (plan: ChunkPlan): GpuSolvePlan => {
    let sd = 1, dispatches = 8;
    for (const seg of plan.segments) {
      sd = Math.max(sd, Math.min(seg.terminals.length, sdCap));
      for (const l of seg.down) if (l.length) dispatches += 2;
      for (const l of seg.up) if (l.length) dispatches += 2;
      dispatches += 10;
    }
    const parts = {
      ...fixed,
      "node vectors (reach + values)": vectors * plan.rows * hm * 4,
      "instant regrets": quant ? 2 * Math.max(1, plan.inpHalf) * 4 : 0,
      "scratch": 4 * (sd * 2 * maxNT + 4 * hm),
      "dispatch parameters": PARAM_STRIDE * dispatches,
      "iteration uniforms": DISC_SLOTS * DISC_STRIDE,
    };
    let bytes = 64;
    for (const v of Object.values(parts)) bytes += v;
    return { plan, bytes, parts, sdGroups: sd };
  };
  if (!chunkable) return measure(planChunks(tree, costs, {}));
  if (options.chunks !== undefined) {
    return measure(planChunks(tree, costs, { chunks: options.chunks }));
  }
  if (options.memoryBudget === undefined) {
    return measure(planChunks(tree, costs, { chunkBytes: Math.max(MIN_CHUNK_BYTES, fixedBytes) }));
  }
  // The fewest chunks within the budget: the largest chunk size that fits, by bisection (more
  // chunks as the size shrinks; the bytes follow, up to the parameters of the extra dispatches).
  const budget = options.memoryBudget;
  const whole = measure(planChunks(tree, costs, {}));
  if (whole.bytes <= budget) return whole;
  let lo = 0, hi = whole.bytes, best: GpuSolvePlan | null = null;
  for (let k = 0; k < 24 && hi - lo > Math.max(1, hi / 200); k++) {
    const mid = (lo + hi) / 2, got = measure(planChunks(tree, costs, { chunkBytes: mid }));
    if (got.bytes <= budget) best = got, lo = mid;
    else hi = mid;
  }
  return best ?? measure(planChunks(tree, costs, { chunkBytes: 0 }));
}

/** Device bytes of a GPU solve of `tree` (default plan unless `options` say otherwise). */
export function gpuSolveBytes(
  tree: PublicTree,
  algorithm: CfrAlgorithm,
  formats: [QuantFormat, QuantFormat] = ["f32", "f32"],
  options: GpuSolveOptions = {},
): number {
  return planGpuSolve(tree, algorithm, formats, options).bytes;
}

/**
 * The recorded steps of one iteration (both traversers) and of one exploitability check, and the
 * distinct dispatch parameters they use (in the order of their offsets).
 */
export function buildCommands(
  tree: PublicTree,
  tables: GpuTables,
  plan: ChunkPlan,
  stores: string[],
  quant: boolean,
  sdGroups: number,
  maxDim: number,
): { train: Command[]; evaluate: Command[]; paramSets: number[][] } {
  const hm = tables.layout.hm;
  const groups1d = (n: number, size: number): [number, number, number] => {
    const groups = Math.max(1, Math.ceil(n / size));
    if (groups <= maxDim) return [groups, 1, 1];
    const y = Math.ceil(groups / maxDim);
    return [Math.ceil(groups / y), y, 1];
  };
  // Per-dispatch parameters, deduplicated, at PARAM_STRIDE apart in one uniform buffer.
  const paramSets: number[][] = [];
  const paramAt = new Map<string, number>();
  const offsetFor = (words: number[]): number => {
    const key = words.join(",");
    let at = paramAt.get(key);
    if (at === undefined) {
      at = paramSets.length * PARAM_STRIDE;
      paramAt.set(key, at);
      paramSets.push(words);
    }
    return at;
  };
  const levels = tree.levels;
  const pass = (p: 0 | 1, mode: number, slot: number): Command[] => {
    const out: Command[] = [];
    const disc = mode === MODE_BR ? BR_SLOT : mode === MODE_EV ? EV_SLOT : 0;
    const add = (entry: Entry, words: number[], groups: [number, number, number]) => {
      out.push({ entry, offset: offsetFor(words), groups, disc });
    };
    const ho = tree.numHands[1 - p];
    const down = (s: number, from: number) => {
      for (let d = from; d < levels; d++) {
        const [at, n] = tables.lists[s].down[d];
        if (n > 0) add("down", [at, n, p], groups1d(n * ho, WG));
      }
    };
    const terminals = (s: number) => {
      const r = tables.ranges[s];
      if (r.dense[1] > 0) {
        add("dense", [r.dense[0], r.dense[1], p], groups1d(r.dense[1] * hm, WG));
      }
      if (r.fold[1] > 0) {
        add("fold", [r.fold[0], r.fold[1], p], [Math.min(r.fold[1], FOLD_GROUPS), 1, 1]);
      }
      if (r.showdown[1] > 0) {
        add("showdown", [r.showdown[0], r.showdown[1], p], [
          Math.min(r.showdown[1], sdGroups),
          1,
          1,
        ]);
      }
    };
    const up = (s: number) => {
      for (let d = levels - 1; d >= 0; d--) {
        const [at, n] = tables.lists[s].up[d];
        if (n > 0) add("up", [at, n, p], groups1d(n * hm, WG));
        if (plan.levelUpdates) update(s, d);
      }
      if (!plan.levelUpdates) update(s, -1);
    };
    // Store updates of segment s (d < 0) or of its level d (ChunkPlan.levelUpdates).
    const update = (s: number, d: number) => {
      if (!quant || mode !== MODE_TRAIN) return;
      const [at, n] = d < 0 ? tables.blockLists[s][p] : tables.levelBlockLists[s][d][p];
      if (n === 0) return;
      const q = [at, n, p, 0, 0, 0, d < 0 ? s : s * levels + d];
      for (const x of stores) {
        add(`reduce_${x}`, q, groups1d(n * 64, 64));
        add(`encode_${x}`, q, groups1d(n * 64, 64));
        add(`commit_${x}`, q, groups1d(n, 64));
      }
    };
    add("init", [0, 1, p], [Math.ceil(hm / WG), 1, 1]);
    down(0, 1);
    terminals(0);
    for (let s = 1; s < plan.segments.length; s++) {
      down(s, 0);
      terminals(s);
      up(s);
      const [at, n] = tables.parts[s];
      if (n > 0) add("accum", [at, n, p], groups1d(n * hm, WG));
    }
    if (tables.cutRows[1] > 0) {
      const [at, n] = tables.cutRows;
      add("settle", [at, n, p], groups1d(n * hm, WG));
    }
    up(0);
    if (mode !== MODE_TRAIN) add("result", [0, 0, p, 0, slot], [Math.ceil(hm / WG), 1, 1]);
    return out;
  };
  const train = [...pass(0, MODE_TRAIN, 0), ...pass(1, MODE_TRAIN, 0)];
  const evaluate: Command[] = [
    ...pass(0, MODE_BR, 0),
    ...pass(1, MODE_BR, 1),
    ...pass(0, MODE_EV, 2),
    ...pass(1, MODE_EV, 3),
  ];
  return { train, evaluate, paramSets };
}

/** Formats, tables and memory plan of a GPU solve (shared by the solver and dispatch counts). */
function prepareSolve(
  tree: PublicTree,
  game: CfrGame,
  options: SolverOptions,
  gpuOptions: GpuSolveOptions,
  maxDim = 65535,
) {
  const algorithm = options.algorithm ?? "dcfr";
  const signed = !regretsNonNegative(algorithm);
  const rf: QuantFormat = options.regretFormat ?? regretFormat(options.regretBits ?? 32, signed);
  if (signed && (rf === "u8" || rf === "u4" || rf === "u16")) {
    throw new KibitzError(
      "bad_format",
      `${algorithm} keeps negative regrets, which unsigned ${rf} cannot store; use a signed format or cfr+/dcfr+/pdcfr+`,
    );
  }
  const sf = strategyFormat(options.strategyBits ?? 32);
  const quant = rf !== "f32" || sf !== "f32";
  const kalg = algorithm === "dcfr" ? "dcfr" : algorithm === "pdcfr+" ? "pdcfr+" : "plus";
  // Plan with estimated tables, build them, then plan again with their real size.
  const chunkable = isPokerSource(game);
  const first = planGpuSolve(tree, algorithm, [rf, sf], gpuOptions, undefined, chunkable);
  let tables = buildTables(tree, game, kalg, first.plan);
  let planned = planGpuSolve(
    tree,
    algorithm,
    [rf, sf],
    gpuOptions,
    tables.aux.byteLength,
    chunkable,
    tables.layout.maxNT,
  );
  const shape = (p: ChunkPlan) => p.segments.map((g) => g.rows).join(",");
  if (shape(planned.plan) !== shape(first.plan)) {
    tables = buildTables(tree, game, kalg, planned.plan);
  }
  // Predictions after the regrets they are derived from.
  const stores = algorithm === "pdcfr+" ? ["R", "Q", "S"] : ["R", "S"];
  const build = () =>
    buildCommands(tree, tables, planned.plan, stores, quant, planned.sdGroups, maxDim);
  let commands = build();
  const budget = gpuOptions.memoryBudget;
  if (budget !== undefined && chunkable) {
    // The plan estimates the dispatch parameters from the train dispatches; the checks add their
    // own (an H200 F1 run at a 300 MB budget allocated 300.2 MB). Count them exactly, and plan
    // again below the budget by the overshoot while they push the solve over it.
    let target = budget;
    for (let k = 0;; k++) {
      const exact = Math.max(1, commands.paramSets.length) * PARAM_STRIDE;
      planned.bytes += exact - planned.parts["dispatch parameters"];
      planned.parts["dispatch parameters"] = exact;
      if (planned.bytes <= budget || k === 4) break;
      target -= planned.bytes - budget;
      const next = planGpuSolve(
        tree,
        algorithm,
        [rf, sf],
        { ...gpuOptions, memoryBudget: target },
        tables.aux.byteLength,
        chunkable,
        tables.layout.maxNT,
      );
      if (shape(next.plan) !== shape(planned.plan)) {
        tables = buildTables(tree, game, kalg, next.plan);
      }
      planned = next;
      commands = build();
    }
  }
  const sdGroups = planned.sdGroups;
  return { rf, sf, quant, tables, planned, sdGroups, stores, commands };
}

/**
 * Dispatches per iteration and per exploitability check, chunks and device bytes of a GPU solve,
 * computed on the host (no adapter): for planning and for reporting what a change saves.
 */
export function gpuSolveShape(
  tree: PublicTree,
  game: CfrGame,
  options: SolverOptions = {},
  gpuOptions: GpuSolveOptions = {},
  maxDim = 65535,
): {
  dispatches: number;
  checkDispatches: number;
  chunks: number;
  plan: GpuSolvePlan;
  paramSets: number;
} {
  const { planned, commands: c } = prepareSolve(tree, game, options, gpuOptions, maxDim);
  return {
    dispatches: c.train.length,
    checkDispatches: c.evaluate.length,
    chunks: Math.max(1, planned.plan.segments.length - 1),
    plan: planned,
    paramSets: c.paramSets.length,
  };
}

/**
 * The CFR engine's GPU backend: the tree, the per-node reach and value vectors and the regret and
 * strategy stores (any storage format) live in device buffers; an iteration is one submission of level-synchronous
 * dispatches (per traverser: a down pass, the terminals, an up pass that updates the traverser's
 * regrets and cumulative strategy) with no readback. Exploitability reads back one small row per
 * check. Same algorithms, discount schedules, storage formats and rounding keys as CfrSolver.
 */
export class GpuCfrSolver {
  /** Iterations done. */
  iteration = 0;
  readonly algorithm: CfrAlgorithm;
  readonly discount: DiscountParams;
  /** Bytes of device buffers this solver allocated. */
  readonly deviceBytes: number;
  /** Dispatches one iteration records (both traversers). */
  get dispatchesPerIteration(): number {
    return this.train.length;
  }
  /** Dispatches one exploitability check records (best responses and EVs of both players). */
  get dispatchesPerCheck(): number {
    return this.evaluate.length;
  }
  /** Chunks the lower tree is processed in (1: unchunked). */
  get chunks(): number {
    return Math.max(1, this.plan.plan.segments.length - 1);
  }
  /** Bytes of the regret and strategy (and prediction) payloads. */
  get storeBytes(): number {
    return this.regrets.size + this.strategy.size +
      (this.algorithm === "pdcfr+" ? this.predicted.size : 0);
  }
  private readonly buffers: GPUBuffer[];
  private readonly disc: GPUBuffer;
  private readonly bind: GPUBindGroup;
  /** The memory plan (chunking, bytes by part). */
  readonly plan: GpuSolvePlan;
  private readonly regrets: GPUBuffer;
  private readonly strategy: GPUBuffer;
  private readonly predicted: GPUBuffer;
  private readonly scratch: GPUBuffer;
  private readonly pipelines: Map<Entry, GPUComputePipeline>;
  private readonly train: Command[];
  private readonly evaluate: Command[];
  private readonly mass: number;
  private readonly elems: number;
  private readonly keys: number[];
  /** Regret and strategy formats. */
  readonly formats: [QuantFormat, QuantFormat];
  private readonly blocks: number;
  private readonly blockOffsets: Uint32Array;
  private readonly scales: GPUBuffer | null;

  private constructor(
    readonly ctx: GpuContext,
    readonly tree: PublicTree,
    readonly game: CfrGame,
    init: {
      algorithm: CfrAlgorithm;
      discount: DiscountParams;
      buffers: GPUBuffer[];
      storage: GPUBuffer[];
      disc: GPUBuffer;
      bind: GPUBindGroup;
      plan: GpuSolvePlan;
      pipelines: Map<Entry, GPUComputePipeline>;
      train: Command[];
      evaluate: Command[];
      bytes: number;
      elems: number;
      keys: number[];
      formats: [QuantFormat, QuantFormat];
      blocks: number;
      blockOffsets: Uint32Array;
    },
  ) {
    this.keys = init.keys;
    this.formats = init.formats;
    this.blocks = init.blocks;
    this.blockOffsets = init.blockOffsets;
    this.scales = init.storage[8] ?? null;
    this.algorithm = init.algorithm;
    this.discount = init.discount;
    this.buffers = init.buffers;
    this.disc = init.disc;
    this.bind = init.bind;
    this.plan = init.plan;
    this.pipelines = init.pipelines;
    this.train = init.train;
    this.evaluate = init.evaluate;
    this.deviceBytes = init.bytes;
    this.elems = init.elems;
    [this.regrets, this.strategy, this.predicted, this.scratch] = init.storage.slice(4);
    this.mass = dealMass(game);
  }

  /** Uploads `tree` and builds the kernels; refuses the options the GPU backend lacks by name. */
  static async create(
    ctx: GpuContext,
    tree: PublicTree,
    game: CfrGame,
    options: SolverOptions = {},
    gpuOptions: GpuSolveOptions = {},
  ): Promise<GpuCfrSolver> {
    refuseUnsupported(options);
    const algorithm = options.algorithm ?? "dcfr";
    const base = options.schedule === "paper" && (algorithm === "dcfr" || algorithm === "dcfr+")
      ? { ...DCFR_PAPER }
      : defaultDiscount(algorithm);
    const discount = { ...base, ...options.discount };
    const { rf, sf, quant, tables, planned, sdGroups, stores, commands } = prepareSolve(
      tree,
      game,
      options,
      gpuOptions,
      ctx.device.limits.maxComputeWorkgroupsPerDimension,
    );
    const plan = planned.plan;
    const budget = gpuOptions.memoryBudget;
    if (budget !== undefined && planned.bytes > budget) {
      throw new KibitzError(
        "gpu_too_large",
        `GPU solve: ${mib(planned.bytes)} of device memory at the finest chunking (${
          Math.max(1, plan.segments.length - 1)
        } chunks) exceeds the budget of ${mib(budget)} (${
          Object.entries(planned.parts).map(([k, v]) => `${k} ${mib(v)}`).join(", ")
        }); raise the budget, use smaller formats or the CPU backend`,
      );
    }
    const L = tables.layout;
    const hm = L.hm;
    L.results = sdGroups * 2 * L.maxNT;
    const elems = tables.blockOffsets[tables.blockOffsets.length - 1];
    const blocks = tree.blockNode.length;
    const aux = tables.aux;
    if (quant) {
      L.quant = {
        r: formatInfo(rf).code,
        s: formatInfo(sf).code,
        q: formatInfo(rf).code,
        blocks,
        inpHalf: Math.max(1, plan.inpHalf),
      };
    }
    const vecBytes = Math.max(1, plan.rows) * hm * 4;
    const valsBytes = L.inPlace ? 4 : vecBytes;
    const lim = ctx.device.limits;
    const storeBytes = (f: QuantFormat) => Math.max(4, payloadWords(f, elems) * 4);
    const sizes = {
      "node vectors (reach, values; each)": vecBytes,
      "regret store": storeBytes(rf),
      "strategy store": storeBytes(sf),
      "tables": aux.byteLength,
      "instant regrets": quant ? 2 * Math.max(1, plan.inpHalf) * 4 : 0,
    };
    for (const [what, bytes] of Object.entries(sizes)) {
      const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
      if (bytes > cap) {
        throw new KibitzError(
          "gpu_too_large",
          `GPU solve: ${what} need ${mib(bytes)} but the adapter binds at most ${
            mib(cap)
          } per buffer (maxStorageBufferBindingSize ${
            mib(lim.maxStorageBufferBindingSize)
          }, maxBufferSize ${
            mib(lim.maxBufferSize)
          }); set a memory budget (more chunks), use the CPU backend or a smaller spot`,
        );
      }
    }
    const code = cfrKernels(L, QUANT_CODEC_WGSL);
    const pipelines = new Map<Entry, GPUComputePipeline>();
    const entries: string[] = [...ENTRIES];
    if (quant) {
      for (const x of stores) {
        entries.push(`reduce_${x}`, `encode_${x}`, `commit_${x}`);
      }
    }
    const layout = quant ? QUANT_BINDINGS : BINDINGS;
    for (const e of entries) {
      pipelines.set(e, await computePipeline(ctx, code, e, {}, `cfr_${e}`, layout));
    }
    const scratchWords = L.results + 4 * hm;
    const { buffers, disc, params, bind } = await withRollback(async (keep) => {
      // Every buffer of the solve in one out-of-memory scope: a spot that needs more than the
      // device's memory (each buffer under the binding limit) is refused by name.
      const { value: made, error: oom } = await withErrorScope(ctx, "out-of-memory", () => {
        const store = (size: GpuArray | number, label: string) =>
          keep(storageBuffer(ctx, size, label));
        const buffers = [
          store(aux, "cfr aux"),
          store(vecBytes, "cfr reach"),
          store(4, "cfr unused"),
          store(valsBytes, "cfr vals"),
          store(storeBytes(rf), "cfr regrets"),
          store(storeBytes(sf), "cfr strategy"),
          store(algorithm === "pdcfr+" ? storeBytes(rf) : 4, "cfr predicted"),
          store(scratchWords * 4, "cfr scratch"),
        ];
        if (quant) {
          buffers.push(
            store(scaleWords(algorithm, blocks) * 4, "cfr scales"),
            store(2 * Math.max(1, plan.inpHalf) * 4, "cfr inputs"),
          );
        }
        // Per-iteration uniforms (discounts, rounding keys, mode): one slot per iteration of a
        // submission, and the check modes' slots, picked per dispatch by a dynamic offset.
        const disc = keep(ctx.device.createBuffer({
          size: DISC_SLOTS * DISC_STRIDE,
          usage: 0x40 | 0x8,
          label: "cfr disc",
        }));
        const paramWords = new Uint32Array(
          Math.max(1, commands.paramSets.length) * PARAM_STRIDE / 4,
        );
        commands.paramSets.forEach((w, i) => paramWords.set(w, i * PARAM_STRIDE / 4));
        const params = keep(uniformBuffer(ctx, paramWords.buffer, "cfr params"));
        return { buffers, disc, params };
      });
      if (oom) {
        throw new KibitzError(
          "gpu_too_large",
          `GPU solve: ${describeAdapter(ctx.report)} could not allocate the ${
            mib(planned.bytes)
          } of device memory the solve needs (${
            Object.entries(planned.parts).map(([k, v]) => `${k} ${mib(v)}`).join(", ")
          }): ${oom.message}; set solver.gpu_memory_mb below the device's free memory (the ` +
            `lower tree is then solved in chunks), use smaller formats or the CPU backend`,
        );
      }
      const { buffers, disc, params } = made;
      for (const [slot, mode] of [[BR_SLOT, MODE_BR], [EV_SLOT, MODE_EV]]) {
        const words = new Uint32Array(DISC_WORDS);
        words[DISC_MODE] = mode;
        ctx.device.queue.writeBuffer(disc, slot * DISC_STRIDE, words);
      }
      const { value: bind, error } = await withValidation(ctx, () =>
        ctx.device.createBindGroup({
          layout: pipelines.get("init")!.getBindGroupLayout(0),
          entries: [params, disc, ...buffers].map((buffer, binding) => ({
            binding,
            resource: binding === 0
              ? { buffer, size: 32 }
              : binding === 1
              ? { buffer, size: DISC_WORDS * 4 }
              : { buffer },
          })),
        }));
      if (error) {
        throw new KibitzError("shader_error", `cfr bind group is invalid: ${error.message}`);
      }
      return { buffers, disc, params, bind };
    });
    const { train, evaluate } = commands;
    let bytes = 0;
    for (const b of [params, disc, ...buffers]) bytes += b.size;
    const seed = options.seed ?? 0;
    const rMode: Rounding = options.rounding ?? defaultRounding(rf);
    const sMode: Rounding = options.strategyRounding ?? "stochastic";
    return new GpuCfrSolver(ctx, tree, game, {
      keys: [
        seed >>> 0,
        (seed ^ STRATEGY_SALT) >>> 0,
        (seed ^ PREDICT_SALT) >>> 0,
        rMode === "stochastic" ? 1 : 0,
        sMode === "stochastic" ? 1 : 0,
        rMode === "stochastic" ? 1 : 0,
      ],
      formats: [rf, sf],
      blocks,
      blockOffsets: tables.blockOffsets,
      algorithm,
      discount,
      buffers: [params, disc, ...buffers],
      storage: buffers,
      disc,
      bind,
      pipelines,
      train,
      evaluate,
      bytes,
      elems,
      plan: planned,
    });
  }

  /**
   * Runs `iterations` more iterations with no readback: up to TRAIN_SLOTS of them per submission
   * (their discounts and keys written at once, one uniform slot each), so the per-submission cost
   * of the queue is paid once per batch rather than per iteration.
   */
  run(iterations: number): void {
    const dev = this.ctx.device;
    for (let done = 0; done < iterations;) {
      const k = Math.min(TRAIN_SLOTS, iterations - done);
      this.writeDiscounts(k);
      const enc = dev.createCommandEncoder();
      for (let i = 0; i < k; i++) this.record(enc, this.train, i);
      dev.queue.submit([enc.finish()]);
      this.iteration += k, done += k;
    }
  }

  /**
   * Runs one more iteration with a timestamp around every dispatch and returns the GPU
   * milliseconds per kernel (entry point), summed over the iteration; null without timestamp
   * queries. For benchmarks: says which passes bound an iteration.
   */
  async kernelTimes(): Promise<Record<string, number> | null> {
    if (!this.ctx.timestamps) return null;
    const dev = this.ctx.device;
    const cmds = this.train, n = cmds.length;
    if (2 * n > 4096) return null; // a query set holds at most 4,096 timestamps
    this.writeDiscounts(1);
    const qs = dev.createQuerySet({ type: "timestamp", count: 2 * n });
    const resolve = dev.createBuffer({ size: 16 * n, usage: 0x200 | 0x4 });
    const staging = dev.createBuffer({ size: 16 * n, usage: 0x1 | 0x8 });
    const enc = dev.createCommandEncoder();
    cmds.forEach((c, i) => {
      const pass = enc.beginComputePass({
        timestampWrites: {
          querySet: qs,
          beginningOfPassWriteIndex: 2 * i,
          endOfPassWriteIndex: 2 * i + 1,
        },
      });
      pass.setPipeline(this.pipelines.get(c.entry)!);
      pass.setBindGroup(0, this.bind, [c.offset, c.disc * DISC_STRIDE]);
      pass.dispatchWorkgroups(c.groups[0], c.groups[1], c.groups[2]);
      pass.end();
    });
    enc.resolveQuerySet(qs, 0, 2 * n, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, staging, 0, 16 * n);
    dev.queue.submit([enc.finish()]);
    this.iteration++;
    const t = new BigUint64Array(
      await readStaging(staging).finally(() => {
        resolve.destroy();
        qs.destroy();
      }),
    );
    const out: Record<string, number> = {};
    cmds.forEach((c, i) => {
      const ns = Number(t[2 * i + 1] - t[2 * i]);
      const key = c.entry.replace(/_[RSQ]$/, "");
      out[key] = (out[key] ?? 0) + (ns > 0 ? ns / 1e6 : 0);
    });
    return out;
  }

  /** Exploitability of the average strategy: both best responses and EVs on the device, one readback. */
  async exploitability(): Promise<CfrExploitability> {
    const hm = Math.max(this.tree.numHands[0], this.tree.numHands[1]);
    const dev = this.ctx.device;
    const enc = dev.createCommandEncoder();
    this.record(enc, this.evaluate);
    const bytes = 4 * hm * 4;
    const staging = dev.createBuffer({ size: bytes, usage: 0x1 | 0x8 });
    enc.copyBufferToBuffer(this.scratch, this.scratch.size - bytes, staging, 0, bytes);
    dev.queue.submit([enc.finish()]);
    const rows = new Float32Array(await readStaging(staging));
    const value = (slot: number, p: 0 | 1) => {
      const w = this.game.initialWeights(p);
      let v = 0;
      for (let h = 0; h < w.length; h++) v += w[h] * rows[slot * hm + h];
      return v / this.mass;
    };
    const b0 = value(0, 0), b1 = value(1, 1), e0 = value(2, 0), e1 = value(3, 1);
    const nashConv = b0 + b1 - e0 - e1, chips = nashConv / 2;
    return {
      chips,
      percent: (100 * chips) / this.game.startingPot,
      nashConv,
      bestResponse: [b0, b1],
      ev: [e0, e1],
    };
  }

  /**
   * Reads the stores back, once, handing each store's payload words and per-block scales to `take`
   * (k: regrets 0, strategy 1, PDCFR+ predictions 2) as views of the mapped staging memory, valid
   * only during the call: no host copy of the stores beyond what `take` makes.
   */
  private async readStores(
    take: (k: number, words: Uint32Array, scales: Float32Array) => void,
  ): Promise<void> {
    const dev = this.ctx.device;
    const [rf, sf] = this.formats;
    const srcs: [GPUBuffer, number][] = [
      [this.regrets, payloadWords(rf, this.elems) * 4],
      [this.strategy, payloadWords(sf, this.elems) * 4],
    ];
    if (this.algorithm === "pdcfr+") srcs.push([this.predicted, payloadWords(rf, this.elems) * 4]);
    const stores = srcs.length;
    if (this.scales) srcs.push([this.scales, this.scales.size]);
    const stagings: GPUBuffer[] = [];
    try {
      const enc = dev.createCommandEncoder();
      for (const [src, n] of srcs) {
        const st = dev.createBuffer({ size: Math.max(4, n), usage: 0x1 | 0x8 });
        stagings.push(st);
        if (n > 0) enc.copyBufferToBuffer(src, 0, st, 0, n);
      }
      dev.queue.submit([enc.finish()]);
      await Promise.all(stagings.map((st) => st.mapAsync(0x1))); // READ
      const B = this.blocks;
      const sc = this.scales ? new Float32Array(stagings[stores].getMappedRange()) : null;
      for (let k = 0; k < stores; k++) {
        const words = new Uint32Array(stagings[k].getMappedRange(), 0, srcs[k][1] / 4);
        take(k, words, sc ? sc.subarray(3 * k * B, 3 * k * B + B) : new Float32Array(0));
      }
    } finally {
      for (const st of stagings) st.destroy(); // unmaps too
    }
  }

  /** The stores read back as host copies (see readStores). */
  async download(): Promise<StoreImages> {
    const images: StoreImage[] = [];
    await this.readStores((k, words, scales) => {
      images[k] = { words: words.slice(), scales: scales.slice() };
    });
    return { regrets: images[0], strategy: images[1], predicted: images[2] ?? null };
  }

  /**
   * Copies the device stores into a CPU solver over the same tree and options (same formats) and
   * sets its iteration count, so its results (average strategy, EVs, equities, saved files) are the
   * GPU's. Straight from the mapped staging memory into the solver's stores (no second host copy).
   */
  async copyTo(cpu: CfrSolver): Promise<void> {
    this.checkFormats(cpu);
    const dst = [cpu.regrets, cpu.strategy, cpu.predicted];
    await this.readStores((k, words, scales) => {
      const s = dst[k];
      if (!s) return;
      s.words.set(words.subarray(0, s.words.length));
      if (s.scales.length) s.scales.set(scales.subarray(0, s.scales.length));
    });
    cpu.iteration = this.iteration;
  }

  /** Uploads a CPU solver's stores and iteration count (a warm start, or to continue a CPU solve). */
  copyFrom(cpu: CfrSolver): Promise<void> {
    this.checkFormats(cpu);
    const q = this.ctx.device.queue;
    const B = this.blocks;
    const up = (dst: GPUBuffer, s: QuantStore, k: number) => {
      if (s.words.length > 0) q.writeBuffer(dst, 0, s.words as Uint32Array<ArrayBuffer>);
      if (this.scales && s.scales.length) {
        q.writeBuffer(this.scales, 3 * k * B * 4, s.scales as Float32Array<ArrayBuffer>);
      }
    };
    up(this.regrets, cpu.regrets, 0);
    up(this.strategy, cpu.strategy, 1);
    if (this.algorithm === "pdcfr+" && cpu.predicted) up(this.predicted, cpu.predicted, 2);
    this.iteration = cpu.iteration;
    return Promise.resolve();
  }

  private checkFormats(cpu: CfrSolver): void {
    if (cpu.regrets.format !== this.formats[0] || cpu.strategy.format !== this.formats[1]) {
      throw new KibitzError(
        "bad_format",
        `CPU solver stores are ${cpu.regrets.format}/${cpu.strategy.format}, the GPU's ${
          this.formats.join("/")
        }`,
      );
    }
  }

  /**
   * The cumulative strategy of block `b` (actions x hands, decoded), read back alone: a root or
   * node summary without downloading the stores.
   */
  async strategyBlock(b: number): Promise<Float32Array> {
    const dev = this.ctx.device, sf = this.formats[1], info = formatInfo(sf);
    const e0 = this.blockOffsets[b], e1 = this.blockOffsets[b + 1];
    const per = sf === "f32" ? 1 : info.perWord;
    const w0 = Math.floor(e0 / per), w1 = Math.ceil(e1 / per);
    const size = Math.max(4, (w1 - w0) * 4);
    const enc = dev.createCommandEncoder();
    const st = dev.createBuffer({ size: size + 4, usage: 0x1 | 0x8 });
    enc.copyBufferToBuffer(this.strategy, 4 * w0, st, 0, (w1 - w0) * 4);
    if (this.scales) enc.copyBufferToBuffer(this.scales, 4 * (3 * this.blocks + b), st, size, 4);
    dev.queue.submit([enc.finish()]);
    const raw = await readStaging(st);
    const words = new Uint32Array(raw, 0, w1 - w0), out = new Float32Array(e1 - e0);
    if (sf === "f32") {
      out.set(new Float32Array(raw, 0, e1 - e0));
      return out;
    }
    const scale = new Float32Array(raw, size, 1)[0], mask = (1 << info.bits) - 1;
    for (let e = e0; e < e1; e++) {
      const w = words[Math.floor(e / per) - w0], k = e % per;
      out[e - e0] = ((w >>> (k * info.bits)) & mask) * scale / info.levels;
    }
    return out;
  }

  /** Frees the device buffers. */
  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }

  /** Uploads the discounts and rounding keys of the next `k` iterations into slots 0..k-1. */
  private writeDiscounts(k: number): void {
    const stride = DISC_STRIDE / 4;
    const words = new ArrayBuffer(k * DISC_STRIDE), f = new Float32Array(words);
    const u = new Uint32Array(words);
    for (let i = 0; i < k; i++) {
      const d = iterationDiscount(this.discount, this.iteration + i);
      f.set([d.alphaPos, d.betaNeg, d.gamma, d.alphaNext], i * stride);
      u.set([this.iteration + i, 0, ...this.keys, MODE_TRAIN], i * stride + 4);
    }
    this.ctx.device.queue.writeBuffer(this.disc, 0, words);
  }

  /** Records `cmds` in one compute pass; training dispatches read uniform slot `slot`. */
  private record(enc: GPUCommandEncoder, cmds: Command[], slot = 0): void {
    const pass = enc.beginComputePass();
    let last: Entry | null = null;
    for (const c of cmds) {
      if (c.entry !== last) pass.setPipeline(this.pipelines.get(c.entry)!), last = c.entry;
      const d = c.disc === 0 ? slot : c.disc;
      pass.setBindGroup(0, this.bind, [c.offset, d * DISC_STRIDE]);
      pass.dispatchWorkgroups(c.groups[0], c.groups[1], c.groups[2]);
    }
    pass.end();
  }
}

/** A store as read back: payload words and per-block scales (empty for f32). */
export interface StoreImage {
  words: Uint32Array;
  scales: Float32Array;
}

/** The device stores of a GPU solve, read back. */
export interface StoreImages {
  regrets: StoreImage;
  strategy: StoreImage;
  predicted: StoreImage | null;
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** Throws a clear error naming each solver option the GPU backend does not implement. */
export function refuseUnsupported(o: SolverOptions): void {
  const bad = (option: string, why: string) => {
    throw new KibitzError("gpu_unsupported", `GPU backend: ${option} ${why}; use the CPU backend`);
  };
  if ((o.pruning ?? 0) > 0) bad("pruning", "is not implemented");
  if (o.lockedNodes && o.lockedNodes.length > 0) {
    bad("node locking (lockedNodes)", "is not implemented");
  }
  if (o.reachWeightedAverage) bad("reachWeightedAverage", "is not implemented");
}
