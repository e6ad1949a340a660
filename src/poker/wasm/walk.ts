import { decodeBase64 } from "../../cfr/wasm/base64.ts";
import { compileModule, wasmAllowed } from "../../cfr/wasm/enabled.ts";
import { CFR_CHANCE, type PublicTree } from "../../cfr/tree.ts";
import { F32_STORAGE, type TaskTrainer, type TrainerStorage } from "../../cfr/trainer.ts";
import {
  type ChanceTasks,
  chanceTasks,
  TASK_PROFILE,
  TASK_TRAIN,
  type WorkerEntry,
} from "../../cfr/tasks.ts";
import { KibitzError } from "../../errors.ts";
import { createQuantStore, formatInfo, payloadWords, type QuantStore } from "../../quant/mod.ts";
import { type WalkTaskExports, type WalkTaskLayout, WalkTaskRunner } from "./walk_tasks.ts";
import type { WalkWorkerData } from "./walk_worker.ts";
import { WASM_BASE64 } from "./walk_wasm.ts";
import { WASM_BASE64 as WASM_MT_BASE64 } from "./walk_mt_wasm.ts";

/*
 * The postflop game's CfrTrainer: CfrSolver's training walk (dcfr, f32 stores) run whole in Wasm
 * (asm/walk.ts, with the terminal and regret kernels), on f32 or quantized stores (the quantized
 * ones decoded per block and encoded back after the update by asm's quant codec, with the
 * solver's stochastic rounding, so bit-identical too). One instance and one memory per solver:
 * the tree as packed node records, the chance outcomes and isomorphs, each terminal's pays, every
 * river board's showdown tables, the per-depth scratch and both stores, laid out once here and
 * grown once, so the stores' views stay valid. A traversal is one call; nothing is copied per node.
 *
 * With threads > 1 the same walk runs on several threads: one shared WebAssembly.Memory (the walk
 * built with an imported shared memory, walk_mt) holds all of the above once, plus the chance
 * tasks' rows (cfr/tasks.ts) and each thread's own scratch and setup block; every worker
 * instantiates the compiled module on that memory (walk_worker.ts) and takes tasks from the pool's
 * counter, while the solver's main thread walks the nodes above the first chance nodes (the
 * walk's reach and combine phases, asm/walk.ts PHASE_REACH). A task takes its outcome's inputs
 * from its first chance node's row, and the thread that finishes a chance node's last outcome
 * adds the outcomes' values up in order, so that little is left to the main thread between
 * rounds (the results are bit-identical to the one-thread walk and the TypeScript threaded path).
 */

interface Exports extends WalkTaskExports {
  traverse(
    p: number,
    opp: number,
    act: number,
    out: number,
    alphaPos: number,
    betaNeg: number,
    gamma: number,
    phase: number,
  ): number;
  evaluate(p: number, opp: number, outB: number, outE: number, phase: number): void;
  average(b: number, A: number, H: number): number;
}

/** asm/walk.ts's phases: the whole walk, or a threaded walk's reach and combine passes. */
const PHASE_WHOLE = 0, PHASE_REACH = 1, PHASE_COMBINE = 2;

/** One river board's showdown tables, both players (PostflopGame's BoardOrder). */
export interface WalkBoard {
  order: readonly [Int32Array, Int32Array];
  strength: readonly [Uint16Array, Uint16Array];
  c1: readonly [Uint8Array, Uint8Array];
  c2: readonly [Uint8Array, Uint8Array];
  dead: readonly [Int32Array, Int32Array];
}

/** What the walk needs from the postflop game: hands, boards and terminals (read, not kept). */
export interface WalkGame {
  numHands: readonly [number, number];
  /** Cards per hand (2 bytes a hand), per player. */
  cards: readonly [Uint8Array, Uint8Array];
  /** Per hand, the same combo's index in the other player's list, or -1. */
  sameIn: readonly [Int32Array, Int32Array];
  boards: readonly WalkBoard[];
  /** Per terminal id: board index (-1: a fold), half pot, rake, folder. */
  tBoard: ArrayLike<number>;
  tHalfPot: ArrayLike<number>;
  tRake: ArrayLike<number>;
  tFolder: ArrayLike<number>;
  initialWeights: readonly [Float32Array, Float32Array];
}

