import { KibitzError } from "../errors.ts";
import type { CfrGame } from "./game.ts";
import type { SolverOptions } from "./options.ts";
import {
  type ChanceTasks,
  type SharedStores,
  TASK_BEST_RESPONSE,
  TASK_TRAIN,
  type TaskRunner,
  type TaskSolver,
  type WorkerEntry,
} from "./tasks.ts";
import type { PublicTree } from "./tree.ts";

// Control words (Int32Array over a SharedArrayBuffer).
const GEN = 0, ITER = 1, PLAYER = 2, NEXT = 3, DONE = 4, QUIT = 5, ERROR = 6, MODE = 7, SPIN = 8;
const STATE = 9;
// Worker states: exited (or not started), idle and alive, claimed for the next traversal.
const DEAD = 0, IDLE = 1, CLAIMED = 2;
/** A worker idle this long exits, so a process that never calls close() still ends. */
const IDLE_EXIT_MS = 10_000;
const START_TIMEOUT_MS = 120_000;
/**
 * How long (microseconds) an idle thread polls for the next round before it sleeps in
 * Atomics.wait, where the threads do not outnumber the cores: the next round mostly starts within
 * the main thread's serial phases (a fraction of a millisecond), and waking a sleeping thread takes
 * tens of microseconds, which short rounds (turn spots at 16 threads: about a millisecond) feel.
 * Off unless KIBITZ_SPIN_US says otherwise: on a loaded machine a polling thread takes the turn of
 * one with work (T1 on 2 threads of a 2-core machine at load 9: 8 % slower with 1000 us).
 */
let spinUs = envSpin();

/** KIBITZ_SPIN_US where the environment may be read (no permission prompt), else 0. */
function envSpin(): number {
  const d = (globalThis as { Deno?: typeof Deno }).Deno;
  try {
    const name = "KIBITZ_SPIN_US";
    if (!d || d.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
      return 0;
    }
    const v = Number(d.env.get(name) ?? 0);
    return Number.isFinite(v) && v > 0 ? v : 0;
  } catch {
    return 0;
  }
}

/** Engine-internal (A/B runs): sets the polling time of the pools created from now on (0: none). */
export function setThreadSpin(us: number): void {
  spinUs = Math.max(0, us);
}

/** Worker threads started ahead by prestartWorkers, for the next pool to take. */
const spare: Worker[] = [];

function newWorker(): Worker {
  return new Worker(new URL("./worker.ts", import.meta.url).href, { type: "module" });
}

/**
 * Starts `n` worker threads now, each loading `module` (a pool entry's module; none: the
 * TypeScript task loop's), for the next pools to take instead of starting their own: their
 * start-up (an isolate and its modules each) overlaps with what the caller does meanwhile (the
 * tree's expansion, the solver's layout). Those no pool takes end with releaseSpareWorkers
 * (WorkerPool.close calls it).
 */
export function prestartWorkers(n: number, module?: string): void {
  while (spare.length < n) {
    const w = newWorker();
    w.postMessage({ preload: module ?? null });
    spare.push(w);
  }
}

/** Ends the workers prestartWorkers started that no pool took. */
export function releaseSpareWorkers(): void {
  for (const w of spare.splice(0)) w.terminate();
}

/** Polls `a[index]` while it holds `value`, for at most `us` microseconds. */
function spinWhile(a: Int32Array, index: number, value: number, us: number): void {
  if (us <= 0) return;
  const end = performance.now() + us / 1000;
  for (let i = 0; Atomics.load(a, index) === value; i++) {
    if ((i & 63) === 0 && performance.now() > end) return;
  }
}

/** What every worker thread receives from the pool: its slot, control words and how to fail. */
export interface WorkerTaskSetup {
  slot: number;
  ctrl: Int32Array;
  visits: Float64Array;
  /** Per slot: when the worker's share of the last round began and ended (wallClock ms). */
  stamps: Float64Array;
  /** Control word a worker that fails to start sets to 1, and the word to notify. */
  failFlag: number;
  failWake: number;
  /** Idle time after which the worker exits (Infinity: only on close). */
  idleExitMs: number;
}

/** A worker.ts thread that runs a WorkerEntry: the pool's setup and the entry. */
export interface WorkerEntrySetup extends WorkerTaskSetup {
  entry: WorkerEntry;
}

