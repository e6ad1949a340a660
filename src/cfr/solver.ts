import { regretKernel, UPDATE_DCFR, UPDATE_PLUS, UPDATE_STRATEGY } from "./wasm/regret.ts";
import { KibitzError } from "../errors.ts";
import { sharedMemoryAvailable, shareFields } from "./threads.ts";
import {
  createQuantStore,
  decodeBlock,
  decodeBlockPositiveSums,
  defaultRounding,
  encodeBlock,
  type QuantStore,
  regretFormat,
  type Rounding,
  type RoundingKey,
  storeBytes,
  strategyFormat,
  updateRegretsDcfr,
  updateRegretsPlus,
  updateStrategy,
} from "../quant/mod.ts";
import {
  type CfrExploitability,
  type CfrPolicy,
  dealMass,
  policyExploitability,
  policyHandEquity,
  policyHandValues,
  type PolicyRootValues,
  TreeEvaluator,
  valuesExploitability,
} from "./evaluate.ts";
import type { CfrGame } from "./game.ts";
import {
  type CfrAlgorithm,
  DCFR_PAPER,
  defaultDiscount,
  type DiscountParams,
  type IterationDiscount,
  iterationDiscount,
  regretsNonNegative,
} from "./schedule.ts";
import { CFR_CHANCE, CFR_TERMINAL, type PublicTree } from "./tree.ts";
import {
  actionReach,
  addChanceChildValues,
  addValues,
  mixValues,
  outcomeReach,
  outcomeTraverser,
  terminalStep,
} from "./walk.ts";
import type { SolverOptions } from "./options.ts";
import { type PoolStats, WorkerPool } from "./parallel.ts";
import {
  type CfrTrainer,
  gameTaskTrainer,
  gameTrainer,
  type TaskTrainer,
  type TrainerStorage,
} from "./trainer.ts";
import {
  type ChanceTasks,
  chanceTasks,
  type SharedStores,
  TASK_BEST_RESPONSE,
  TASK_PROFILE,
  TASK_TRAIN,
} from "./tasks.ts";

export type { LockedNode, SolverOptions } from "./options.ts";
export type { SharedStores } from "./tasks.ts";

/** Progress callback of `run`: called after iteration `iteration` (1-based count done). */
export type ProgressFn = (iteration: number, solver: CfrSolver) => void;

const STRATEGY_SALT = 0x5bd1e995, PREDICT_SALT = 0x27d4eb2f;

/**
 * A vectorized CFR solver over a public tree: per player node, regrets and the cumulative strategy
 * are blocks of actions x hands in quantized storage; each iteration walks the tree once per player
 * (alternating updates) with reach and value vectors over all hands. CPU backend.
 */
export class CfrSolver {
  readonly algorithm: CfrAlgorithm;
  readonly discount: DiscountParams;
  readonly regrets: QuantStore;
  readonly strategy: QuantStore;
  /** PDCFR+ only: the predicted regrets the current strategy is read from. */
  readonly predicted: QuantStore | null;
  readonly seed: number;
  readonly pruning: number;
  readonly pruningRefresh: number;
  readonly reachWeighted: boolean;
  /** Whether regret matching of f32 regrets runs on the Wasm kernel (SolverOptions.wasm). */
  readonly wasm: boolean;
  /** Whether the traverser's nodes run fused on the Wasm kernel (DCFR, f32 stores, no options). */
  private readonly fused: boolean;
  /** The game's trainer running the whole training walk (SolverOptions.wasmWalk), or null. */
  readonly trainer: CfrTrainer | null;
  /**
   * On several threads, the game's trainer running the chance tasks (the threaded Wasm walk,
   * SolverOptions.wasmWalk) on every thread, which then holds the stores; null: the TypeScript
   * tasks on worker.ts threads.
   */
  readonly taskTrainer: TaskTrainer | null;
  /** Iterations done. */
  iteration = 0;
  /** Traverser hands visited at nodes during training (the work pruning saves). */
  nodeHandVisits = 0;
  /** Threads training uses (1 when the game or tree does not allow more). */
  readonly threads: number;
  /** Subtrees below the first chance nodes, run by the worker threads (null on one thread). */
  readonly tasks: ChanceTasks | null;

