// The schedule model of the threaded Wasm walk (src/poker/wasm/walk_profile.ts): iterations and one
// exploitability check of T1 or F1 timed on this thread alone (serial phases and every task, the
// median of --repeat iterations), then the predicted time and speed-up of the pool's schedule on
// 1, 2, 4, 8, 16 threads (Amdahl and load balance only). With --measure T[,T...], the real pool on
// T threads too: ms per iteration against the prediction, and where the threads' time went
// (running tasks, waking up, idle at a round's end; the tasks' time against the one-thread
// profile: what running side by side costs each task), once per --spin value (microseconds an idle
// thread polls before it sleeps; default KIBITZ_SPIN_US, else 0). Not a deno.json task:
//   deno run -A --v8-flags=--no-liftoff tasks/walk_schedule.ts [F1|T1] [--formats 32/32]
//     [--warmup 2] [--repeat 3] [--threads 1,2,4,8,16] [--measure 16] [--spin 0,1000]
//     [--iterations 5] [--json FILE]
import { runMain } from "../src/cli/main.ts";
import { KibitzError } from "../src/errors.ts";
import { CfrSolver } from "../src/cfr/solver.ts";
import { setThreadSpin } from "../src/cfr/parallel.ts";
import { parseSolveConfig, T1_SPOT } from "../src/poker/config.ts";
import { expandSpot, prepareSpot } from "../src/poker/spot.ts";
import { spotSolverOptions } from "../src/poker/gpu_solve.ts";
import { F1 } from "../src/poker/bench.ts";
import {
  medianProfile,
  profileWalk,
  roundSummary,
  scheduleBounds,
  type WalkProfile,
} from "../src/poker/wasm/walk_profile.ts";

const USAGE = "usage: deno run -A --v8-flags=--no-liftoff tasks/walk_schedule.ts [F1|T1] " +
  "[--formats 32/32] [--warmup 2] [--repeat 3] [--threads 1,2,4,8,16] [--measure T,...] " +
  "[--spin US,...] [--iterations 5] [--json FILE]";

