import { KibitzError } from "../../cli/error.ts";
import type { GpuContext } from "../../gpu/device.ts";
import { storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import { workgroups1d } from "../../gpu/dispatch.ts";
import { bindGroup, type BindingKind, computePipeline } from "../../gpu/pipeline.ts";
import { type CfrExploitability, dealMass } from "../evaluate.ts";
import type { CfrGame } from "../game.ts";
import type { CfrSolver, SolverOptions } from "../solver.ts";
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
const ENTRIES = ["init", "down", "blocked", "dense", "fold", "showdown", "up", "result"] as const;
type Entry = typeof ENTRIES[number];
/** Workgroups of the grid-stride terminal kernels (the showdown scratch is per workgroup). */
const FOLD_GROUPS = 4096, SD_GROUPS = 1024;

interface Command {
  entry: Entry;
  bind: GPUBindGroup;
  groups: [number, number, number];
}

/** Device bytes of a GPU solve of `tree` (vectors, f32 stores, tables, scratch), for planning. */
export function gpuSolveBytes(tree: PublicTree, algorithm: CfrAlgorithm, auxWords = 0): number {
  const hm = Math.max(tree.numHands[0], tree.numHands[1]);
  let elems = 0;
  for (let b = 0; b < tree.blockSize.length; b++) elems += tree.blockSize[b];
  const stores = (algorithm === "pdcfr+" ? 3 : 2) * elems * 4;
  return 3 * tree.size * hm * 4 + stores + (auxWords || tree.size * NODE_WORDS) * 4;
}

/**
 * The CFR engine's GPU backend: the tree, the per-node reach and value vectors and the f32 regret
 * and strategy stores live in device buffers; an iteration is one submission of level-synchronous
 * dispatches (per traverser: a down pass, the terminals, an up pass that updates the traverser's
 * regrets and cumulative strategy) with no readback. Exploitability reads back one small row per
 * check. Same algorithms and discount schedules as CfrSolver; f32 storage only.
 */
export class GpuCfrSolver {
  /** Iterations done. */
  iteration = 0;
  readonly algorithm: CfrAlgorithm;
  readonly discount: DiscountParams;
  /** Bytes of device buffers this solver allocated. */
  readonly deviceBytes: number;
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
    },
  ) {
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
    const vecBytes = tree.size * hm * 4;
    const lim = ctx.device.limits;
    const storeBytes = Math.max(4, elems * 4);
    const sizes = {
      "node vectors (reach, active hands, values; each)": vecBytes,
      "regret store": storeBytes,
      "tables": tables.aux.byteLength,
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
    const code = cfrKernels(L);
    const pipelines = new Map<Entry, GPUComputePipeline>();
    for (const e of ENTRIES) {
      pipelines.set(e, await computePipeline(ctx, code, e, {}, `cfr_${e}`, BINDINGS));
    }
    const scratchWords = L.results + 4 * hm;
    const buffers = [
      storageBuffer(ctx, tables.aux, "cfr aux"),
      storageBuffer(ctx, vecBytes, "cfr reach"),
      storageBuffer(ctx, vecBytes, "cfr act"),
      storageBuffer(ctx, vecBytes, "cfr vals"),
      storageBuffer(ctx, storeBytes, "cfr regrets"),
      storageBuffer(ctx, storeBytes, "cfr strategy"),
      storageBuffer(ctx, algorithm === "pdcfr+" ? storeBytes : 4, "cfr predicted"),
      storageBuffer(ctx, scratchWords * 4, "cfr scratch"),
    ];
    const disc = ctx.device.createBuffer({ size: 16, usage: 0x40 | 0x8, label: "cfr disc" });
    let bytes = 16;
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
        await add("down", [s, n, p, mode], workgroups1d(ctx, n * hm, WG));
        const [b0, b1] = tables.blockedRange[d];
        if (b1 > b0) await add("blocked", [b0, b1 - b0, p, mode], workgroups1d(ctx, b1 - b0, WG));
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
        if (any) await add("up", [s, n, p, mode], workgroups1d(ctx, n * hm, WG));
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
    return new GpuCfrSolver(ctx, tree, game, {
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
      const d = iterationDiscount(this.discount, this.iteration);
      dev.queue.writeBuffer(
        this.disc,
        0,
        new Float32Array([d.alphaPos, d.betaNeg, d.gamma, d.alphaNext]),
      );
      const enc = dev.createCommandEncoder();
      this.record(enc, this.train);
      dev.queue.submit([enc.finish()]);
      this.iteration++;
    }
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

  /** Reads the regret, cumulative-strategy (and PDCFR+ prediction) stores back, once. */
  async download(): Promise<
    { regrets: Float32Array; strategy: Float32Array; predicted: Float32Array | null }
  > {
    const n = this.elems * 4;
    const dev = this.ctx.device;
    const srcs = [
      this.regrets,
      this.strategy,
      ...(this.algorithm === "pdcfr+" ? [this.predicted] : []),
    ];
    const stagings = srcs.map(() => dev.createBuffer({ size: Math.max(4, n), usage: 0x1 | 0x8 }));
    const enc = dev.createCommandEncoder();
    if (n > 0) srcs.forEach((s, i) => enc.copyBufferToBuffer(s, 0, stagings[i], 0, n));
    dev.queue.submit([enc.finish()]);
    const out = await Promise.all(stagings.map(async (s) => {
      await s.mapAsync(0x1);
      const a = new Float32Array(s.getMappedRange().slice(0, n));
      s.unmap();
      s.destroy();
      return a;
    }));
    return { regrets: out[0], strategy: out[1], predicted: out[2] ?? null };
  }

  /**
   * Copies the device stores into a CPU solver over the same tree (f32 stores) and sets its
   * iteration count, so its results (average strategy, EVs, equities, saved files) are the GPU's.
   */
  async copyTo(cpu: CfrSolver): Promise<void> {
    if (!cpu.regrets.f32 || !cpu.strategy.f32) {
      throw new KibitzError("bad_format", "copyTo needs a CPU solver with f32 stores");
    }
    const d = await this.download();
    cpu.regrets.f32.set(d.regrets);
    cpu.strategy.f32.set(d.strategy);
    if (d.predicted && cpu.predicted?.f32) cpu.predicted.f32.set(d.predicted);
    cpu.iteration = this.iteration;
  }

  /** Uploads a CPU solver's f32 stores and iteration count (a warm start, or to continue a CPU solve). */
  copyFrom(cpu: CfrSolver): Promise<void> {
    if (!cpu.regrets.f32 || !cpu.strategy.f32) {
      throw new KibitzError("bad_format", "copyFrom needs a CPU solver with f32 stores");
    }
    const q = this.ctx.device.queue;
    if (this.elems > 0) {
      q.writeBuffer(this.regrets, 0, cpu.regrets.f32 as Float32Array<ArrayBuffer>);
      q.writeBuffer(this.strategy, 0, cpu.strategy.f32 as Float32Array<ArrayBuffer>);
      if (this.algorithm === "pdcfr+" && cpu.predicted?.f32) {
        q.writeBuffer(this.predicted, 0, cpu.predicted.f32 as Float32Array<ArrayBuffer>);
      }
    }
    this.iteration = cpu.iteration;
    return Promise.resolve();
  }

  /** Frees the device buffers. */
  destroy(): void {
    for (const b of this.buffers) b.destroy();
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

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/** Throws a clear error naming each solver option the GPU backend does not implement. */
export function refuseUnsupported(o: SolverOptions): void {
  const bad = (option: string, why: string) => {
    throw new KibitzError("gpu_unsupported", `GPU backend: ${option} ${why}; use the CPU backend`);
  };
  if ((o.regretBits ?? 32) !== 32 || (o.regretFormat && o.regretFormat !== "f32")) {
    bad(
      `regret storage ${o.regretFormat ?? `${o.regretBits}-bit`}`,
      "is not implemented yet (f32 only)",
    );
  }
  if ((o.strategyBits ?? 32) !== 32) {
    bad(`strategy storage ${o.strategyBits}-bit`, "is not implemented yet (f32 only)");
  }
  if ((o.pruning ?? 0) > 0) bad("pruning", "is not implemented");
  if (o.lockedNodes && o.lockedNodes.length > 0) {
    bad("node locking (lockedNodes)", "is not implemented");
  }
  if (o.reachWeightedAverage) bad("reachWeightedAverage", "is not implemented");
}
