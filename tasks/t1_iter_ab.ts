// T1 (or F1) iteration time of two checkouts in one process, interleaved iteration by iteration
// (their own module graphs, so each runs its own Wasm kernels): medians and the median
// per-iteration ratio B / A, and whether both stores end bit-identical. Not a deno.json task:
//   deno run -A --v8-flags=--no-liftoff tasks/t1_iter_ab.ts DIR_A DIR_B [ITERATIONS=100] [T1|F1] [32|16]
// (F1: 1.2 GB of stores per checkout, 2 warm-up iterations instead of 5; 16: 16-bit regrets and
// strategy instead of f32.)
import { cpuUsage } from "node:process";
import { runMain } from "../src/cli/main.ts";
import { KibitzError } from "../src/errors.ts";

interface Solver {
  run(n: number): void;
  trainer: unknown;
  regrets: { f32: Float32Array | null; words: Uint32Array };
}

/** A T1 (or F1) solver (DCFR, `bits` regrets and strategy, one thread) from the checkout at `dir`. */
async function spotSolver(dir: string, name: string, bits: string): Promise<Solver> {
  const at = (p: string) => new URL(p, `file://${Deno.realPathSync(dir)}/`).href;
  const { CfrSolver } = await import(at("src/cfr/solver.ts"));
  const { parseSolveConfig, T1_SPOT } = await import(at("src/poker/config.ts"));
  const { expandSpot, prepareSpot } = await import(at("src/poker/spot.ts"));
  const { spotSolverOptions } = await import(at("src/poker/gpu_solve.ts"));
  const text = name === "F1" ? (await import(at("src/poker/bench.ts"))).F1 : T1_SPOT;
  const q = bits === "16" ? "regret_bits = 16\nstrategy_bits = 16\n" : "";
  const spot = prepareSpot(parseSolveConfig(text + "\n[solver]\nthreads = 1\n" + q));
  const s = new CfrSolver(expandSpot(spot), spot.game, { ...spotSolverOptions(spot), threads: 1 });
  if (!s.trainer) {
    throw new KibitzError("bad_args", `${dir}: ${name} does not run on the Wasm walk`);
  }
  return s;
}

await runMain(async () => {
  const [a, b, its, name = "T1", bits = "32"] = Deno.args;
  if (!a || !b || a === "-h" || a === "--help") {
    console.log(
      "usage: deno run -A --v8-flags=--no-liftoff tasks/t1_iter_ab.ts DIR_A DIR_B [ITERATIONS=100] " +
        "[T1|F1] [32|16]",
    );
    return;
  }
  const n = Number(its ?? 100);
  if (!Number.isInteger(n) || n < 1) {
    throw new KibitzError("bad_args", `ITERATIONS must be a positive integer, got ${its}`);
  }
  if (name !== "T1" && name !== "F1") {
    throw new KibitzError("bad_args", `the spot must be T1 or F1, got ${name}`);
  }
  if (bits !== "32" && bits !== "16") {
    throw new KibitzError("bad_args", `the storage bits must be 32 or 16, got ${bits}`);
  }
  const solvers = [await spotSolver(a, name, bits), await spotSolver(b, name, bits)];
  for (const s of solvers) s.run(name === "F1" ? 2 : 5); // warm-up (lazy compilation, first pages)
  // Wall and process CPU time (user + system: the walk is this thread's; on a loaded machine the
  // CPU time moves less with the other processes' share of the cores).
  const t: number[][] = [[], []], c: number[][] = [[], []];
  const cpu = () => {
    const u = cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (let i = 0; i < n; i++) {
    for (const k of i & 1 ? [1, 0] : [0, 1]) {
      const t0 = performance.now(), c0 = cpu();
      solvers[k].run(1);
      t[k].push(performance.now() - t0), c[k].push(cpu() - c0);
    }
  }
  const q = (x: number[], f: number) => [...x].sort((u, v) => u - v)[Math.floor(x.length * f)];
  const ratios = t[0].map((x, i) => t[1][i] / x);
  const cpuRatios = c[0].map((x, i) => c[1][i] / x);
  const [ra, rb] = solvers.map((s) => s.regrets.f32 ?? s.regrets.words);
  const same = ra.length === rb.length && ra.every((x, i) => Object.is(x, rb[i]));
  console.log(JSON.stringify({
    msA: q(t[0], 0.5).toFixed(2),
    msB: q(t[1], 0.5).toFixed(2),
    ratioBA: q(ratios, 0.5).toFixed(3),
    ratioP25: q(ratios, 0.25).toFixed(3),
    ratioP75: q(ratios, 0.75).toFixed(3),
    cpuMsA: q(c[0], 0.5).toFixed(2),
    cpuMsB: q(c[1], 0.5).toFixed(2),
    cpuRatioBA: q(cpuRatios, 0.5).toFixed(3),
    cpuRatioP25: q(cpuRatios, 0.25).toFixed(3),
    cpuRatioP75: q(cpuRatios, 0.75).toFixed(3),
    bitIdenticalRegrets: same,
    load: Deno.readTextFileSync("/proc/loadavg").split(" ")[0],
  }));
});