/** What a worker.ts thread receives once: everything it needs to run tasks on shared storage. */
export interface WorkerSetup extends WorkerTaskSetup {
  tree: PublicTree;
  game: { module: string; name: string; fields: Record<string, unknown> };
  options: SolverOptions;
  stores: Omit<SharedStores, "tasks">;
  tasks: ChanceTasks;
}

/** Milliseconds on a clock every thread shares (performance.now() counts from each thread's start). */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Where a pool's thread time went, summed over the rounds since stats were turned on
 * (WorkerPool.stats): the threads' time running tasks, waking up after the round began, and idle
 * at its end waiting for the last thread (all threads, the main one included).
 */
export interface PoolStats {
  threads: number;
  rounds: number;
  /** Wall ms of the rounds (from the wake-up call to the last thread done). */
  wallMs: number;
  /** Summed over the threads: ms running their share of tasks, ms from the round's start to their first claim, ms from their last task to the round's end. */
  busyMs: number;
  wakeMs: number;
  tailMs: number;
  /** The largest wake-up of one worker in one round (ms). */
  maxWakeMs: number;
}

/** Whether this thread may block in Atomics.wait (a browser page's main thread may not). */
export function canBlock(): boolean {
  if (blockAllowed === null) {
    try {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
      blockAllowed = true;
    } catch {
      blockAllowed = false;
    }
  }
  return blockAllowed;
}
let blockAllowed: boolean | null = null;

/** Atomics.wait where the thread may block; otherwise a spin on Atomics.load. */
function blockingWait(a: Int32Array, index: number, value: number, timeoutMs = Infinity): void {
  if (canBlock()) {
    Atomics.wait(a, index, value, timeoutMs);
    return;
  }
  const end = performance.now() + timeoutMs;
  while (Atomics.load(a, index) === value && performance.now() < end) {
    // A page's main thread cannot sleep; running workers need nothing from it.
  }
}

/**
 * Main-thread side of a parallel solve: `workers` Web Workers that, with the main thread, take
 * tasks from a shared counter each traversal. The main thread blocks on Atomics.wait while the
 * workers finish, so `TaskSolver.run` stays synchronous. Workers start on first use; where the
 * thread cannot wait for a worker to start (a browser's main thread or worker, whose event loop a
 * starting worker needs), `start()` starts them ahead and keeps them until `close()`.
 */
export class WorkerPool {
  private readonly ctrl: Int32Array;
  private readonly visits: Float64Array;
  private readonly stamps: Float64Array;
  /** Where the threads' time goes, round by round (null: not measured; see PoolStats). */
  stats: PoolStats | null = null;
  private readonly workers: (Worker | null)[];
  /** What every worker receives (besides its slot): worker.ts's setup, or an entry's. */
  private readonly setup: Record<string, unknown> & {
    ctrl: Int32Array;
    visits: Float64Array;
    stamps: Float64Array;
  };
  /** Started by start(): workers never idle-exit and are not restarted during a run. */
  private persistent = false;

  /**
   * `entry`: the workers run that export with that data (the threaded Wasm walk's task loop)
   * instead of rebuilding the game and a solver.
   */
  constructor(private readonly solver: TaskSolver, workers: number, entry?: WorkerEntry) {
    this.ctrl = new Int32Array(new SharedArrayBuffer(4 * (STATE + workers)));
    // No polling where the threads outnumber the cores: a polling thread would take one's turn.
    const cores = navigator.hardwareConcurrency || 1;
    this.ctrl[SPIN] = workers + 1 <= cores ? spinUs : 0;
    this.visits = new Float64Array(new SharedArrayBuffer(8 * workers));
    this.stamps = new Float64Array(new SharedArrayBuffer(16 * workers));
    this.workers = new Array(workers).fill(null);
    if (entry) {
      this.setup = { entry, ctrl: this.ctrl, visits: this.visits, stamps: this.stamps };
      return;
    }
    const game = solver.game as CfrGame;
    const src = game.workerSource!();
    this.setup = {
      // Labels are for display only; leaving them out keeps the copy small.
      tree: { ...solver.tree, label: [] },
      game: { ...src, fields: { ...game } as Record<string, unknown> },
      options: { ...solver.options, threads: 1 },
      stores: { regrets: solver.regrets, strategy: solver.strategy, predicted: solver.predicted },
      tasks: solver.tasks!,
      ctrl: this.ctrl,
      visits: this.visits,
      stamps: this.stamps,
    } satisfies Omit<WorkerSetup, "slot" | "failFlag" | "failWake" | "idleExitMs">;
  }