  private readonly locked: (Float32Array | null)[];
  private readonly evaluator: TreeEvaluator;
  private readonly avgPolicy: CfrPolicy;
  private readonly mass: number;
  private readonly rounding: Rounding | undefined;
  private readonly strategyRounding: Rounding;
  private readonly vals: Float32Array[] = [];
  private readonly sig: Float32Array[] = [];
  private readonly reg: Float32Array[] = [];
  private readonly reach: Float32Array[] = [];
  private readonly selfReach: Float32Array[] = [];
  private readonly active: Uint8Array[] = [];
  private readonly pruneMask: Uint8Array[] = [];
  private readonly tmp: Float32Array;
  private readonly sums: Float64Array;
  private readonly den: Float64Array;
  // Separate scratch for average(): evaluation may run inside a traversal's callbacks.
  private readonly avgSums: Float64Array;
  private readonly avgDen: Float64Array;
  private pruneNow = 0;
  private disc: IterationDiscount = { alphaPos: 0, betaNeg: 0.5, gamma: 0, alphaNext: 0 };
  private rKey: RoundingKey = { seed: 0, iteration: 0 };
  private sKey: RoundingKey = { seed: 0, iteration: 0 };
  private pKey: RoundingKey = { seed: 0, iteration: 0 };
  private pool: WorkerPool | null = null;
  /** 1 while the main thread reads subtree values computed by the tasks instead of visiting. */
  private fromTasks = false;

