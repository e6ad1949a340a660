// The schedule model of the threaded Wasm walk (src/poker/wasm/walk_profile.ts): one iteration and
// one exploitability check of T1 or F1 timed on this thread alone (serial phases and every task),
// then the predicted time and speed-up of the pool's schedule on 1, 2, 4, 8, 16 threads (Amdahl and
// load balance only). Not a deno.json task:
//   deno run -A --v8-flags=--no-liftoff tasks/walk_schedule.ts [F1|T1] [--formats 32/32]
//     [--warmup N] [--threads 1,2,4,8,16] [--round-ms 0] [--json FILE]
import { runMain } from "../src/cli/main.ts";
import { KibitzError } from "../src/errors.ts";
import { CfrSolver } from "../src/cfr/solver.ts";
import { parseSolveConfig, T1_SPOT } from "../src/poker/config.ts";
import { expandSpot, prepareSpot } from "../src/poker/spot.ts";
import { spotSolverOptions } from "../src/poker/gpu_solve.ts";
import { F1 } from "../src/poker/bench.ts";
import {
  profileWalk,
  roundSummary,
  scheduleBounds,
  type WalkProfile,
} from "../src/poker/wasm/walk_profile.ts";

const USAGE = "usage: deno run -A --v8-flags=--no-liftoff tasks/walk_schedule.ts [F1|T1] " +
  "[--formats 32/32] [--warmup N] [--threads 1,2,4,8,16] [--round-ms 0] [--json FILE]";

await runMain(() => {
  const args = [...Deno.args];
  if (args.includes("-h") || args.includes("--help")) return console.log(USAGE);
  const opt = (name: string, def: string) => {
    const i = args.indexOf(name);
    if (i < 0) return def;
    if (i + 1 >= args.length) throw new KibitzError("bad_args", `${name} needs a value`);
    return args.splice(i, 2)[1];
  };
  const formats = opt("--formats", "32/32"), json = opt("--json", "");
  const warmup = Number(opt("--warmup", "2")), roundMs = Number(opt("--round-ms", "0"));
  const threads = opt("--threads", "1,2,4,8,16").split(",").map(Number);
  const name = args[0] ?? "F1";
  if (name !== "T1" && name !== "F1") {
    throw new KibitzError("bad_args", `the spot must be T1 or F1, got ${name}`);
  }
  const m = /^(\d+)\/(\d+)$/.exec(formats);
  if (!m) throw new KibitzError("bad_args", `--formats must be R/S (e.g. 32/32), got ${formats}`);
  if (!(warmup >= 0) || !threads.every((t) => Number.isInteger(t) && t >= 1)) {
    throw new KibitzError("bad_args", "--warmup must be >= 0 and --threads positive integers");
  }
  const text = (name === "F1" ? F1 : T1_SPOT) +
    `\n[solver]\nthreads = 2\nregret_bits = ${m[1]}\nstrategy_bits = ${m[2]}\n`;
  const spot = prepareSpot(parseSolveConfig(text));
  const solver = new CfrSolver(expandSpot(spot), spot.game, spotSolverOptions(spot));
  const tasks = solver.taskTrainer?.tasks;
  if (!tasks) throw new KibitzError("bad_option", `${name} does not run on the threaded Wasm walk`);
  console.log(`${name} ${formats}: ${tasks.count} tasks; ${warmup} warm-up iterations`);
  const { train, check } = profileWalk(solver, warmup + 1, true);
  const show = (what: string, p: WalkProfile) => {
    console.log(`${what}: ${p.wallMs.toFixed(1)} ms on this thread`);
    for (const line of roundSummary(p)) console.log(`  ${line}`);
    console.log("  threads | serial ms | tasks ms | total ms | speed-up | balance");
    const bounds = scheduleBounds(p, threads, roundMs);
    for (const b of bounds) {
      console.log(
        `  ${String(b.threads).padStart(7)} | ${b.serialMs.toFixed(1).padStart(9)} | ${
          b.tasksMs.toFixed(1).padStart(8)
        } | ${b.totalMs.toFixed(1).padStart(8)} | ${b.speedup.toFixed(2).padStart(8)} | ${
          b.balance.toFixed(3)
        }`,
      );
    }
    return { wallMs: p.wallMs, rounds: p.rounds, bounds };
  };
  const out = {
    spot: name,
    formats,
    tasks: tasks.count,
    train: show("iteration", train),
  } as Record<string, unknown>;
  if (check) out.check = show("exploitability check", check);
  if (json) Deno.writeTextFileSync(json, JSON.stringify(out) + "\n");
});