/** The module a worker thread of the threaded walk loads (its task loop: walk_worker.ts). */
export const WALK_WORKER_MODULE = new URL("./walk_worker.ts", import.meta.url).href;

let compiled: WebAssembly.Module | null | undefined;
let compiledMt: WebAssembly.Module | null | undefined;

/** The compiled walk module (null where Wasm SIMD is missing or KIBITZ_WASM=0). */
function walkModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    compiled = wasmAllowed() ? compileModule(decodeBase64(WASM_BASE64)) : null;
  }
  return compiled;
}

/**
 * The walk module on an imported shared memory (null where Wasm SIMD or threads are missing,
 * KIBITZ_WASM=0, or SharedArrayBuffer is not available: a page not cross-origin isolated).
 */
function walkModuleShared(): WebAssembly.Module | null {
  if (compiledMt === undefined) {
    const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
    const shared = typeof SharedArrayBuffer === "function" && isolated !== false;
    compiledMt = shared && wasmAllowed() ? compileModule(decodeBase64(WASM_MT_BASE64)) : null;
  }
  return compiledMt;
}

/** Whether the Wasm walk can run on several threads here (see walkModuleShared). */
export function threadedWalkAvailable(): boolean {
  return walkModuleShared() !== null;
}

/** Whether the Wasm walk can run here. */
export function walkAvailable(): boolean {
  return walkModule() !== null;
}

const PAGE = 65536;
/** A 32-bit Wasm memory's limit (4 GiB less a page): larger solves keep the TypeScript walk. */
const MAX_BYTES = 65535 * PAGE;
const align = (x: number) => (x + 15) & ~15;

/** A bump layout: regions first, memory grown once, then written. */
class Layout {
  top = 1024;
  take(bytes: number): number {
    const at = this.top;
    this.top = align(at + bytes);
    return at;
  }
}

/** The Wasm training walk of one postflop tree (see the file comment). */
export class PostflopWalk implements TaskTrainer {
  readonly regrets: QuantStore;
  readonly strategy: QuantStore;
  readonly bytes: number;
  /**
   * The chance tasks (threads > 1; `cn` and `out` in the shared memory; the inputs are their first
   * chance node's, in the layout's `j` rows: `opp`, `act` and `self` are empty).
   */
  readonly tasks: ChanceTasks | null = null;
  /** Per first chance node: its active count, -1 until the reach phase reaches it (threads > 1). */
  private readonly chanceCn: Int32Array | null = null;
  private x!: Exports;
  private readonly memory: WebAssembly.Memory;
  private readonly oppAt: number;
  private readonly actAt: number;
  private readonly outAt: number;
  private readonly outEAt: number;
  private readonly weights: readonly [Float32Array, Float32Array];
  private readonly runner: WalkTaskRunner | null = null;
  private readonly entry: WorkerEntry | null = null;
  private readonly discAt: number = 0;
  /** The quant block (asm/walk.ts `quant`; 0: f32 stores): formats, seeds, iteration, scales. */
  private readonly quantAt: number = 0;
  /** Runs a round of tasks on every thread (the solver's worker pool; threads > 1). */
  private run: ((p: 0 | 1, mode: number) => number) | null = null;