  /** `shared` is engine-internal: a worker thread's view of the main solver's stores. */
  constructor(
    readonly tree: PublicTree,
    readonly game: CfrGame,
    readonly options: SolverOptions = {},
    shared?: SharedStores,
  ) {
    const algorithm = options.algorithm ?? "dcfr";
    this.algorithm = algorithm;
    const base = options.schedule === "paper" && (algorithm === "dcfr" || algorithm === "dcfr+")
      ? { ...DCFR_PAPER }
      : defaultDiscount(algorithm);
    this.discount = { ...base, ...options.discount };
    this.seed = options.seed ?? 0;
    this.pruning = options.pruning ?? 0;
    this.pruningRefresh = options.pruningRefresh ?? 10;
    this.rounding = options.rounding;
    this.strategyRounding = options.strategyRounding ?? "stochastic";
    this.reachWeighted = options.reachWeightedAverage ?? false;
    this.wasm = (options.wasm ?? true) && regretKernel() !== null;
    if (!(this.pruning >= 0)) {
      throw new KibitzError("bad_option", `pruning must be >= 0, got ${this.pruning}`);
    }
    if (this.pruning > 0 && regretsNonNegative(algorithm)) {
      throw new KibitzError(
        "bad_option",
        `pruning skips actions whose regret is far below zero; ${algorithm} floors regrets at 0, so use dcfr`,
      );
    }
    const signed = !regretsNonNegative(algorithm);
    const rf = options.regretFormat ?? regretFormat(options.regretBits ?? 32, signed);
    if (signed && (rf === "u8" || rf === "u4" || rf === "u16")) {
      throw new KibitzError(
        "bad_format",
        `${algorithm} keeps negative regrets, which unsigned ${rf} cannot store; use a signed format or cfr+/dcfr+/pdcfr+`,
      );
    }
    const sf = strategyFormat(options.strategyBits ?? 32);
    const threads = Math.floor(options.threads ?? 1);
    if (!(threads >= 1)) {
      throw new KibitzError("bad_option", `threads must be at least 1, got ${options.threads}`);
    }
    if (threads > 1 && !sharedMemoryAvailable()) {
      throw new KibitzError(
        "bad_option",
        `threads = ${threads} needs SharedArrayBuffer, which this page does not have: serve it cross-origin isolated (COOP: same-origin, COEP: require-corp) or use threads = 1`,
      );
    }
    // The whole walk on the game's trainer, which then holds the stores (in its Wasm memory, f32
    // or quantized, rounded with the keys of beginIteration); on several threads, the trainer's
    // tasks on a memory every thread shares.
    const walkable = !shared && (options.wasmWalk ?? true) && this.wasm &&
      algorithm === "dcfr" && !this.reachWeighted &&
      this.pruning === 0 && (options.lockedNodes ?? []).length === 0;
    const storage: TrainerStorage = {
      regretFormat: rf,
      strategyFormat: sf,
      regretSeed: this.seed >>> 0,
      strategySeed: (this.seed ^ STRATEGY_SALT) >>> 0,
      regretStochastic: (this.rounding ?? defaultRounding(rf)) === "stochastic",
      strategyStochastic: this.strategyRounding === "stochastic",
    };
    let taskTrainer = walkable && threads > 1
      ? gameTaskTrainer(game, tree, threads, storage)
      : null;
    if (taskTrainer && !(taskTrainer.tasks && taskTrainer.tasks.count > 0)) taskTrainer = null;
    this.taskTrainer = taskTrainer;
    // Evaluations after close() (reading the results) run their tasks here instead of starting
    // the workers again.
    taskTrainer?.setRunner((p, mode) =>
      mode !== TASK_TRAIN && !this.pool
        ? this.runTasksHere(p, mode)
        : this.workerPool().runTasks(this.iteration, p, mode)
    );
    const tasks = taskTrainer
      ? taskTrainer.tasks
      : !shared && threads > 1 && game.workerSource
      ? chanceTasks(tree)
      : null;
    this.tasks = shared ? shared.tasks : tasks && tasks.count > 0 ? tasks : null;
    this.threads = this.tasks && !shared ? threads : 1;
    const sab = this.threads > 1 && !taskTrainer;
    if (sab) {
      // The tree and the game's tables once in shared memory, not cloned into every worker.
      shareFields(tree as unknown as Record<string, unknown>);
      game.shareTables?.();
    }
    this.trainer = walkable && this.threads === 1 ? gameTrainer(game, tree, storage) : null;
    const walk = this.trainer ?? taskTrainer;
    this.regrets = walk?.regrets ?? shared?.regrets ??
      createQuantStore(rf, tree.blockSize, sab);
    this.strategy = walk?.strategy ?? shared?.strategy ??
      createQuantStore(sf, tree.blockSize, sab);
    this.predicted = shared
      ? shared.predicted
      : algorithm === "pdcfr+"
      ? createQuantStore(rf, tree.blockSize, sab)
      : null;

    this.fused = this.wasm && algorithm === "dcfr" && this.regrets.f32 !== null &&
      this.strategy.f32 !== null && !this.reachWeighted;
    this.locked = new Array(tree.blockNode.length).fill(null);
    for (const l of options.lockedNodes ?? []) {
      const b = l.node >= 0 && l.node < tree.size ? tree.block[l.node] : -1;
      if (b < 0) throw new KibitzError("bad_lock", `locked node ${l.node} is not a player node`);
      if (l.strategy.length !== tree.blockSize[b]) {
        throw new KibitzError(
          "bad_lock",
          `locked node ${l.node} needs ${
            tree.blockSize[b]
          } values (actions x hands), got ${l.strategy.length}`,
        );
      }
      this.locked[b] = l.strategy;
    }

    const maxH = Math.max(tree.numHands[0], tree.numHands[1]);
    const wide = Math.max(1, tree.maxActions) * maxH;
    for (let d = 0; d < tree.levels; d++) {
      this.vals.push(new Float32Array(wide));
      this.sig.push(new Float32Array(wide));
      this.reg.push(new Float32Array(wide));
      this.reach.push(new Float32Array(maxH));
      this.selfReach.push(new Float32Array(maxH));
      this.active.push(new Uint8Array(maxH));
      this.pruneMask.push(new Uint8Array(wide));
    }
    this.tmp = new Float32Array(wide);
    this.sums = new Float64Array(maxH);
    this.den = new Float64Array(maxH);
    this.avgSums = new Float64Array(maxH);
    this.avgDen = new Float64Array(maxH);
    this.evaluator = new TreeEvaluator(tree, game);
    this.avgPolicy = (node, out) => this.average(node, out);
    const tr = walk;
    if (tr) {
      // Evaluations of the average strategy (TreeEvaluator.rootValues) walk on the trainer (the
      // threaded one's on the main thread, on the shared memory).
      const fast: PolicyRootValues = { tree, values: (p, b, e) => this.trainerRootValues(p, b, e) };
      if (tr.nodeValues) fast.nodeValues = tr.nodeValues.bind(tr);
      Object.assign(this.avgPolicy, { rootValues: fast });
    }
    if (this.tasks && !taskTrainer) {
      // Exploitability and EVs of the average strategy split over the threads like training.
      this.evaluator.parallel = {
        tasks: this.tasks,
        policy: this.avgPolicy,
        run: (p, br) => {
          this.workerPool().runTasks(this.iteration, p, br ? TASK_BEST_RESPONSE : TASK_PROFILE);
        },
      };
    }
    this.mass = dealMass(game);
  }

  /** Bytes of regret, strategy (and PDCFR+ prediction) storage. */
  storageBytes(): number {
    const blocks = this.tree.blockNode.length;
    let b = storeBytes(this.regrets.format, this.regrets.n, blocks) +
      storeBytes(this.strategy.format, this.strategy.n, blocks);
    if (this.predicted) b += storeBytes(this.predicted.format, this.predicted.n, blocks);
    return b;
  }

