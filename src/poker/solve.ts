import {
  type CfrExploitability,
  type CfrPolicy,
  policyExploitability,
  TreeEvaluator,
} from "../cfr/evaluate.ts";
import { CfrSolver } from "../cfr/solver.ts";
import { nextCheck, nextGridPoint } from "../cfr/check_schedule.ts";
import { sharedMemoryAvailable } from "../cfr/threads.ts";
import { prestartWorkers, releaseSpareWorkers } from "../cfr/parallel.ts";
import { WALK_WORKER_MODULE } from "./wasm/walk.ts";
import type { PublicTree } from "../cfr/tree.ts";
import { KibitzError } from "../errors.ts";
import { EventLoopTurns } from "../cli/event_loop.ts";
import { chooseBackend, runGpuSolve, spotSolverOptions } from "./gpu_solve.ts";
import { collectGarbage } from "./memory.ts";
import { expandSpot, type PreparedSpot, type RunOptions, type SolveOutcome } from "./spot.ts";

export * from "./spot.ts";

/** Runs CFR on a prepared spot until the target exploitability or max iterations. */
export async function runSolve(spot: PreparedSpot, opts: RunOptions = {}): Promise<SolveOutcome> {
  const s = spot.config.solver;
  const choice = opts.backend ?? await chooseBackend(spot);
  // Built in shared memory where worker threads will view it (no copy left behind).
  const threaded = choice.backend === "cpu" && s.threads > 1 && sharedMemoryAvailable();
  // The worker threads start while the tree expands and the solver lays out its memory.
  if (threaded) prestartWorkers(s.threads - 1, WALK_WORKER_MODULE);
  let solver: CfrSolver;
  try {
    const tree = expandSpot(spot, threaded);
    solver = new CfrSolver(tree, spot.game, {
      ...spotSolverOptions(spot),
      threads: choice.backend === "gpu" ? 1 : s.threads,
      // The GPU solve trains on the device: the Wasm walk's memory (tree, stores) would go unused.
      ...(choice.backend === "gpu" ? { wasmWalk: false } : {}),
    });
  } catch (e) {
    releaseSpareWorkers();
    throw e;
  }
  opts.beforeSolve?.(solver);
  if (opts.restore) await opts.restore(solver);
  collectGarbage(); // before the storage pages become resident (memory.ts)
  if (choice.backend === "gpu") return runGpuSolve(spot, solver, choice.ctx!, opts);
  const firstIteration = solver.iteration;
  const every = Math.max(1, Math.floor(opts.every ?? 10));
  const start = performance.now();
  const carried = opts.carry?.seconds ?? 0;
  const reached: Record<string, number> = { ...opts.carry?.reached };
  const milestones = [...(opts.milestones ?? []), s.targetExploitabilityPct];
  // Measured at checks only: none before the first chunk (its value would be overwritten unread),
  // then by the predicted schedule (check_schedule.ts) unless every chunk is to be checked.
  let ex: CfrExploitability | null = null, exAt = -1;
  let stoppedBy: SolveOutcome["stoppedBy"] = "max_iterations";
  // The grid counts from the solve's first iteration, before any resume.
  const gridFrom = opts.carry?.gridFrom ?? firstIteration;
  let check = Math.min(s.maxIterations, nextGridPoint(firstIteration, gridFrom, every));
  let checkMs = 0;
  try {
    const turns = new EventLoopTurns();
    while (solver.iteration < s.maxIterations) {
      // A chunk up to the next check, one iteration at a time: a long iteration (F1: seconds) lets
      // Ctrl-C's handler run between two, and a stop ends the chunk there.
      const end = Math.min(solver.iteration + every, check);
      while (solver.iteration < end) {
        solver.run(1);
        if (turns.due) {
          await turns.turn();
          if (opts.shouldStop?.()) break;
        }
      }
      if (solver.iteration >= check) {
        const c0 = performance.now();
        ex = solver.exploitability(), exAt = solver.iteration;
        checkMs += performance.now() - c0;
        const own = (performance.now() - start) / 1000, seconds = carried + own;
        for (const m of milestones) {
          if (ex.percent <= m && reached[String(m)] === undefined) {
            reached[String(m)] = solver.iteration;
          }
        }
        opts.onProgress?.({
          iteration: solver.iteration,
          exploitabilityPct: ex.percent,
          exploitabilityChips: ex.chips,
          seconds,
          iterationsPerSecond: (solver.iteration - firstIteration) / own,
          memoryBytes: solver.storageBytes(),
          rssBytes: Deno.memoryUsage().rss,
        });
        if (ex.percent <= s.targetExploitabilityPct) {
          stoppedBy = "target";
          break;
        }
        check = opts.checkEvery
          ? Math.min(s.maxIterations, nextGridPoint(solver.iteration, gridFrom, every))
          : nextCheck(
            solver.iteration,
            ex.percent,
            s.targetExploitabilityPct,
            gridFrom,
            every,
            s.maxIterations,
          );
      }
      // Periodic checkpoints after any chunk: checks may be far apart (check_schedule.ts).
      if (solver.iteration < s.maxIterations && opts.checkpoint?.due()) {
        const seconds = carried + (performance.now() - start) / 1000;
        await opts.checkpoint.write(solver, { seconds, reached, gridFrom });
      }
      // A turn after every chunk too: a signal that came during a short one is seen at once.
      await turns.turn();
      if (opts.shouldStop?.()) {
        stoppedBy = "interrupted";
        break;
      }
    }
  } finally {
    // Stop the worker threads (and any started ahead that no pool took); later reads of the
    // strategy run on this thread.
    solver.close();
    releaseSpareWorkers();
  }
  const seconds = carried + (performance.now() - start) / 1000;
  if (opts.checkpoint?.atEnd(stoppedBy)) {
    await opts.checkpoint.write(solver, { seconds, reached, gridFrom });
  }
  return {
    solver,
    backend: "cpu",
    iterations: solver.iteration,
    // Measured anew when the solve ended between checks (max_iterations is always a check).
    exploitability: ex !== null && exAt === solver.iteration ? ex : solver.exploitability(),
    seconds,
    checkSeconds: checkMs / 1000,
    stoppedBy,
    reached,
  };
}

/** A fixed strategy profile read from saved per-block strategies (for --load). */
export function savedPolicy(tree: PublicTree, strategies: Float32Array): CfrPolicy {
  const offsets = new Float64Array(tree.blockNode.length + 1);
  for (let b = 0; b < tree.blockNode.length; b++) offsets[b + 1] = offsets[b] + tree.blockSize[b];
  if (offsets[tree.blockNode.length] !== strategies.length) {
    throw new KibitzError(
      "bad_save",
      `the saved strategy has ${strategies.length} values but the tree needs ${
        offsets[tree.blockNode.length]
      }`,
    );
  }
  return (node, out) => {
    const b = tree.block[node];
    out.set(strategies.subarray(offsets[b], offsets[b + 1]));
  };
}

/** Exploitability of a fixed profile on a spot. */
export function profileExploitability(spot: PreparedSpot, policy: CfrPolicy): CfrExploitability {
  return policyExploitability(new TreeEvaluator(expandSpot(spot), spot.game), policy);
}