  /**
   * `threads` > 1: the threaded walk on a shared memory (see the file comment); `storage`: the
   * stores' formats (regrets f32 or signed, strategy f32 or unsigned) and rounding keys.
   */
  constructor(tree: PublicTree, g: WalkGame, threads = 1, storage: TrainerStorage = F32_STORAGE) {
    const mod = threads > 1 ? walkModuleShared() : walkModule();
    if (!mod) throw new Error("WebAssembly SIMD (or shared memory) is not available");
    const rf = storage.regretFormat, sf = storage.strategyFormat;
    const ri = formatInfo(rf), si = formatInfo(sf);
    if ((ri.levels > 0 && !ri.signed) || si.signed && si.levels > 0) {
      // A RangeError: PostflopGame.trainer declines (the TypeScript walk runs) instead of failing.
      throw new RangeError(
        `the Wasm walk keeps signed regrets, unsigned strategies: not ${rf}/${sf}`,
      );
    }
    this.weights = g.initialWeights;
    const [H0, H1] = g.numHands, maxH = Math.max(H0, H1);
    const N = tree.size;

    // Chance outcomes (children of chance nodes) get a record each.
    const chanceIndex = new Uint32Array(N);
    let C = 0;
    for (let n = 0; n < N; n++) {
      if (tree.kind[n] !== CFR_CHANCE) continue;
      for (let c = tree.firstChild[n]; c < tree.firstChild[n] + tree.numChildren[n]; c++) {
        chanceIndex[c] = C++;
      }
    }
    const nIso = tree.isoWeight.length;
    const perms = [new Map<number, number>(), new Map<number, number>()];
    let permBytes = 0;
    for (const p of [0, 1] as const) {
      for (let k = 0; k < nIso; k++) {
        const i = tree.isoPerm[p][k];
        if (!perms[p].has(i)) {
          perms[p].set(i, 0), permBytes += align(4 * tree.permutations[i].length);
        }
      }
    }
    const T = g.tBoard.length;
    let boardBytes = 0;
    for (const bo of g.boards) {
      for (const q of [0, 1] as const) {
        const n = bo.order[q].length;
        boardBytes += 2 * align(4 * n) + align(4 * bo.dead[q].length) + align(32);
      }
    }
    const blocks = tree.blockSize.length;
    let n = 0;
    for (let b = 0; b < blocks; b++) n += tree.blockSize[b];
    const wideB = align(4 * (Math.max(1, tree.maxActions) * maxH + 4));
    const reachB = align(4 * (maxH + 4)), actB = align(maxH + 16);
    const depthB = 3 * wideB + reachB + actB;

    const L = new Layout();
    const CFG = 128;
    const cfg = L.take(CFG * Math.max(1, threads));
    const nodes = L.take(16 * N), chance = L.take(32 * C);
    const blocked = [
      L.take(4 * tree.blockedHands[0].length),
      L.take(4 * tree.blockedHands[1].length),
    ];
    const isos = L.take(16 * nIso), permAt = L.take(permBytes);
    const terms = L.take(32 * T), boardAt = L.take(boardBytes);
    const cards = [L.take(2 * H0), L.take(2 * H1)], same = [L.take(4 * H0), L.take(4 * H1)];
    // One thread's scratch: card sums, showdown buffers, regret-matching sums, per-depth vectors.
    const scratch = () => {
      const cs = L.take(52 * 8), all = L.take(52 * 8), win = L.take(8 * maxH);
      const crec = L.take(4 * maxH + 32) + 16, cr = L.take(8 * maxH);
      const sum = L.take(8 * (maxH + 4)), den = L.take(8 * (maxH + 4)), acc = L.take(8 * maxH);
      const depth0 = L.take(depthB * tree.levels);
      return [cs, all, win, crec, cr, sum, den, acc, depth0];
    };
    const slots = [scratch()];
    this.oppAt = L.take(reachB), this.actAt = L.take(actB);
    this.outAt = L.take(reachB), this.outEAt = L.take(reachB);
    const offsetsAt = L.take(4 * (blocks + 1));
    // The payloads with 4 spare words (regret matching reads up to 3 f32 past a block), then
    // each quantized store's scales and the quant block.
    const regAt = L.take(4 * payloadWords(rf, n) + 16);
    const stratAt = L.take(4 * payloadWords(sf, n) + 16);
    const rScalesAt = ri.levels > 0 ? L.take(4 * blocks) : 0;
    const sScalesAt = si.levels > 0 ? L.take(4 * blocks) : 0;
    const quantAt = this.quantAt = rScalesAt || sScalesAt ? L.take(40) : 0;
    for (let s = 1; s < threads; s++) slots.push(scratch());
    let at: WalkTaskLayout | null = null;
    let buf: ArrayBufferLike | null = null, mem: WebAssembly.Memory | null = null;
    /** The memory, grown (one thread) or created shared (threads) once the layout is complete. */
    const allocate = () => {
      if (L.top > MAX_BYTES) throw new RangeError(`the walk needs ${L.top} bytes of Wasm memory`);
      const pages = Math.ceil(L.top / PAGE);
      if (threads > 1) {
        mem = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
        this.x = new WebAssembly.Instance(mod, { env: { memory: mem } }).exports as never;
      } else {
        const x = new WebAssembly.Instance(mod, {}).exports;
        this.x = x as never, mem = x.memory as WebAssembly.Memory;
        if (L.top > mem.buffer.byteLength) mem.grow(pages - mem.buffer.byteLength / PAGE);
      }
      return buf = mem.buffer;
    };
    const parents: number[] = [], parentOf = new Map<number, number>();
    if (threads > 1) {
      const discAt = this.discAt = L.take(16);
      const block = L.take(48);
      // The first chance nodes (the tasks' parents: chanceTasks' outcomes), in order.
      const below = new Uint8Array(N);
      for (let n = 1; n < N; n++) {
        const par = tree.parent[n];
        if (below[par]) below[n] = 1;
        else if (tree.kind[par] === CFR_CHANCE) {
          below[n] = 1;
          if (!parentOf.has(par)) parentOf.set(par, parents.length), parents.push(par);
        }
      }
      this.tasks = chanceTasks(tree, (count, stride) => {
        const rows = count * stride, J = parents.length;
        at = {
          count,
          stride,
          order: L.take(4 * count),
          node: L.take(4 * count),
          depth: L.take(4 * count),
          cn: L.take(4 * Math.max(1, count)),
          par: L.take(4 * count),
          out: L.take(4 * rows),
          outE: L.take(4 * rows),
          chances: J,
          jNode: L.take(4 * J),
          jCn: L.take(4 * J),
          jLeft: L.take(4 * J),
          jOpp: L.take(4 * J * stride),
          jAct: L.take(J * stride),
          jOut: L.take(4 * J * stride),
          jOutE: L.take(4 * J * stride),
          disc: discAt,
          block,
        };
        const b = allocate();
        return {
          // The inputs are the first chance nodes' (no task reads the own reach).
          opp: new Float32Array(0),
          self: new Float32Array(0),
          act: new Uint8Array(0),
          cn: new Int32Array(b, at.cn, Math.max(1, count)),
          out: new Float32Array(b, at.out, rows),
        };
      });
      this.chanceCn = new Int32Array(buf!, at!.jCn, parents.length);
    } else allocate();
    this.memory = mem!;
    this.bytes = buf!.byteLength;
    const dv = new DataView(buf!);
    const u32 = new Uint32Array(buf!), i32 = new Int32Array(buf!), f32 = new Float32Array(buf!);
    const f64 = new Float64Array(buf!), u8 = new Uint8Array(buf!);

    for (let i = 0; i < N; i++) {
      const at = (nodes >> 2) + 4 * i;
      const kind = tree.kind[i];
      u32[at] = tree.firstChild[i];
      u32[at + 1] = tree.numChildren[i] | (kind << 16) | ((tree.player[i] & 0xff) << 24);
      i32[at + 2] = tree.block[i] >= 0 ? tree.block[i] : tree.terminal[i];
      u32[at + 3] = chanceIndex[i];
    }
    for (let n0 = 0; n0 < N; n0++) {
      if (tree.kind[n0] !== CFR_CHANCE) continue;
      for (let c = tree.firstChild[n0]; c < tree.firstChild[n0] + tree.numChildren[n0]; c++) {
        const at = (chance >> 2) + 8 * chanceIndex[c];
        f32[at] = tree.chanceWeight[c];
        u32[at + 1] = tree.blockedStart[0][c], u32[at + 2] = tree.blockedStart[0][c + 1];
        u32[at + 3] = tree.blockedStart[1][c], u32[at + 4] = tree.blockedStart[1][c + 1];
        u32[at + 5] = tree.isoStart[c], u32[at + 6] = tree.isoStart[c + 1];
        i32[at + 7] = this.tasks ? this.tasks.index[c] : -1;
      }
    }
    for (const p of [0, 1] as const) u32.set(tree.blockedHands[p], blocked[p] >> 2);
    let pa = permAt;
    for (const p of [0, 1] as const) {
      for (const i of perms[p].keys()) {
        perms[p].set(i, pa);
        u32.set(tree.permutations[i], pa >> 2);
        pa += align(4 * tree.permutations[i].length);
      }
    }
    for (let k = 0; k < nIso; k++) {
      const at = (isos >> 2) + 4 * k;
      f32[at] = tree.isoWeight[k];
      u32[at + 1] = perms[0].get(tree.isoPerm[0][k])!;
      u32[at + 2] = perms[1].get(tree.isoPerm[1][k])!;
    }
    // Showdown tables as TerminalKernels.addTables lays them out: descriptors per board and player.
    const desc: number[] = [];
    let ba = boardAt;
    const put = (a: Int32Array | Uint32Array) => {
      const at = ba;
      u32.set(new Uint32Array(a.buffer, a.byteOffset, a.length), at >> 2);
      ba += align(4 * a.length);
      return at;
    };
    g.boards.forEach((bo, bi) => {
      const side = [0, 1].map((q) => {
        const m = bo.order[q].length, rec = new Uint32Array(m);
        for (let i = 0; i < m; i++) {
          rec[i] = bo.strength[q][i] | (bo.c1[q][i] << 16) | (bo.c2[q][i] << 24);
        }
        return {
          n: m,
          rec: put(rec),
          idx: put(bo.order[q]),
          dead: put(bo.dead[q]),
          nDead: bo.dead[q].length,
        };
      });
      for (const p of [0, 1] as const) {
        const m = side[p], t = side[1 - p];
        desc[2 * bi + p] = put(
          Int32Array.from([m.n, t.n, m.rec, m.idx, t.rec, t.idx, m.dead, m.nDead]),
        );
      }
    });
    for (let t = 0; t < T; t++) {
      const at = terms + 32 * t, bi = g.tBoard[t], halfPot = g.tHalfPot[t], rake = g.tRake[t];
      if (bi < 0) {
        for (const p of [0, 1] as const) {
          dv.setFloat64(at + 8 * p, g.tFolder[t] !== p ? halfPot - rake : -halfPot, true);
        }
        dv.setInt32(at + 24, 0, true), dv.setInt32(at + 28, 0, true);
      } else {
        f64[at >> 3] = halfPot - rake,
          f64[(at >> 3) + 1] = -halfPot,
          f64[(at >> 3) + 2] = -rake / 2;
        dv.setInt32(at + 24, desc[2 * bi], true), dv.setInt32(at + 28, desc[2 * bi + 1], true);
      }
    }
    for (const p of [0, 1] as const) {
      u8.set(g.cards[p].subarray(0, 2 * g.numHands[p]), cards[p]);
      i32.set(g.sameIn[p], same[p] >> 2);
    }
    u8.fill(1, this.actAt, this.actAt + maxH);
    const offs = new Uint32Array(buf!, offsetsAt, blocks + 1);
    for (let b = 0; b < blocks; b++) offs[b + 1] = offs[b] + tree.blockSize[b];
    this.regrets = createQuantStore(rf, tree.blockSize, false, {
      buffer: buf!,
      byteOffset: regAt,
      scalesOffset: rScalesAt,
    });
    this.strategy = createQuantStore(sf, tree.blockSize, false, {
      buffer: buf!,
      byteOffset: stratAt,
      scalesOffset: sScalesAt,
    });
    if (quantAt) {
      u32.set([
        ri.code,
        si.code,
        storage.regretSeed >>> 0,
        storage.strategySeed >>> 0,
        +storage.regretStochastic,
        +storage.strategyStochastic,
        0,
        0,
        rScalesAt,
        sScalesAt,
      ], quantAt >> 2);
    }
    const shared = [nodes, chance, blocked[0], blocked[1], isos, terms, regAt, stratAt, offsetsAt];
    const hands = [H0, H1, cards[0], cards[1], same[0], same[1]];
    slots.forEach((sc, s) => {
      i32.set(
        [...shared, ...hands, ...sc, depthB, wideB, reachB, actB, quantAt],
        (cfg + CFG * s) >> 2,
      );
    });
    this.x.setup(cfg);
    if (at) {
      const t: WalkTaskLayout = at, tk = this.tasks!;
      const size = new Float64Array(N).fill(1);
      for (let c = N - 1; c > 0; c--) size[tree.parent[c]] += size[c];
      const order = Array.from({ length: t.count }, (_, k) => k);
      order.sort((a, b) => size[tk.node[b]] - size[tk.node[a]] || a - b);
      for (let k = 0; k < t.count; k++) {
        i32[(t.order >> 2) + k] = order[k];
        i32[(t.node >> 2) + k] = tk.node[k];
        i32[(t.depth >> 2) + k] = tree.depth[tk.node[k]];
        i32[(t.par >> 2) + k] = parentOf.get(tree.parent[tk.node[k]])!;
      }
      i32.set(parents, t.jNode >> 2);
      i32.set([
        t.out,
        t.outE,
        t.cn,
        t.par,
        t.jNode,
        t.jOpp,
        t.jAct,
        t.jCn,
        t.jLeft,
        t.jOut,
        t.jOutE,
        t.stride,
      ], t.block >> 2);
      this.runner = new WalkTaskRunner(this.x, buf!, t);
      const data: WalkWorkerData = {
        module: mod,
        memory: this.memory,
        cfgBase: cfg,
        cfgStride: CFG,
        layout: t,
      };
      // In a browser bundle this module is the bundle, which exports serveWalkTasks (mod.ts).
      this.entry = {
        module: WALK_WORKER_MODULE,
        name: "serveWalkTasks",
        data: data as unknown as Record<string, unknown>,
      };
    }
  }