  /** Runs `iterations` more iterations, calling `onProgress` every `every` iterations and at the end. */
  run(iterations: number, onProgress?: ProgressFn, every = 1): void {
    for (let i = 0; i < iterations; i++) {
      this.step();
      if (onProgress && (this.iteration % every === 0 || i === iterations - 1)) {
        onProgress(this.iteration, this);
      }
    }
  }

  /** Stops the worker threads (a later `run` starts them again). Idempotent. */
  close(): void {
    this.pool?.close();
    this.pool = null;
  }

  /** One iteration: player 0 then player 1 update (alternating), each against the other's current strategy. */
  step(): void {
    const t = this.iteration;
    this.beginIteration(t);
    const tr = this.trainer ?? this.taskTrainer;
    if (tr) {
      const { alphaPos, betaNeg, gamma } = this.disc;
      tr.setIteration?.(t);
      for (const p of [0, 1] as const) {
        this.nodeHandVisits += tr.traverse(p, alphaPos, betaNeg, gamma);
      }
      this.iteration++;
      return;
    }
    for (const p of [0, 1] as const) {
      const o = (1 - p) as 0 | 1;
      const act = new Uint8Array(this.tree.numHands[p]).fill(1);
      const out = new Float32Array(this.tree.numHands[p]);
      const self = this.game.initialWeights(p), opp = this.game.initialWeights(o);
      if (this.threads > 1) {
        // Reach pass down to the chance nodes, subtrees on every thread, then the values pass.
        this.tasks!.cn.fill(-1);
        this.reachPass(0, 0, p, opp, self, act, act.length);
        this.nodeHandVisits += this.workerPool().runTasks(t, p, TASK_TRAIN);
        this.fromTasks = true;
        try {
          this.visit(0, 0, p, opp, self, act, act.length, out, 0);
        } finally {
          this.fromTasks = false;
        }
      } else this.visit(0, 0, p, opp, self, act, act.length, out, 0);
    }
    this.iteration++;
  }

  /**
   * Engine-internal (also run by worker threads): runs the subtree of task `k` for traverser `p`
   * from the inputs the reach pass stored, writing its values to the task's output row. Returns the
   * node-hand visits it made.
   */
  runTask(k: number, p: 0 | 1): number {
    if (this.taskTrainer) return this.taskTrainer.runTask(k, p);
    const tk = this.tasks!, t = this.tree;
    const cn = tk.cn[k];
    if (cn < 0) return 0;
    const c = tk.node[k], d = t.depth[c], row = k * tk.stride;
    const o = 1 - p, Ho = t.numHands[o], H = t.numHands[p];
    // Private copies of the inputs (the scratch of the chance node's depth, as the serial walk).
    const r = this.reach[d - 1], sr = this.selfReach[d - 1], ca = this.active[d - 1];
    for (let i = 0; i < Ho; i++) r[i] = tk.opp[row + i];
    for (let h = 0; h < H; h++) sr[h] = tk.self[row + h], ca[h] = tk.act[row + h];
    const before = this.nodeHandVisits;
    this.visit(c, d, p, r, sr, ca, cn, tk.out, row);
    return this.nodeHandVisits - before;
  }

  /** Every task of a round on this thread, in order (see runTask); returns the visits. */
  private runTasksHere(p: 0 | 1, mode: number): number {
    let v = 0;
    for (let k = 0; k < this.tasks!.count; k++) {
      if (mode === TASK_TRAIN) v += this.runTask(k, p);
      else this.runEvalTask(k, p, mode === TASK_BEST_RESPONSE);
    }
    return v;
  }

  /** Engine-internal (worker threads): evaluation task `k` of the average strategy. */
  runEvalTask(k: number, p: 0 | 1, br: boolean): void {
    if (this.taskTrainer) return this.taskTrainer.runEvalTask(k, p);
    this.evaluator.runTask(k, p, this.avgPolicy, br);
  }

  /**
   * Engine-internal (tasks/walk_schedule.ts): measures from now where the worker threads' time
   * goes, round by round (parallel.ts PoolStats, updated in place); null on one thread.
   */
  measureThreads(): PoolStats | null {
    return this.threads > 1 ? this.workerPool().measure() : null;
  }

  /**
   * Starts the worker threads now and keeps them until close(). Needed before `run` where the
   * calling thread cannot wait for a worker to start (a browser page or worker); elsewhere `run`
   * starts them on demand.
   */
  async startThreads(): Promise<void> {
    if (this.threads > 1) await this.workerPool().start();
  }

  private workerPool(): WorkerPool {
    if (!this.pool) {
      this.pool = new WorkerPool(this, this.threads - 1, this.taskTrainer?.workerEntry());
    }
    return this.pool;
  }

