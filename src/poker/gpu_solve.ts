import { GpuCfrSolver, gpuSolveBytes, refuseUnsupported } from "../cfr/gpu/solver.ts";
import type { CfrExploitability } from "../cfr/evaluate.ts";
import type { CfrSolver, SolverOptions } from "../cfr/solver.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { formatBytes } from "./memory.ts";
import { regretFormat, strategyFormat } from "../quant/format.ts";
import { regretsNonNegative } from "../cfr/schedule.ts";
import {
  type BackendChoice,
  expandSpot,
  type PreparedSpot,
  type RunOptions,
  type SolveOutcome,
} from "./spot.ts";

export type { BackendChoice };

/** The solver options a postflop spot's config asks for. */
export function spotSolverOptions(spot: PreparedSpot): SolverOptions {
  const s = spot.config.solver;
  return {
    algorithm: s.algorithm,
    regretBits: s.regretBits,
    strategyBits: s.strategyBits,
    regretFormat: s.regretFormat ?? undefined,
    seed: s.seed,
    pruning: s.enablePruning ? 1 : 0,
    threads: s.threads,
  };
}

/**
 * Resolves `solver.backend`: "cpu" is the CPU engine; "gpu" needs a WebGPU adapter, options the GPU
 * backend implements and a spot that fits the adapter's buffers (else a clear error); "auto" takes
 * a hardware adapter when all of that holds, else the CPU, and says why.
 */
export async function chooseBackend(spot: PreparedSpot): Promise<BackendChoice> {
  const want = spot.config.solver.backend;
  if (want === "cpu") return { backend: "cpu", reason: "solver.backend = cpu" };
  const ctx = await getGpu();
  const cpu = (why: string): BackendChoice => ({ backend: "cpu", reason: `auto: ${why}` });
  if (!ctx) {
    if (want === "gpu") {
      throw new KibitzError("no_gpu", "solver.backend = gpu: no WebGPU adapter found; use cpu");
    }
    return cpu("no WebGPU adapter, CPU engine");
  }
  const name = describeAdapter(ctx.report);
  if (want === "auto" && ctx.report.isFallback) {
    return cpu(`the only adapter is a software one (${name}), CPU engine`);
  }
  try {
    refuseUnsupported(spotSolverOptions(spot));
  } catch (e) {
    if (want === "gpu" || !isKibitzError(e)) throw e;
    return cpu(`${e.message.replace(/; use the CPU backend$/, "")}, CPU engine`);
  }
  const tree = expandSpot(spot);
  const o = spotSolverOptions(spot), signed = !regretsNonNegative(spot.config.solver.algorithm);
  const bytes = gpuSolveBytes(tree, spot.config.solver.algorithm, [
    o.regretFormat ?? regretFormat(o.regretBits ?? 32, signed),
    strategyFormat(o.strategyBits ?? 32),
  ]);
  const hm = Math.max(tree.numHands[0], tree.numHands[1]);
  const vec = tree.size * hm * 4;
  const lim = ctx.device.limits;
  const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
  if (vec > cap) {
    const msg = `the GPU solve needs ${formatBytes(bytes)} on the device (${
      formatBytes(vec)
    } per node-vector buffer) but ${name} binds at most ${formatBytes(cap)} per buffer`;
    if (want === "gpu") throw new KibitzError("gpu_too_large", `${msg}; use cpu or a smaller spot`);
    return cpu(`${msg}, CPU engine`);
  }
  return {
    backend: "gpu",
    reason: `${want === "auto" ? "auto: " : ""}GPU on ${name}, about ${
      formatBytes(bytes)
    } of device memory`,
    ctx,
    deviceBytes: bytes,
  };
}

/**
 * Runs a solve on the GPU: `solver` (the CPU engine over the same tree, f32 stores, already warm
 * started when asked) seeds the device stores and receives the result once at the end, so every
 * result path (result.json, solve.bin, --node, grids) reads the same data as after a CPU solve.
 */
export async function runGpuSolve(
  spot: PreparedSpot,
  solver: CfrSolver,
  ctx: GpuContext,
  opts: RunOptions,
): Promise<SolveOutcome> {
  const s = spot.config.solver;
  // The CPU solver's discount: a warm start may have set where the schedule's resets begin.
  const gpu = await GpuCfrSolver.create(ctx, solver.tree, spot.game, {
    ...spotSolverOptions(spot),
    discount: solver.options.discount,
  });
  try {
    await gpu.copyFrom(solver);
    const every = opts.every ?? 10;
    const start = performance.now();
    const first = gpu.iteration;
    const reached: Record<string, number> = {};
    const milestones = [...(opts.milestones ?? []), s.targetExploitabilityPct];
    let ex: CfrExploitability = await gpu.exploitability();
    let stoppedBy: SolveOutcome["stoppedBy"] = "max_iterations";
    while (gpu.iteration < s.maxIterations) {
      gpu.run(Math.min(every, s.maxIterations - gpu.iteration));
      ex = await gpu.exploitability();
      const seconds = (performance.now() - start) / 1000;
      for (const m of milestones) {
        if (ex.percent <= m && reached[String(m)] === undefined) reached[String(m)] = gpu.iteration;
      }
      opts.onProgress?.({
        iteration: gpu.iteration,
        exploitabilityPct: ex.percent,
        exploitabilityChips: ex.chips,
        seconds,
        iterationsPerSecond: (gpu.iteration - first) / seconds,
        memoryBytes: gpu.deviceBytes,
        rssBytes: Deno.memoryUsage().rss,
      });
      if (ex.percent <= s.targetExploitabilityPct) {
        stoppedBy = "target";
        break;
      }
      if (opts.shouldStop?.()) {
        stoppedBy = "interrupted";
        break;
      }
    }
    await gpu.copyTo(solver);
    return {
      solver,
      iterations: gpu.iteration,
      exploitability: ex,
      seconds: (performance.now() - start) / 1000,
      stoppedBy,
      reached,
    };
  } finally {
    gpu.destroy();
  }
}
