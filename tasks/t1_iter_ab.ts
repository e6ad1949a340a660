// T1 iteration time of two checkouts in one process, interleaved iteration by iteration (their
// own module graphs, so each runs its own Wasm kernels): medians and the median per-iteration
// ratio B / A, and whether both stores end bit-identical. Not a deno.json task: run it as
//   deno run -A --v8-flags=--no-liftoff tasks/t1_iter_ab.ts DIR_A DIR_B [ITERATIONS=100]
import { runMain } from "../src/cli/main.ts";
import { KibitzError } from "../src/errors.ts";

interface Solver {
  run(n: number): void;
  trainer: unknown;
  regrets: { f32: Float32Array | null };
}

/** A T1 solver (f32 DCFR, one thread) built from the checkout at `dir`. */
async function t1Solver(dir: string): Promise<Solver> {
  const at = (p: string) => new URL(p, `file://${Deno.realPathSync(dir)}/`).href;
  const { CfrSolver } = await import(at("src/cfr/solver.ts"));
  const { parseSolveConfig, T1_SPOT } = await import(at("src/poker/config.ts"));
  const { expandSpot, prepareSpot } = await import(at("src/poker/spot.ts"));
  const { spotSolverOptions } = await import(at("src/poker/gpu_solve.ts"));
  const spot = prepareSpot(parseSolveConfig(T1_SPOT + "\n[solver]\nthreads = 1\n"));
  const s = new CfrSolver(expandSpot(spot), spot.game, { ...spotSolverOptions(spot), threads: 1 });
  if (!s.trainer) throw new KibitzError("bad_args", `${dir}: T1 does not run on the Wasm walk`);
  return s;
}

await runMain(async () => {
  const [a, b, its] = Deno.args;
  if (!a || !b || a === "-h" || a === "--help") {
    console.log(
      "usage: deno run -A --v8-flags=--no-liftoff tasks/t1_iter_ab.ts DIR_A DIR_B [ITERATIONS=100]",
    );
    return;
  }
  const n = Number(its ?? 100);
  if (!Number.isInteger(n) || n < 1) {
    throw new KibitzError("bad_args", `ITERATIONS must be a positive integer, got ${its}`);
  }
  const solvers = [await t1Solver(a), await t1Solver(b)];
  for (const s of solvers) s.run(5); // warm-up (lazy compilation, first pages)
  const t: number[][] = [[], []];
  for (let i = 0; i < n; i++) {
    for (const k of i & 1 ? [1, 0] : [0, 1]) {
      const t0 = performance.now();
      solvers[k].run(1);
      t[k].push(performance.now() - t0);
    }
  }
  const q = (x: number[], f: number) => [...x].sort((u, v) => u - v)[Math.floor(x.length * f)];
  const ratios = t[0].map((x, i) => t[1][i] / x);
  const [ra, rb] = solvers.map((s) => s.regrets.f32!);
  const same = ra.length === rb.length && ra.every((x, i) => Object.is(x, rb[i]));
  console.log(JSON.stringify({
    msA: q(t[0], 0.5).toFixed(2),
    msB: q(t[1], 0.5).toFixed(2),
    ratioBA: q(ratios, 0.5).toFixed(3),
    ratioP25: q(ratios, 0.25).toFixed(3),
    ratioP75: q(ratios, 0.75).toFixed(3),
    bitIdenticalRegrets: same,
    load: Deno.readTextFileSync("/proc/loadavg").split(" ")[0],
  }));
});