  /** Engine-internal: sets the discounts, pruning and rounding keys of iteration t. */
  beginIteration(t: number): void {
    this.disc = iterationDiscount(this.discount, t);
    const refresh = this.pruningRefresh > 0 && t % this.pruningRefresh === 0;
    this.pruneNow = refresh ? 0 : this.pruning;
    const mode = this.rounding;
    this.rKey = { seed: this.seed, iteration: t, mode };
    this.sKey = {
      seed: (this.seed ^ STRATEGY_SALT) >>> 0,
      iteration: t,
      mode: this.strategyRounding,
    };
    this.pKey = { seed: (this.seed ^ PREDICT_SALT) >>> 0, iteration: t, mode };
  }

  /**
   * The top-down half of a parallel traversal: walks the nodes above the first chance nodes as
   * `visit` does and stores, for every chance outcome below them, the inputs its subtree gets
   * (opponent reach, own reach, active hands), without evaluating or updating anything.
   */
  private reachPass(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    self: Float32Array,
    act: Uint8Array,
    nAct: number,
  ): void {
    const t = this.tree, tk = this.tasks!;
    const H = t.numHands[p];
    const kind = t.kind[n];
    if (kind === CFR_TERMINAL) return;
    const first = t.firstChild[n], A = t.numChildren[n];
    if (kind === CFR_CHANCE) {
      const o = (1 - p) as 0 | 1;
      for (let c = first; c < first + A; c++) {
        const k = tk.index[c], row = k * tk.stride;
        outcomeReach(t, c, o, opp, tk.opp, row);
        tk.cn[k] = outcomeTraverser(t, c, p, self, act, nAct, tk.self, tk.act, row);
      }
      return;
    }
    const q = t.player[n], b = t.block[n];
    const sig = this.sig[d], reg = this.reg[d];
    this.current(n, b, sig, reg, q === p && this.pruneNow > 0);
    if (q !== p) {
      const Hq = t.numHands[q], r = this.reach[d];
      for (let a = 0; a < A; a++) {
        actionReach(opp, sig, a, Hq, r);
        this.reachPass(first + a, d + 1, p, r, self, act, nAct);
      }
      return;
    }
    const sr = this.selfReach[d], ca = this.active[d];
    const prune = this.pruneNow, pm = this.pruneMask[d];
    if (prune > 0) this.markPruned(b, A, H, reg, prune, pm);
    for (let a = 0; a < A; a++) {
      let cn = nAct;
      if (prune > 0) {
        cn = 0;
        for (let h = 0; h < H; h++) {
          const on = act[h] === 1 && pm[a * H + h] === 0;
          ca[h] = on ? 1 : 0;
          if (on) cn++;
        }
      } else for (let h = 0; h < H; h++) ca[h] = act[h];
      if (cn === 0) continue;
      if (this.reachWeighted) { for (let h = 0; h < H; h++) sr[h] = self[h] * sig[a * H + h]; }
      this.reachPass(first + a, d + 1, p, opp, this.reachWeighted ? sr : self, ca, cn);
    }
  }

  /** Current strategy (regret matching, locks applied) of player node `node`: actions x hands. */
  currentStrategy(node: number): Float32Array {
    const b = this.blockOf(node);
    const out = new Float32Array(this.tree.blockSize[b]);
    this.current(node, b, out, new Float32Array(out.length));
    return out;
  }

  /** Average strategy of player node `node` (normalized cumulative strategy, locks applied). */
  averageStrategy(node: number): Float32Array {
    const out = new Float32Array(this.tree.blockSize[this.blockOf(node)]);
    this.average(node, out);
    return out;
  }

  /** The average strategy profile as a CfrPolicy (for best response and evaluation). */
  averagePolicy(): CfrPolicy {
    return this.avgPolicy;
  }

  /**
   * The trainer's root values of the average strategy (both modes), kept per player for the
   * iteration they were computed at: the results' root summary after the last check reads them
   * instead of walking again. The stores change only by iterations (warm starts write them before
   * the solve's first check), so the iteration identifies them.
   */
  private trainerRootValues(p: 0 | 1, best: Float32Array, profile: Float32Array): void {
    const c = this.rootCache;
    if (c.iteration !== this.iteration) c.iteration = this.iteration, c.best = [], c.profile = [];
    if (!c.best[p]) {
      c.best[p] = new Float32Array(best.length), c.profile[p] = new Float32Array(profile.length);
      (this.trainer ?? this.taskTrainer)!.rootValues(p, c.best[p], c.profile[p]);
    }
    best.set(c.best[p]), profile.set(c.profile[p]);
  }