  /**
   * Runs every task for player `p` on all threads: training at iteration `t` (returns the
   * node-hand visits) or an evaluation of the average strategy (`mode`).
   */
  runTasks(t: number, p: 0 | 1, mode: number): number {
    const ctrl = this.ctrl, W = this.workers.length;
    this.claimAll();
    Atomics.store(ctrl, ITER, t);
    Atomics.store(ctrl, PLAYER, p);
    Atomics.store(ctrl, MODE, mode);
    Atomics.store(ctrl, NEXT, 0);
    Atomics.store(ctrl, DONE, 0);
    const begin = this.stats ? wallClock() : 0;
    Atomics.add(ctrl, GEN, 1);
    Atomics.notify(ctrl, GEN);
    const count = this.solver.tasks!.count;
    let visits = 0, failure: unknown = null, mine = 0;
    try {
      visits = runShare(this.solver, ctrl, p, mode, count);
      if (this.stats) mine = wallClock();
    } catch (e) {
      failure = e;
    }
    for (let d = Atomics.load(ctrl, DONE); d < W; d = Atomics.load(ctrl, DONE)) {
      spinWhile(ctrl, DONE, d, ctrl[SPIN]);
      if (Atomics.load(ctrl, DONE) === d) blockingWait(ctrl, DONE, d);
    }
    if (this.stats && !failure) this.addStats(begin, mine, wallClock());
    if (failure) throw failure;
    if (Atomics.load(ctrl, ERROR) !== 0) {
      this.close();
      throw new KibitzError("worker_failed", "a CFR worker thread failed (its error is above)");
    }
    for (let w = 0; w < W; w++) visits += this.visits[w];
    return visits;
  }

  /** Adds a round that began at `begin`, whose main-thread share ended at `mine`, to the stats. */
  private addStats(begin: number, mine: number, end: number): void {
    const s = this.stats!, st = this.stamps;
    s.rounds++, s.wallMs += end - begin;
    s.busyMs += mine - begin, s.tailMs += end - mine;
    for (let w = 0; w < this.workers.length; w++) {
      const a = st[2 * w], b = st[2 * w + 1];
      s.wakeMs += a - begin, s.busyMs += b - a, s.tailMs += end - b;
      s.maxWakeMs = Math.max(s.maxWakeMs, a - begin);
    }
  }

  /** Starts measuring where the threads' time goes (see PoolStats), from zero. */
  measure(): PoolStats {
    return this.stats = {
      threads: this.workers.length + 1,
      rounds: 0,
      wallMs: 0,
      busyMs: 0,
      wakeMs: 0,
      tailMs: 0,
      maxWakeMs: 0,
    };
  }

  /**
   * Makes every worker claimed for the next traversal, starting those that are not running (all
   * of them first, then waiting for each: their start-ups overlap).
   */
  private claimAll(): void {
    const ctrl = this.ctrl, started: number[] = [];
    for (let w = 0; w < this.workers.length; w++) {
      if (Atomics.compareExchange(ctrl, STATE + w, IDLE, CLAIMED) === IDLE) continue;
      if (!canBlock() || this.persistent) {
        throw new KibitzError(
          "worker_failed",
          `CFR worker thread ${w} is not running: on this thread, start the workers with \`await solver.startThreads()\` before running`,
        );
      }
      // Exited while idle (or never started): start a fresh one.
      this.spawn(w, IDLE_EXIT_MS);
      started.push(w);
    }
    const start = performance.now();
    for (const w of started) {
      while (Atomics.load(ctrl, STATE + w) !== IDLE) {
        this.failIfNotStarting(w, start);
        Atomics.wait(ctrl, STATE + w, DEAD, 100);
      }
      Atomics.store(ctrl, STATE + w, CLAIMED);
    }
  }

  /** Closes the pool and throws when worker w reported a failure or has not started in time. */
  private failIfNotStarting(w: number, since: number): void {
    if (Atomics.load(this.ctrl, ERROR) !== 0 || performance.now() - since > START_TIMEOUT_MS) {
      this.close();
      throw new KibitzError("worker_failed", `CFR worker thread ${w} did not start`);
    }
  }