  /** Sets the iteration whose rounding keys the next traversals' encodes use (quantized stores). */
  setIteration(t: number): void {
    if (this.quantAt) new Uint32Array(this.memory.buffer, this.quantAt + 24, 1)[0] = t >>> 0;
  }

  /** Sets the runner of a round of tasks on every thread (threads > 1). */
  setRunner(run: (p: 0 | 1, mode: number) => number): void {
    this.run = run;
  }

  /** Runs chance task k for p on the main thread's instance (threads > 1); returns the visits. */
  runTask(k: number, p: 0 | 1): number {
    return this.runner!.runTask(k, p);
  }

  /** Runs evaluation task k for p on the main thread's instance (threads > 1). */
  runEvalTask(k: number, p: 0 | 1): void {
    this.runner!.runEvalTask(k, p, false);
  }

  /** What the worker pool starts its workers with (threads > 1). */
  workerEntry(): WorkerEntry {
    return this.entry!;
  }

  rootValues(p: 0 | 1, best: Float32Array, profile: Float32Array): void {
    this.setOpp(p);
    if (this.run) {
      // Above the tasks, the tasks on every thread, then above them again with their values.
      this.chanceCn!.fill(-1);
      this.x.evaluate(p, this.oppAt, this.outAt, this.outEAt, PHASE_REACH);
      this.run(p, TASK_PROFILE);
      this.x.evaluate(p, this.oppAt, this.outAt, this.outEAt, PHASE_COMBINE);
    } else this.x.evaluate(p, this.oppAt, this.outAt, this.outEAt, PHASE_WHOLE);
    const buf = this.memory.buffer;
    best.set(new Float32Array(buf, this.outAt, best.length));
    profile.set(new Float32Array(buf, this.outEAt, profile.length));
  }