  private readonly rootCache: { iteration: number; best: Float32Array[]; profile: Float32Array[] } =
    { iteration: -1, best: [], profile: [] };

  /** CfrExploitability of the average strategy, with both best responses and EVs. */
  exploitability(): CfrExploitability {
    const tr = this.trainer ?? this.taskTrainer;
    if (tr) {
      // One trainer walk per player gives both modes; valuesExploitability asks for the best
      // responses first, then the profile values.
      const profile: Float32Array[] = [];
      return valuesExploitability(this.game, (p, mode, out) => {
        if (mode === "profile") return out.set(profile[p]);
        profile[p] = new Float32Array(out.length);
        this.trainerRootValues(p, out, profile[p]);
      });
    }
    return policyExploitability(this.evaluator, this.averagePolicy());
  }

  /** Per-hand EVs of `player` under the average strategy. */
  handValues(player: 0 | 1): Float32Array {
    return policyHandValues(this.evaluator, player, this.averagePolicy());
  }

  /** Per-hand equity (expected pot share) of `player` under the average strategy; needs game equity. */
  handEquity(player: 0 | 1): Float32Array {
    return policyHandEquity(this.evaluator, player, this.averagePolicy());
  }

  /** Total compatible deal mass (normalizer of values). */
  dealMass(): number {
    return this.mass;
  }

  private blockOf(node: number): number {
    const b = node >= 0 && node < this.tree.size ? this.tree.block[node] : -1;
    if (b < 0) throw new KibitzError("bad_node", `node ${node} is not a player node`);
    return b;
  }

  private average(node: number, out: Float32Array): void {
    const t = this.tree, b = t.block[node];
    const A = t.numChildren[node], H = t.numHands[t.player[node]];
    // On the trainer's kernel where it has one (a trainer runs without locks).
    const tr = this.trainer ?? this.taskTrainer;
    if (tr?.average) return tr.average(b, A, H, out);
    decodeBlock(this.strategy, b, out, 0);
    // Per-hand f32 sums over actions in order (action-major, unit stride), then the same divisions.
    const sum = this.avgSums, den = this.avgDen, uniform = 1 / A;
    for (let h = 0; h < H; h++) sum[h] = 0;
    for (let a = 0; a < A; a++) {
      const row = a * H;
      for (let h = 0; h < H; h++) sum[h] = Math.fround(sum[h] + out[row + h]);
    }
    for (let h = 0; h < H; h++) {
      const s = sum[h];
      if (s > 0) den[h] = s, sum[h] = 0;
      else den[h] = Infinity, sum[h] = uniform;
    }
    for (let a = 0; a < A; a++) {
      const row = a * H;
      for (let h = 0; h < H; h++) out[row + h] = out[row + h] / den[h] + sum[h];
    }
    this.applyLock(b, A, H, out);
  }

  /**
   * Regret matching into `sig`. With `needReg` (pruning reads them) the decoded regrets are left in
   * `reg`; otherwise f32 regrets are read in place and `reg` may be left untouched.
   */
  private current(
    node: number,
    b: number,
    sig: Float32Array,
    reg: Float32Array,
    needReg = false,
  ): void {
    const t = this.tree;
    const A = t.numChildren[node], H = t.numHands[t.player[node]];
    const st = this.predicted ?? this.regrets;
    if (st.f32 && !needReg && this.wasm) {
      regretKernel()!.match(st.f32, st.offsets[b], A, H, sig);
      return this.applyLock(b, A, H, sig);
    }
    let src = reg, off = 0;
    // Positive-regret sums per hand, accumulated over actions in order (action-major, unit stride)
    // in f32; the divisions below in f64 then rounded equal f32 divisions (correctly rounded).
    const sum = this.sums;
    for (let h = 0; h < H; h++) sum[h] = 0;
    if (st.f32 && !needReg) {
      src = st.f32, off = st.offsets[b];
      for (let a = 0; a < A; a++) {
        const row = off + a * H;
        for (let h = 0; h < H; h++) {
          const r = src[row + h];
          // max(r, 0) exactly, without a branch; the sum rounded to f32 (as the Wasm f32x4 lanes)
          sum[h] = Math.fround(sum[h] + (r + Math.abs(r)) * 0.5);
        }
      }
    } else decodeBlockPositiveSums(st, b, reg, H, sum);
    // Per hand: divide by the sum, or (no positive regret) divide by Infinity and add 1 / A; the
    // branch is taken once per hand instead of once per element.
    const uniform = 1 / A, den = this.den;
    for (let h = 0; h < H; h++) {
      const s = sum[h];
      if (s > 0) den[h] = s, sum[h] = 0;
      else den[h] = Infinity, sum[h] = uniform;
    }
    for (let a = 0; a < A; a++) {
      const row = off + a * H, out = a * H;
      for (let h = 0; h < H; h++) {
        const r = src[row + h];
        sig[out + h] = ((r + Math.abs(r)) * 0.5) / den[h] + sum[h];
      }
    }
    this.applyLock(b, A, H, sig);
  }