  private spawn(w: number, idleExitMs: number): void {
    this.workers[w]?.terminate();
    const worker = spare.pop() ?? newWorker();
    this.workers[w] = worker;
    const setup: WorkerTaskSetup = {
      ...this.setup,
      slot: w,
      failFlag: ERROR,
      failWake: STATE + w,
      idleExitMs,
    };
    worker.postMessage(setup);
  }

  /** Starts every worker that is not running and resolves when all are ready; they stay until close(). */
  async start(): Promise<void> {
    const ctrl = this.ctrl;
    this.persistent = true;
    const waiting: number[] = [];
    for (let w = 0; w < this.workers.length; w++) {
      if (Atomics.load(ctrl, STATE + w) === DEAD) this.spawn(w, Infinity), waiting.push(w);
    }
    const begin = performance.now();
    for (const w of waiting) {
      while (Atomics.load(ctrl, STATE + w) !== IDLE) {
        this.failIfNotStarting(w, begin);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  }

  /** Asks the workers to exit and terminates them (and any spare ones: prestartWorkers). */
  close(): void {
    releaseSpareWorkers();
    this.persistent = false;
    Atomics.store(this.ctrl, QUIT, 1);
    Atomics.add(this.ctrl, GEN, 1);
    Atomics.notify(this.ctrl, GEN);
    for (let w = 0; w < this.workers.length; w++) {
      this.workers[w]?.terminate();
      this.workers[w] = null;
      Atomics.store(this.ctrl, STATE + w, DEAD);
    }
  }
}

/** Takes tasks from the shared counter until none is left; returns node-hand visits (training). */
function runShare(solver: TaskRunner, ctrl: Int32Array, p: 0 | 1, mode: number, count: number) {
  let v = 0;
  for (let k = Atomics.add(ctrl, NEXT, 1); k < count; k = Atomics.add(ctrl, NEXT, 1)) {
    if (mode === TASK_TRAIN) v += solver.runTask(k, p);
    else solver.runEvalTask(k, p, mode === TASK_BEST_RESPONSE);
  }
  return v;
}

/**
 * Worker-thread side: rebuilds the game and a solver on the shared stores, then runs tasks each
 * time the main thread bumps the generation, until told to quit or idle for `idleExitMs`.
 */
export function serveTasks(
  solver: TaskRunner,
  slot: number,
  ctrl: Int32Array,
  visits: Float64Array,
  idleExitMs = IDLE_EXIT_MS,
  stamps?: Float64Array,
): void {
  let seen = Atomics.load(ctrl, GEN);
  Atomics.store(ctrl, STATE + slot, IDLE);
  Atomics.notify(ctrl, STATE + slot);
  const spin = Atomics.load(ctrl, SPIN);
  for (;;) {
    spinWhile(ctrl, GEN, seen, spin);
    Atomics.wait(ctrl, GEN, seen, idleExitMs);
    if (Atomics.load(ctrl, QUIT) !== 0) return;
    const gen = Atomics.load(ctrl, GEN);
    if (gen === seen) {
      // Idle: exit unless the main thread has just claimed this worker.
      if (Atomics.compareExchange(ctrl, STATE + slot, IDLE, DEAD) === IDLE) return;
      continue;
    }
    seen = gen;
    if (Atomics.load(ctrl, STATE + slot) !== CLAIMED) continue;
    const p = Atomics.load(ctrl, PLAYER) as 0 | 1, mode = Atomics.load(ctrl, MODE);
    let v = 0;
    const t0 = stamps ? wallClock() : 0;
    try {
      solver.beginIteration(Atomics.load(ctrl, ITER));
      v = runShare(solver, ctrl, p, mode, solver.tasks!.count);
    } catch (e) {
      console.error(e);
      Atomics.store(ctrl, ERROR, 1);
    }
    visits[slot] = v;
    if (stamps) stamps[2 * slot] = t0, stamps[2 * slot + 1] = wallClock();
    Atomics.store(ctrl, STATE + slot, IDLE);
    Atomics.add(ctrl, DONE, 1);
    Atomics.notify(ctrl, DONE);
  }
}
