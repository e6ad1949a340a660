import assert from "node:assert/strict";
import type { CfrSolver } from "../../src/cfr/solver.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { type BackendChoice, prepareSpot, runSolve } from "../../src/poker/solve.ts";
import { runWarmStartSolve, warmStartRunner } from "../../src/poker/warmstart_solve.ts";
import { decodeAll } from "../../src/quant/mod.ts";
import { riverSpot } from "../helpers/spots.ts";

// Warm start with the GPU backend (`use_warmstart = true`, `backend = "gpu"`): the small solve, the
// CPU-side seeding and the full tree's solve on the device, which continues at t = W from the
// seeded stores. The oracle is the CPU warm start of the same config: both phases on the CPU. A few
// iterations after the seeding the two agree entry by entry within f32 summation order, while a
// cold start (what the GPU would run if it ignored the seeded stores or the start iteration) is
// thousands of chips away; run to 0.1 % they reach the same root EVs.

const ctx = await getGpu();
const hasAdapter = ctx !== null;
const CPU: BackendChoice = { backend: "cpu", reason: "test" };
const GPU: BackendChoice = { backend: "gpu", reason: "test", ctx: ctx ?? undefined };
// Iterations after which the GPU's stores still equal the CPU's entry by entry from the same state
// (tests/cfr/gpu_solver_test.ts: a hardware GPU rounds divisions differently, so a tie that is
// exactly 0 on one backend can switch regret matching on the other from the second iteration on).
const TIE_FREE_ITERATIONS = ctx?.report.isFallback === false ? 1 : 2;

// A river spot with four sizes and two raises; the small tree is the default one (66 %, all-in
// raise), solved 30 iterations.
const RIVER = `${riverSpot("33%, 66%, 100%, a", "2.5x, a")}[solver]
threads = 1
use_warmstart = true
warmstart_minimal_max_iters = 30
warmstart_minimal_exploitability_pct = 0
`;

function config(method: string, storage: string, own: number, target = 0) {
  const bits = storage === "f32" ? "" : "regret_bits = 8\nstrategy_bits = 8\n";
  return parseSolveConfig(
    RIVER + bits + `warmstart_method = "${method}"\nmax_iterations = ${own}\n` +
      `target_exploitability_pct = ${target}\n`,
  );
}

/** Largest |a - b| over the decoded store, and the store's largest magnitude. */
function storeGap(a: CfrSolver, b: CfrSolver, name: "regrets" | "strategy"): [number, number] {
  const x = decodeAll(a[name]), y = decodeAll(b[name]);
  assert.equal(x.length, y.length);
  let gap = 0, big = 0;
  for (let i = 0; i < x.length; i++) {
    gap = Math.max(gap, Math.abs(x[i] - y[i]));
    big = Math.max(big, Math.abs(x[i]));
  }
  return [gap, big];
}

/** The CPU warm start of `cfg` (both phases on the CPU, checked only at the end). */
function cpuWarmStart(cfg: ReturnType<typeof config>, own: number) {
  return runWarmStartSolve(prepareSpot(cfg), cfg.solver.warmStart!, {
    small: { backend: CPU },
    large: { backend: CPU, every: own },
  });
}

/** A cold solve of `iterations` iterations: what a GPU phase that ignored the seeding would give. */
function coldSolve(method: string, storage: string, iterations: number) {
  return runSolve(prepareSpot(config(method, storage, iterations)), {
    backend: CPU,
    every: iterations,
  });
}