  private applyLock(b: number, A: number, H: number, sig: Float32Array): void {
    const lock = this.locked[b];
    if (!lock) return;
    for (let h = 0; h < H; h++) {
      if (Number.isNaN(lock[h])) continue;
      for (let a = 0; a < A; a++) sig[a * H + h] = lock[a * H + h];
    }
  }

  private visit(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    self: Float32Array,
    act: Uint8Array,
    nAct: number,
    out: Float32Array,
    off: number,
  ): void {
    const t = this.tree;
    const H = t.numHands[p];
    const kind = t.kind[n];
    this.nodeHandVisits += nAct;
    if (kind === CFR_TERMINAL) {
      terminalStep(this.game, t, n, p, opp, out, off, false);
      return;
    }
    const first = t.firstChild[n], A = t.numChildren[n];
    const vals = this.vals[d];
    if (kind === CFR_CHANCE) {
      out.fill(0, off, off + H);
      const o = (1 - p) as 0 | 1;
      const r = this.reach[d], sr = this.selfReach[d], ca = this.active[d];
      const tk = this.fromTasks ? this.tasks : null;
      for (let c = first; c < first + A; c++) {
        if (tk) {
          // Parallel traversal: this outcome's subtree already ran as a task.
          const row = tk.index[c] * tk.stride;
          for (let h = 0; h < H; h++) vals[h] = tk.out[row + h];
        } else {
          outcomeReach(t, c, o, opp, r, 0);
          const cn = outcomeTraverser(t, c, p, self, act, nAct, sr, ca, 0);
          this.visit(c, d + 1, p, r, sr, ca, cn, vals, 0);
        }
        addChanceChildValues(t, c, p, vals, out, off);
      }
      return;
    }
    const q = t.player[n], b = t.block[n];
    const sig = this.sig[d], reg = this.reg[d];
    this.current(n, b, sig, reg, q === p && this.pruneNow > 0);
    if (q !== p) {
      const Hq = t.numHands[q], r = this.reach[d];
      out.fill(0, off, off + H);
      for (let a = 0; a < A; a++) {
        actionReach(opp, sig, a, Hq, r);
        this.visit(first + a, d + 1, p, r, self, act, nAct, vals, 0);
        addValues(vals, H, out, off);
      }
      return;
    }

    // The traverser's node: child values per action, then regret and strategy updates.
    const sr = this.selfReach[d], ca = this.active[d];
    const prune = this.pruneNow, pm = this.pruneMask[d];
    if (prune > 0) this.markPruned(b, A, H, reg, prune, pm);
    for (let a = 0; a < A; a++) {
      let cn = nAct, childAct = act;
      if (prune > 0) {
        cn = 0;
        for (let h = 0; h < H; h++) {
          const on = act[h] === 1 && pm[a * H + h] === 0;
          ca[h] = on ? 1 : 0;
          if (on) cn++;
        }
        childAct = ca;
      }
      if (cn === 0) {
        vals.fill(0, a * H, a * H + H);
        continue;
      }
      if (this.reachWeighted) { for (let h = 0; h < H; h++) sr[h] = self[h] * sig[a * H + h]; }
      const childSelf = this.reachWeighted ? sr : self;
      this.visit(first + a, d + 1, p, opp, childSelf, childAct, cn, vals, a * H);
    }
    if (this.fused && prune === 0) {
      // Values, instant regrets and both updates in one Wasm call (bit-identical to the steps below).
      const { alphaPos, betaNeg, gamma } = this.disc, start = this.regrets.offsets[b];
      const st = this.strategy.f32!, k = regretKernel()!;
      if (
        k.traverserDcfr(
          sig,
          vals,
          act,
          out,
          off,
          this.regrets.f32!,
          st,
          start,
          A,
          H,
          alphaPos,
          betaNeg,
          gamma,
        )
      ) return;
    }
    // Node value per hand: sum over actions in order, in f32 (one running sum per hand, rounded at
    // each step as the Wasm kernels' f32x4 lanes).
    mixValues(sig, vals, A, H, this.sums, out, off);
    // Instant regrets in place. Without pruning, hands not traversed (blocked) get 0. With pruning,
    // skipped entries get the instant regret that leaves their regret unchanged (as if not visited).
    const { alphaPos, betaNeg } = this.disc;
    for (let a = 0; a < A; a++) {
      const row = a * H;
      if (prune > 0) {
        for (let h = 0; h < H; h++) {
          const i = row + h;
          if (act[h] === 0 || pm[i] === 1) {
            const r = reg[i];
            vals[i] = r - r * (r > 0 ? alphaPos : betaNeg);
          } else vals[i] = vals[i] - out[off + h];
        }
      } else {
        for (let h = 0; h < H; h++) vals[row + h] = act[h] === 0 ? 0 : vals[row + h] - out[off + h];
      }
    }
    this.update(b, A, H, sig, vals, self, reg);
  }

