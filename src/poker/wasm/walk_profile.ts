import type { CfrSolver } from "../../cfr/solver.ts";
import { TASK_TRAIN } from "../../cfr/tasks.ts";
import type { TaskTrainer } from "../../cfr/trainer.ts";
import { KibitzError } from "../../errors.ts";

// A schedule model of the threaded Wasm walk (tasks/walk_schedule.ts): one iteration (and one
// exploitability check) of a threaded solver run on the calling thread alone, its serial phases
// (the walk above the tasks: reach and combine) and every task timed; from those times, the
// makespan of the schedule the worker pool runs (claims in the walk's order from a shared counter,
// each thread taking the next claim when it is free) on T threads, plus the serial time: the best
// speed-up the work split allows (Amdahl and load balance; not memory bandwidth or clock speed).

/** One round of a traversal: the serial phases around the tasks and each claim's time (ms). */
export interface WalkRound {
  /** "train" (a traversal) or "eval" (an exploitability check's walk). */
  kind: "train" | "eval";
  p: 0 | 1;
  /** The walk above the tasks before them (PHASE_REACH) and after them (PHASE_COMBINE). */
  reachMs: number;
  combineMs: number;
  /** Time of the k-th claim's task, in claim order. */
  taskMs: number[];
}

/** The timed rounds of one profiled iteration or check. */
export interface WalkProfile {
  rounds: WalkRound[];
  /** Wall time of the iteration (or check) as run, all of it on this thread. */
  wallMs: number;
}

/**
 * Runs `warmup` training iterations of `solver` (a threaded Wasm walk: threads > 1), then `repeat`
 * more, with every task on the calling thread, timing the phases and tasks of those `repeat`; with
 * `check`, an exploitability check after each of them too, timed alike. No worker starts.
 */
export function profileWalk(
  solver: CfrSolver,
  warmup: number,
  repeat: number,
  check: boolean,
): { train: WalkProfile[]; check: WalkProfile[] | null } {
  const walk = solver.taskTrainer as TaskTrainer | null;
  if (!walk || !walk.tasks) {
    throw new KibitzError("bad_option", "the profile needs the threaded Wasm walk (threads > 1)");
  }
  let rounds: WalkRound[] = [];
  let start = 0, runEnd = 0;
  const round = (kind: WalkRound["kind"], p: 0 | 1): WalkRound => {
    const r: WalkRound = { kind, p, reachMs: 0, combineMs: 0, taskMs: [] };
    rounds.push(r);
    return r;
  };
  // The tasks in claim order on this thread, each timed (the pool's runShare with one thread).
  walk.setRunner((p, mode) => {
    const t0 = performance.now(), r = rounds[rounds.length - 1];
    r.reachMs = t0 - start;
    let v = 0;
    for (let k = 0, prev = t0; k < walk.tasks!.count; k++) {
      if (mode === TASK_TRAIN) v += walk.runTask(k, p);
      else walk.runEvalTask(k, p);
      const now = performance.now();
      r.taskMs.push(now - prev), prev = now;
    }
    runEnd = performance.now();
    return v;
  });
  // The serial phases: from the walk's call to the first task, and from the last to its return.
  const wrap = (name: "traverse" | "rootValues", kind: WalkRound["kind"]) => {
    const obj = walk as unknown as Record<string, (...a: unknown[]) => unknown>;
    const f = obj[name].bind(walk);
    obj[name] = (...a: unknown[]) => {
      const r = round(kind, a[0] as 0 | 1);
      start = performance.now();
      const v = f(...a);
      r.combineMs = performance.now() - runEnd;
      return v;
    };
  };
  wrap("traverse", "train");
  wrap("rootValues", "eval");
  solver.run(warmup);
  // A check as warm-up too (its walk's first call compiles it); the profiled one is after more
  // iterations (the solver keeps the values of an iteration's check).
  if (check) solver.exploitability();
  const train: WalkProfile[] = [], checks: WalkProfile[] = [];
  for (let i = 0; i < repeat; i++) {
    rounds = [];
    let t0 = performance.now();
    solver.run(1);
    train.push({ rounds, wallMs: performance.now() - t0 });
    if (!check) continue;
    rounds = [];
    t0 = performance.now();
    solver.exploitability();
    checks.push({ rounds, wallMs: performance.now() - t0 });
  }
  return { train, check: check ? checks : null };
}