Deno.test({
  name:
    "gpu warm start: the full tree's GPU solve continues from the seeded stores at t = W (values and regrets, f32 and 8/8-bit): CPU parity entry by entry",
  ignore: !hasAdapter,
  async fn() {
    for (const storage of ["f32", "8"]) {
      for (const method of ["values", "regrets"]) {
        const cfg = config(method, storage, TIE_FREE_ITERATIONS);
        const cpu = await cpuWarmStart(cfg, TIE_FREE_ITERATIONS);
        // The same small solve and seeding (on the CPU, deterministic), the full tree on the GPU.
        const gpu = await runWarmStartSolve(prepareSpot(cfg), cfg.solver.warmStart!, {
          small: { backend: CPU },
          large: { backend: GPU, every: TIE_FREE_ITERATIONS },
        });
        const tag = `${storage} ${method}`;
        // W = 30 for regrets (its "auto"); values' automatic W is 1 on this spot.
        const start = cpu.transfer.startIteration;
        assert.equal(start, method === "regrets" ? 30 : 1, tag);
        assert.equal(gpu.transfer.startIteration, start, tag);
        const end = start + TIE_FREE_ITERATIONS;
        assert.equal(gpu.outcome.iterations, end, tag);
        assert.equal(cpu.outcome.iterations, end, tag);
        const cold = await coldSolve(method, storage, end);
        for (const name of ["regrets", "strategy"] as const) {
          const [gap, big] = storeGap(cpu.outcome.solver, gpu.outcome.solver, name);
          const [coldGap] = storeGap(cpu.outcome.solver, cold.solver, name);
          // f32 summation order (measured on llvmpipe: 2e-7 of the largest entry), and one level
          // of an 8-bit store where rounding of nearly equal inputs lands on neighbouring levels.
          const tol = 1e-5 * Math.max(1, big) + (storage === "f32" ? 0 : big / 127);
          assert.ok(gap <= tol, `${tag} ${name}: gpu vs cpu warm start ${gap} > ${tol}`);
          assert.ok(coldGap > 10 * tol, `${tag} ${name}: cold is only ${coldGap} away`);
        }
        const d = Math.abs(gpu.outcome.exploitability.percent - cpu.outcome.exploitability.percent);
        assert.ok(d < 1e-3, `${tag}: ${gpu.outcome.exploitability.percent} % on the GPU`);
      }
    }
  },
});

Deno.test({
  name:
    "gpu warm start: `deno task solve --backend gpu` runs the small solve and the full tree on the GPU, from t = W",
  ignore: !hasAdapter,
  async fn() {
    for (const method of ["values", "regrets"]) {
      const cfg = config(method, "f32", 1);
      const cpu = await cpuWarmStart(cfg, 1);
      // The task's path: one backend choice for both phases (warmStartRunner passes it to each).
      const lines: string[] = [];
      const gpu = await warmStartRunner(prepareSpot(cfg), (l) => lines.push(l))({
        backend: GPU,
        every: 1,
      });
      const start = cpu.transfer.startIteration;
      assert.ok(lines.some((l) => /^phase 1 done: 30 iterations.* on the gpu$/.test(l)), method);
      assert.ok(lines.some((l) => l.includes(`continuing at iteration ${start}`)), method);
      assert.equal(gpu.backend, "gpu");
      assert.equal(gpu.iterations, start + 1, method);
      const cold = await coldSolve(method, "f32", start + 1);
      for (const name of ["regrets", "strategy"] as const) {
        // The small solve's 30 GPU iterations sum in another order than the CPU's (a hardware GPU
        // rounds differently too), so the seeded state differs slightly; a cold start differs by
        // a large part of the store's range.
        const [gap, big] = storeGap(cpu.outcome.solver, gpu.solver, name);
        const [coldGap] = storeGap(cpu.outcome.solver, cold.solver, name);
        assert.ok(gap <= 0.01 * big, `${method} ${name}: gpu vs cpu warm start ${gap} of ${big}`);
        assert.ok(coldGap > 0.2 * big, `${method} ${name}: cold is only ${coldGap} away`);
      }
    }
  },
});

Deno.test({
  name:
    "gpu warm start: run to 0.1 % on the GPU it reaches the CPU warm start's equilibrium (root EVs within 0.1 chip)",
  ignore: !hasAdapter,
  async fn() {
    const cfg = config("auto", "f32", 300, 0.1);
    const run = (b: BackendChoice) =>
      runWarmStartSolve(prepareSpot(cfg), cfg.solver.warmStart!, {
        small: { backend: b },
        large: { backend: b },
      });
    const cpu = await run(CPU), gpu = await run(GPU);
    assert.equal(gpu.transfer.method, "regrets"); // "auto": 90 % of the decision nodes paired
    assert.ok(
      gpu.outcome.exploitability.percent <= 0.1 && cpu.outcome.exploitability.percent <= 0.1,
    );
    for (const p of [0, 1]) {
      const a = gpu.outcome.exploitability.ev[p], b = cpu.outcome.exploitability.ev[p];
      assert.ok(Math.abs(a - b) < 0.1, `player ${p}: gpu ${a} cpu ${b}`);
    }
  },
});