  /**
   * pm[a * H + h] = 1 where hand h skips action a: R < -c * (sum of h's positive regrets) with that
   * sum positive (so the action has probability 0). Locked hands are never pruned.
   */
  private markPruned(
    b: number,
    A: number,
    H: number,
    reg: Float32Array,
    c: number,
    pm: Uint8Array,
  ): void {
    const lock = this.locked[b];
    for (let h = 0; h < H; h++) {
      let s = 0;
      for (let a = 0; a < A; a++) {
        const x = reg[a * H + h];
        if (x > 0) s += x;
      }
      const free = s > 0 && !(lock && !Number.isNaN(lock[h]));
      const cut = -c * s;
      for (let a = 0; a < A; a++) pm[a * H + h] = free && reg[a * H + h] < cut ? 1 : 0;
    }
  }

  /** The fused update of an f32 block on the Wasm kernel; false: the TypeScript update must run. */
  private wasmUpdate(
    st: QuantStore,
    b: number,
    op: number,
    input: Float32Array,
    a: number,
    c: number,
  ): boolean {
    return this.wasm && st.f32 !== null &&
      regretKernel()!.update(st.f32, st.offsets, b, op, input, a, c);
  }

  private update(
    b: number,
    A: number,
    H: number,
    sig: Float32Array,
    inst: Float32Array,
    self: Float32Array,
    reg: Float32Array,
  ): void {
    const { alphaPos, betaNeg, gamma, alphaNext } = this.disc;
    // `reg` holds this block's decoded regrets when current() decoded them (quantized, no PDCFR+).
    const old = this.predicted || this.regrets.f32 ? undefined : reg;
    switch (this.algorithm) {
      case "dcfr":
        if (!this.wasmUpdate(this.regrets, b, UPDATE_DCFR, inst, alphaPos, betaNeg)) {
          updateRegretsDcfr(this.regrets, b, inst, 0, alphaPos, betaNeg, this.rKey, old);
        }
        break;
      case "dcfr+":
      case "cfr+":
        if (!this.wasmUpdate(this.regrets, b, UPDATE_PLUS, inst, alphaPos, 0)) {
          updateRegretsPlus(this.regrets, b, inst, 0, alphaPos, this.rKey, old);
        }
        break;
      case "pdcfr+": {
        updateRegretsPlus(this.regrets, b, inst, 0, alphaPos, this.rKey);
        // Predicted regrets for the next strategy: max(0, R_t * alpha_{t+1} + r_t).
        const tmp = this.tmp, n = A * H;
        decodeBlock(this.regrets, b, tmp, 0);
        for (let i = 0; i < n; i++) {
          const x = Math.fround(Math.fround(tmp[i] * alphaNext) + inst[i]);
          tmp[i] = x > 0 ? x : 0;
        }
        encodeBlock(this.predicted!, b, tmp, 0, this.pKey);
        break;
      }
    }
    if (this.reachWeighted) {
      const tmp = this.tmp;
      for (let a = 0; a < A; a++) {
        for (let h = 0; h < H; h++) tmp[a * H + h] = sig[a * H + h] * self[h];
      }
      if (!this.wasmUpdate(this.strategy, b, UPDATE_STRATEGY, tmp, gamma, 1)) {
        updateStrategy(this.strategy, b, tmp, 0, gamma, 1, this.sKey);
      }
    } else {
      if (!this.wasmUpdate(this.strategy, b, UPDATE_STRATEGY, sig, gamma, 1)) {
        updateStrategy(this.strategy, b, sig, 0, gamma, 1, this.sKey);
      }
    }
  }
}

/** Builds a solver for `game`'s tree (see SolverOptions). */
export function createSolver(
  tree: PublicTree,
  game: CfrGame,
  options: SolverOptions = {},
): CfrSolver {
  return new CfrSolver(tree, game, options);
}