await runMain(() => {
  const args = [...Deno.args];
  if (args.includes("-h") || args.includes("--help")) return console.log(USAGE);
  const opt = (name: string, def: string) => {
    const i = args.indexOf(name);
    if (i < 0) return def;
    if (i + 1 >= args.length) throw new KibitzError("bad_args", `${name} needs a value`);
    return args.splice(i, 2)[1];
  };
  const ints = (name: string, def: string, min: number) => {
    const v = opt(name, def);
    const xs = v === "" ? [] : v.split(",").map(Number);
    if (!xs.every((x) => Number.isInteger(x) && x >= min)) {
      throw new KibitzError("bad_args", `${name} takes integers >= ${min}, got ${v}`);
    }
    return xs;
  };
  const formats = opt("--formats", "32/32"), json = opt("--json", "");
  const [warmup] = ints("--warmup", "2", 0), [repeat] = ints("--repeat", "3", 1);
  const [iterations] = ints("--iterations", "5", 1);
  const threads = ints("--threads", "1,2,4,8,16", 1), measure = ints("--measure", "", 2);
  const spins = ints("--spin", "", 0);
  const name = args[0] ?? "F1";
  if (name !== "T1" && name !== "F1") {
    throw new KibitzError("bad_args", `the spot must be T1 or F1, got ${name}`);
  }
  const m = /^(\d+)\/(\d+)$/.exec(formats);
  if (!m) throw new KibitzError("bad_args", `--formats must be R/S (e.g. 32/32), got ${formats}`);
  const solverOn = (t: number) => {
    const text = (name === "F1" ? F1 : T1_SPOT) +
      `\n[solver]\nthreads = ${t}\nregret_bits = ${m[1]}\nstrategy_bits = ${m[2]}\n`;
    const spot = prepareSpot(parseSolveConfig(text));
    const s = new CfrSolver(expandSpot(spot, t > 1), spot.game, spotSolverOptions(spot));
    if (!s.taskTrainer?.tasks) {
      throw new KibitzError("bad_option", `${name} does not run on the threaded Wasm walk`);
    }
    return s;
  };
  const solver = solverOn(2);
  console.log(
    `${name} ${formats}: ${solver.taskTrainer!.tasks!.count} tasks; ${warmup} warm-up ` +
      `iterations, then the median of ${repeat}; machine ${navigator.hardwareConcurrency} threads`,
  );
  const prof = profileWalk(solver, warmup, repeat, true);
  const train = medianProfile(prof.train);
  const show = (what: string, p: WalkProfile) => {
    console.log(`${what}: ${p.wallMs.toFixed(1)} ms on this thread`);
    for (const line of roundSummary(p)) console.log(`  ${line}`);
    console.log("  threads | serial ms | tasks ms | total ms | speed-up | balance");
    const bounds = scheduleBounds(p, threads);
    for (const b of bounds) {
      console.log(
        `  ${String(b.threads).padStart(7)} | ${b.serialMs.toFixed(2).padStart(9)} | ${
          b.tasksMs.toFixed(1).padStart(8)
        } | ${b.totalMs.toFixed(1).padStart(8)} | ${b.speedup.toFixed(2).padStart(8)} | ${
          b.balance.toFixed(3)
        }`,
      );
    }
    return { wallMs: p.wallMs, rounds: p.rounds, bounds };
  };
  const out: Record<string, unknown> = {
    spot: name,
    formats,
    tasks: solver.taskTrainer!.tasks!.count,
    train: show("iteration (model)", train),
  };
  if (prof.check) out.check = show("exploitability check (model)", medianProfile(prof.check));
  const sum = (x: number[]) => x.reduce((a, b) => a + b, 0);
  const taskMs = sum(train.rounds.map((r) => sum(r.taskMs)));
  const oneMs = taskMs + sum(train.rounds.map((r) => r.reachMs + r.combineMs));
  const measured = [];
  for (
    const [t, spin] of measure.flatMap((t) => (spins.length ? spins : [-1]).map((u) => [t, u]))
  ) {
    if (spin >= 0) setThreadSpin(spin);
    const s = solverOn(t);
    s.run(warmup); // the workers start in the first iteration
    const stats = s.measureThreads()!, times: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = performance.now();
      s.run(1);
      times.push(performance.now() - t0);
    }
    s.close();
    const ms = [...times].sort((a, b) => a - b)[times.length >> 1];
    const [bound] = scheduleBounds(train, [t]);
    const per = (x: number) => x / iterations;
    const row = {
      threads: t,
      spinUs: spin,
      msPerIteration: ms,
      predictedMs: bound.totalMs,
      speedup: oneMs / ms,
      predictedSpeedup: bound.speedup,
      serialMs: sum(times) / iterations - per(stats.wallMs),
      utilization: stats.busyMs / (t * stats.wallMs),
      taskInflation: per(stats.busyMs) / taskMs,
      wakeMsPerRound: stats.wakeMs / Math.max(1, stats.rounds * (t - 1)),
      maxWakeMs: stats.maxWakeMs,
      tailMsPerRound: stats.tailMs / Math.max(1, stats.rounds * t),
    };
    measured.push(row);
    console.log(
      `measured on ${t} threads${spin >= 0 ? ` (spin ${spin} us)` : ""}: ${
        ms.toFixed(1)
      } ms/iteration (median of ${iterations}; model ${
        bound.totalMs.toFixed(1)
      }), speed-up over the one-thread profile ${row.speedup.toFixed(2)} (model ${
        bound.speedup.toFixed(2)
      }); outside the rounds ${row.serialMs.toFixed(2)} ms/iteration; threads busy ${
        (100 * row.utilization).toFixed(1)
      } % of the rounds; tasks ${row.taskInflation.toFixed(3)}x their one-thread time; ` +
        `wake-up ${(1000 * row.wakeMsPerRound).toFixed(0)} us a worker a round (max ${
          (1000 * row.maxWakeMs).toFixed(0)
        } us), idle at a round's end ${(1000 * row.tailMsPerRound).toFixed(0)} us a thread`,
    );
  }
  out.measured = measured;
  if (json) Deno.writeTextFileSync(json, JSON.stringify(out) + "\n");
});