/** Per round and task, the median over `profiles` (runs of the same rounds): less noise. */
export function medianProfile(profiles: readonly WalkProfile[]): WalkProfile {
  const med = (x: number[]) => {
    const s = [...x].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const first = profiles[0];
  return {
    wallMs: med(profiles.map((p) => p.wallMs)),
    rounds: first.rounds.map((r, i) => ({
      kind: r.kind,
      p: r.p,
      reachMs: med(profiles.map((p) => p.rounds[i].reachMs)),
      combineMs: med(profiles.map((p) => p.rounds[i].combineMs)),
      taskMs: r.taskMs.map((_, k) => med(profiles.map((p) => p.rounds[i].taskMs[k]))),
    })),
  };
}

/**
 * Makespan of `taskMs` (in claim order) on `threads` threads taking claims from a shared counter:
 * each claim goes to the thread that is free first (ties: the lowest thread), as runShare does.
 */
export function claimMakespan(taskMs: readonly number[], threads: number): number {
  const free = new Float64Array(Math.max(1, threads));
  for (const d of taskMs) {
    let w = 0;
    for (let i = 1; i < free.length; i++) if (free[i] < free[w]) w = i;
    free[w] += d;
  }
  let m = 0;
  for (const f of free) m = Math.max(m, f);
  return m;
}

/** The schedule bound of one profile on T threads (ms; speed-up over the one-thread total). */
export interface ScheduleBound {
  threads: number;
  serialMs: number;
  tasksMs: number;
  totalMs: number;
  speedup: number;
  /** Busy share of the threads during the task rounds (1: no thread waits at a round's end). */
  balance: number;
}

/**
 * The predicted time of `profile` on each of `threads` (serial phases plus each round's claim
 * makespan, plus `roundMs` of synchronization per round): Amdahl and load balance, nothing else.
 */
export function scheduleBounds(
  profile: WalkProfile,
  threads: readonly number[],
  roundMs = 0,
): ScheduleBound[] {
  const sum = (x: readonly number[]) => x.reduce((a, b) => a + b, 0);
  const serialMs = sum(profile.rounds.map((r) => r.reachMs + r.combineMs));
  const work = sum(profile.rounds.map((r) => sum(r.taskMs)));
  const one = serialMs + work;
  return threads.map((t) => {
    const sync = t > 1 ? roundMs * profile.rounds.length : 0;
    const tasksMs = sum(profile.rounds.map((r) => claimMakespan(r.taskMs, t))) + sync;
    const totalMs = serialMs + tasksMs;
    return {
      threads: t,
      serialMs,
      tasksMs,
      totalMs,
      speedup: one / totalMs,
      balance: tasksMs > 0 ? work / (t * tasksMs) : 1,
    };
  });
}

/** A summary of a profile's rounds: serial ms, task count, total and largest task ms. */
export function roundSummary(profile: WalkProfile): string[] {
  return profile.rounds.map((r) => {
    const total = r.taskMs.reduce((a, b) => a + b, 0);
    const sorted = [...r.taskMs].sort((a, b) => b - a);
    return `${r.kind} p${r.p}: reach ${r.reachMs.toFixed(2)} ms, combine ${
      r.combineMs.toFixed(2)
    } ms, ${r.taskMs.length} tasks ${total.toFixed(1)} ms (largest ${
      sorted.slice(0, 3).map((x) => x.toFixed(2)).join(", ")
    } ms; first claim ${r.taskMs[0]?.toFixed(2)} ms)`;
  });
}
