import { KibitzError } from "../../errors.ts";
import type { GpuContext } from "../../gpu/device.ts";
import { storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import { bindGroup, type BindingKind, computePipeline } from "../../gpu/pipeline.ts";
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
import { CFR_TERMINAL, type PublicTree } from "../tree.ts";
import { cfrKernels, MODE_BR, MODE_EV, MODE_TRAIN, NODE_WORDS, WG } from "./kernels.ts";
import { buildTables } from "./tables.ts";
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
  "uniform",
  "uniform",
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
const ENTRIES = ["init", "down", "dense", "fold", "showdown", "up", "result"] as const;
type Entry = string;
/** Seeds of the strategy and prediction rounding keys: the CPU engine's (src/cfr/solver.ts). */
const STRATEGY_SALT = 0x5bd1e995, PREDICT_SALT = 0x27d4eb2f;
/** Workgroups of the grid-stride terminal kernels (the showdown scratch is per workgroup). */
const FOLD_GROUPS = 8192, SD_GROUPS = 4096;

interface Command {
  entry: Entry;
  bind: GPUBindGroup;
  groups: [number, number, number];
}

/** Device bytes of a GPU solve of `tree` (vectors, f32 stores, tables, scratch), for planning. */
export function gpuSolveBytes(
  tree: PublicTree,
  algorithm: CfrAlgorithm,
  formats: [QuantFormat, QuantFormat] = ["f32", "f32"],
): number {
  const hm = Math.max(tree.numHands[0], tree.numHands[1]);
  let elems = 0, maxLevel = 0;
  for (let b = 0; b < tree.blockSize.length; b++) elems += tree.blockSize[b];
  for (let d = 0; d < tree.levels; d++) {
    let e = 0;
    for (let n = tree.levelStart[d]; n < tree.levelStart[d + 1]; n++) {
      if (tree.block[n] >= 0) e += tree.blockSize[tree.block[n]];
    }
    maxLevel = Math.max(maxLevel, e);
  }
  const [rf, sf] = formats;
  const quant = rf !== "f32" || sf !== "f32";
  const stores = 4 * ((algorithm === "pdcfr+" ? 2 : 1) * payloadWords(rf, elems) +
    payloadWords(sf, elems));
  // Quantized: per-block scales (9 per block) and one level's instant regrets and strategies.
  const extra = quant ? 4 * (9 * tree.blockNode.length + 2 * maxLevel) : 0;
  // Tables: the node table plus about as much again for deal masks and terminal tables.
  return 2 * tree.size * hm * 4 + stores + extra + 2 * tree.size * NODE_WORDS * 4;
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
  /** Bytes of the regret and strategy (and prediction) payloads. */
  get storeBytes(): number {
    return this.regrets.size + this.strategy.size +
      (this.algorithm === "pdcfr+" ? this.predicted.size : 0);
  }
  private readonly buffers: GPUBuffer[];
  private readonly disc: GPUBuffer;
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
      pipelines: Map<Entry, GPUComputePipeline>;
      train: Command[];
      evaluate: Command[];
      bytes: number;
      elems: number;
      keys: number[];
      formats: [QuantFormat, QuantFormat];
      blocks: number;
    },
  ) {
    this.keys = init.keys;
    this.formats = init.formats;
    this.blocks = init.blocks;
    this.scales = init.storage[8] ?? null;
    this.algorithm = init.algorithm;
    this.discount = init.discount;
    this.buffers = init.buffers;
    this.disc = init.disc;
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
  ): Promise<GpuCfrSolver> {
    refuseUnsupported(options);
    const algorithm = options.algorithm ?? "dcfr";
    const base = options.schedule === "paper" && (algorithm === "dcfr" || algorithm === "dcfr+")
      ? { ...DCFR_PAPER }
      : defaultDiscount(algorithm);
    const discount = { ...base, ...options.discount };
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
    const tables = buildTables(
      tree,
      game,
      algorithm === "dcfr" ? "dcfr" : algorithm === "pdcfr+" ? "pdcfr+" : "plus",
    );
    const L = tables.layout;
    const hm = L.hm;
    const sdGroups = Math.max(1, Math.min(tables.showdownCount, SD_GROUPS));
    L.results = sdGroups * 2 * L.maxNT;
    const elems = tables.blockOffsets[tables.blockOffsets.length - 1];
    const blocks = tree.blockNode.length;
    // Per level: its blocks [b0, b1) and elements [e0, e1) (blocks are numbered in node order).
    const levelBlocks: [number, number, number, number][] = [];
    {
      let b = 0;
      for (let d = 0; d < tree.levels; d++) {
        const b0 = b;
        while (b < blocks && tree.blockNode[b] < tree.levelStart[d + 1]) b++;
        levelBlocks.push([b0, b, tables.blockOffsets[b0], tables.blockOffsets[b]]);
      }
    }
    let inpHalf = 1;
    for (const [, , e0, e1] of levelBlocks) inpHalf = Math.max(inpHalf, e1 - e0);
    let aux = tables.aux;
    if (quant) {
      const bp = new Uint32Array(blocks);
      for (let b = 0; b < blocks; b++) bp[b] = tree.player[tree.blockNode[b]];
      const joined = new Uint32Array(aux.length + blocks);
      joined.set(aux), joined.set(bp, aux.length);
      L.quant = {
        r: formatInfo(rf).code,
        s: formatInfo(sf).code,
        q: formatInfo(rf).code,
        blocks,
        inpHalf,
        blockPlayer: aux.length,
      };
      aux = joined;
    }
    const vecBytes = tree.size * hm * 4;
    const lim = ctx.device.limits;
    const storeBytes = (f: QuantFormat) => Math.max(4, payloadWords(f, elems) * 4);
    const sizes = {
      "node vectors (reach, values; each)": vecBytes,
      "regret store": storeBytes(rf),
      "strategy store": storeBytes(sf),
      "tables": aux.byteLength,
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
          }, maxBufferSize ${mib(lim.maxBufferSize)}); use the CPU backend or a smaller spot`,
        );
      }
    }
    const code = cfrKernels(L, QUANT_CODEC_WGSL);
    const pipelines = new Map<Entry, GPUComputePipeline>();
    const stores = algorithm === "pdcfr+" ? ["R", "Q", "S"] : ["R", "S"];
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
    const buffers = [
      storageBuffer(ctx, aux, "cfr aux"),
      storageBuffer(ctx, vecBytes, "cfr reach"),
      storageBuffer(ctx, 4, "cfr unused"),
      storageBuffer(ctx, vecBytes, "cfr vals"),
      storageBuffer(ctx, storeBytes(rf), "cfr regrets"),
      storageBuffer(ctx, storeBytes(sf), "cfr strategy"),
      storageBuffer(ctx, algorithm === "pdcfr+" ? storeBytes(rf) : 4, "cfr predicted"),
      storageBuffer(ctx, scratchWords * 4, "cfr scratch"),
    ];
    if (quant) {
      buffers.push(
        storageBuffer(ctx, 9 * Math.max(1, blocks) * 4, "cfr scales"),
        storageBuffer(ctx, 2 * inpHalf * 4, "cfr inputs"),
      );
    }
    const disc = ctx.device.createBuffer({ size: 48, usage: 0x40 | 0x8, label: "cfr disc" });
    let bytes = 48;
    for (const b of buffers) bytes += b.size;
    const params = new Map<string, GPUBuffer>();
    const binds = new Map<string, GPUBindGroup>();
    const bindFor = async (words: number[]): Promise<GPUBindGroup> => {
      const key = words.join(",");
      const hit = binds.get(key);
      if (hit) return hit;
      const u = uniformBuffer(
        ctx,
        new Uint32Array([...words, 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 8)).buffer,
      );
      params.set(key, u);
      bytes += u.size;
      const bg = await bindGroup(ctx, pipelines.get("init")!, [u, disc, ...buffers]);
      binds.set(key, bg);
      return bg;
    };
    const pass = async (p: 0 | 1, mode: number, slot: number): Promise<Command[]> => {
      const out: Command[] = [];
      const add = async (entry: Entry, words: number[], groups: [number, number, number]) => {
        out.push({ entry, bind: await bindFor(words), groups });
      };
      await add("init", [0, 1, p, mode], [Math.ceil(hm / WG), 1, 1]);
      for (let d = 1; d < tree.levels; d++) {
        const s = tree.levelStart[d], n = tree.levelStart[d + 1] - s;
        const ho = tree.numHands[1 - p];
        await add("down", [s, n, p, mode], workgroups1d(ctx, n * ho, WG));
      }
      if (tables.denseCount > 0) {
        await add(
          "dense",
          [0, tables.denseCount, p, mode],
          workgroups1d(ctx, tables.denseCount * hm, WG),
        );
      }
      if (tables.foldCount > 0) {
        await add("fold", [0, tables.foldCount, p, mode], [
          Math.min(tables.foldCount, FOLD_GROUPS),
          1,
          1,
        ]);
      }
      if (tables.showdownCount > 0) {
        await add("showdown", [0, tables.showdownCount, p, mode], [sdGroups, 1, 1]);
      }
      for (let d = tree.levels - 2; d >= 0; d--) {
        const s = tree.levelStart[d], n = tree.levelStart[d + 1] - s;
        let any = false;
        for (let i = s; i < s + n && !any; i++) any = tree.kind[i] !== CFR_TERMINAL;
        const [b0, b1, e0, e1] = levelBlocks[d];
        if (any) await add("up", [s, n, p, mode, e0], workgroups1d(ctx, n * hm, WG));
        if (quant && mode === MODE_TRAIN && b1 > b0) {
          const q = [b0, b1 - b0, p, mode, e0, e1];
          for (const x of stores) {
            await add(`reduce_${x}`, q, workgroups1d(ctx, (b1 - b0) * 64, 64));
            await add(`encode_${x}`, q, workgroups1d(ctx, e1 - e0 + 8, WG));
            await add(`commit_${x}`, q, workgroups1d(ctx, b1 - b0, 64));
          }
        }
      }
      if (mode !== MODE_TRAIN) {
        await add("result", [0, 0, p, mode, slot], [Math.ceil(hm / WG), 1, 1]);
      }
      return out;
    };
    const train = [...await pass(0, MODE_TRAIN, 0), ...await pass(1, MODE_TRAIN, 0)];
    const evaluate = [
      ...await pass(0, MODE_BR, 0),
      ...await pass(1, MODE_BR, 1),
      ...await pass(0, MODE_EV, 2),
      ...await pass(1, MODE_EV, 3),
    ];
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
      algorithm,
      discount,
      buffers: [...params.values(), disc, ...buffers],
      storage: buffers,
      disc,
      pipelines,
      train,
      evaluate,
      bytes,
      elems,
    });
  }

  /** Runs `iterations` more iterations: one submission each, no readback. */
  run(iterations: number): void {
    const dev = this.ctx.device;
    for (let i = 0; i < iterations; i++) {
      this.writeDiscount();
      const enc = dev.createCommandEncoder();
      this.record(enc, this.train);
      dev.queue.submit([enc.finish()]);
      this.iteration++;
    }
  }

  /**
   * Runs one more iteration with a timestamp around every dispatch and returns the GPU
   * milliseconds per kernel (entry point), summed over the iteration; null without timestamp
   * queries. For benchmarks: says which passes bound an iteration.
   */
  async kernelTimes(): Promise<Record<string, number> | null> {
    if (!this.ctx.timestamps) return null;
    const dev = this.ctx.device, cmds = this.train, n = cmds.length;
    this.writeDiscount();
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
      pass.setBindGroup(0, c.bind);
      pass.dispatchWorkgroups(c.groups[0], c.groups[1], c.groups[2]);
      pass.end();
    });
    enc.resolveQuerySet(qs, 0, 2 * n, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, staging, 0, 16 * n);
    dev.queue.submit([enc.finish()]);
    this.iteration++;
    await staging.mapAsync(0x1);
    const t = new BigUint64Array(staging.getMappedRange().slice(0));
    staging.unmap();
    for (const b of [staging, resolve]) b.destroy();
    qs.destroy();
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
    await staging.mapAsync(0x1);
    const rows = new Float32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    staging.destroy();
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
   * Reads the stores back, once: payload words (f32 bits for f32 stores) and per-block scales of
   * the regrets, the cumulative strategy and (PDCFR+) the predictions.
   */
  async download(): Promise<StoreImages> {
    const dev = this.ctx.device;
    const [rf, sf] = this.formats;
    const srcs: [GPUBuffer, number][] = [
      [this.regrets, payloadWords(rf, this.elems) * 4],
      [this.strategy, payloadWords(sf, this.elems) * 4],
    ];
    if (this.algorithm === "pdcfr+") srcs.push([this.predicted, payloadWords(rf, this.elems) * 4]);
    if (this.scales) srcs.push([this.scales, 9 * Math.max(1, this.blocks) * 4]);
    const enc = dev.createCommandEncoder();
    const stagings = srcs.map(([src, n]) => {
      const st = dev.createBuffer({ size: Math.max(4, n), usage: 0x1 | 0x8 });
      if (n > 0) enc.copyBufferToBuffer(src, 0, st, 0, n);
      return st;
    });
    dev.queue.submit([enc.finish()]);
    const out = await Promise.all(stagings.map(async (st, i) => {
      await st.mapAsync(0x1);
      const a = st.getMappedRange().slice(0, srcs[i][1]);
      st.unmap();
      st.destroy();
      return a;
    }));
    const B = this.blocks;
    const sc = this.scales ? new Float32Array(out[out.length - 1]) : null;
    const part = (k: number) => sc ? sc.slice(3 * k * B, 3 * k * B + B) : new Float32Array(0);
    const img = (k: number): StoreImage => ({ words: new Uint32Array(out[k]), scales: part(k) });
    return {
      regrets: img(0),
      strategy: img(1),
      predicted: this.algorithm === "pdcfr+" ? img(2) : null,
    };
  }

  /**
   * Copies the device stores into a CPU solver over the same tree and options (same formats) and
   * sets its iteration count, so its results (average strategy, EVs, equities, saved files) are the
   * GPU's.
   */
  async copyTo(cpu: CfrSolver): Promise<void> {
    this.checkFormats(cpu);
    const d = await this.download();
    const put = (s: QuantStore, i: StoreImage) => {
      s.words.set(i.words.subarray(0, s.words.length));
      if (s.scales.length) s.scales.set(i.scales.subarray(0, s.scales.length));
    };
    put(cpu.regrets, d.regrets);
    put(cpu.strategy, d.strategy);
    if (d.predicted && cpu.predicted) put(cpu.predicted, d.predicted);
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

  /** Frees the device buffers. */
  destroy(): void {
    for (const b of this.buffers) b.destroy();
  }

  /** Uploads the discounts and rounding keys of the next iteration. */
  private writeDiscount(): void {
    const d = iterationDiscount(this.discount, this.iteration);
    const words = new ArrayBuffer(48), f = new Float32Array(words), u = new Uint32Array(words);
    f.set([d.alphaPos, d.betaNeg, d.gamma, d.alphaNext]);
    u.set([this.iteration, 0, ...this.keys], 4);
    this.ctx.device.queue.writeBuffer(this.disc, 0, words);
  }

  private record(enc: GPUCommandEncoder, cmds: Command[]): void {
    const pass = enc.beginComputePass();
    let last: Entry | null = null;
    for (const c of cmds) {
      if (c.entry !== last) pass.setPipeline(this.pipelines.get(c.entry)!), last = c.entry;
      pass.setBindGroup(0, c.bind);
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