  average(b: number, A: number, H: number, out: Float32Array): void {
    const at = this.x.average(b, A, H);
    out.set(new Float32Array(this.memory.buffer, at, A * H));
  }

  nodeValues(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    best: Float32Array,
    profile: Float32Array,
  ): void {
    const buf = this.memory.buffer;
    new Float32Array(buf, this.oppAt, opp.length).set(opp);
    this.x.evaluateAt(n, d, p, this.oppAt, this.outAt, this.outEAt);
    best.set(new Float32Array(buf, this.outAt, best.length));
    profile.set(new Float32Array(buf, this.outEAt, profile.length));
  }

  private setOpp(p: 0 | 1): void {
    const w = this.weights[1 - p];
    new Float32Array(this.memory.buffer, this.oppAt, w.length).set(w);
  }

  traverse(p: 0 | 1, alphaPos: number, betaNeg: number, gamma: number): number {
    this.setOpp(p);
    const x = this.x, opp = this.oppAt, act = this.actAt, out = this.outAt;
    let v: number;
    if (this.run) {
      // Above the tasks, the tasks on every thread, then above them again with their values.
      this.chanceCn!.fill(-1);
      new Float32Array(this.memory.buffer, this.discAt, 3).set([alphaPos, betaNeg, gamma]);
      x.traverse(p, opp, act, out, alphaPos, betaNeg, gamma, PHASE_REACH);
      const tasks = this.run(p, TASK_TRAIN);
      v = x.traverse(p, opp, act, out, alphaPos, betaNeg, gamma, PHASE_COMBINE);
      if (v >= 0) v += tasks;
    } else v = x.traverse(p, opp, act, out, alphaPos, betaNeg, gamma, PHASE_WHOLE);
    if (v < 0) {
      throw new KibitzError(
        "non_finite",
        "a regret or strategy update gave a value that is not finite (Wasm walk): values must be finite",
      );
    }
    return v;
  }
}
