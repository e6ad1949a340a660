import {
  GpuCfrSolver,
  type GpuSolveOptions,
  planGpuSolve,
  refuseUnsupported,
} from "../cfr/gpu/solver.ts";
import type { CfrExploitability } from "../cfr/evaluate.ts";
import type { CfrSolver, SolverOptions } from "../cfr/solver.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import {
  describeAdapter,
  deviceFailure,
  getGpu,
  type GpuContext,
  LOST_DEVICE_RETRIES,
  lostDeviceSummary,
} from "../gpu/device.ts";
import { formatBytes } from "./memory.ts";
import { hardwareGpuAbsent } from "../gpu/hardware_nodes.ts";
import { regretFormat, strategyFormat } from "../quant/format.ts";
import { regretsNonNegative } from "../cfr/schedule.ts";
import { nextGridPoint } from "../cfr/check_schedule.ts";
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

/** The GPU memory plan a spot's config asks for (`solver.gpu_memory_mb`; 0: the default plan). */
export function spotGpuOptions(spot: PreparedSpot): GpuSolveOptions {
  const mb = spot.config.solver.gpuMemoryMb;
  return mb > 0 ? { memoryBudget: mb * 1e6 } : {};
}

/**
 * Resolves `solver.backend`: "cpu" is the CPU engine; "gpu" needs a WebGPU adapter, options the GPU
 * backend implements and a spot that fits the adapter's buffers (else a clear error); "auto" takes
 * a hardware adapter when all of that holds, else the CPU, and says why.
 */
export async function chooseBackend(spot: PreparedSpot): Promise<BackendChoice> {
  const want = spot.config.solver.backend;
  if (want === "cpu") return { backend: "cpu", reason: "solver.backend = cpu" };
  const cpu = (why: string): BackendChoice => ({ backend: "cpu", reason: `auto: ${why}` });
  const absent = want === "auto" ? hardwareGpuAbsent() : null;
  // The graphics driver is not loaded only to find the software adapter auto never takes.
  if (absent) return cpu(`${absent} (the WebGPU driver is not loaded), CPU engine`);
  const ctx = await getGpu();
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
  const planned = planGpuSolve(tree, spot.config.solver.algorithm, [
    o.regretFormat ?? regretFormat(o.regretBits ?? 32, signed),
    strategyFormat(o.strategyBits ?? 32),
  ], spotGpuOptions(spot));
  const bytes = planned.bytes;
  const budget = spotGpuOptions(spot).memoryBudget;
  if (budget !== undefined && bytes > budget) {
    const msg = `the GPU solve needs ${formatBytes(bytes)} on the device at its finest chunking, ` +
      `over solver.gpu_memory_mb = ${spot.config.solver.gpuMemoryMb}`;
    if (want === "gpu") throw new KibitzError("gpu_too_large", `${msg}; raise it or use cpu`);
    return cpu(`${msg}, CPU engine`);
  }
  // The largest single buffer (each part of the plan is one buffer) against the binding limit.
  const [part, biggest] = Object.entries(planned.parts).reduce((a, b) => b[1] > a[1] ? b : a);
  const lim = ctx.device.limits;
  const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
  if (biggest > cap) {
    const msg = `the GPU solve needs ${formatBytes(bytes)} on the device (${
      formatBytes(biggest)
    } for its ${part}) but ${name} binds at most ${formatBytes(cap)} per buffer`;
    if (want === "gpu") throw new KibitzError("gpu_too_large", `${msg}; use cpu or a smaller spot`);
    return cpu(`${msg}, CPU engine`);
  }
  return {
    backend: "gpu",
    reason: `${want === "auto" ? "auto: " : ""}GPU on ${name}, about ${
      formatBytes(bytes)
    } of device memory${
      planned.plan.segments.length > 1
        ? ` (the lower tree in ${planned.plan.segments.length - 1} chunks)`
        : ""
    }`,
    ctx,
    deviceBytes: bytes,
  };
}

/** What a GPU solve keeps across the devices it runs on (one, unless a device is lost). */
interface GpuRun {
  start: number;
  carried: number;
  /** The solver's iteration at the start, and the grid of checks' origin. */
  first: number;
  gridFrom: number;
  reached: Record<string, number>;
}

/**
 * Runs a solve on the GPU: `solver` (the CPU engine over the same tree and storage formats, already
 * warm started when asked) seeds the device stores and its iteration counter (a warm start continues
 * at t = W) and receives the result once at the end, so every result path (result.json, solve.bin,
 * --node, grids) reads the same data as after a CPU solve. A lost device (a driver reset) is
 * replaced, up to LOST_DEVICE_RETRIES times: the solve continues on the new one from the state
 * `solver` holds, its last checkpoint's (RunOptions.checkpoint) or else its start, so it still ends
 * as an uninterrupted solve.
 */
export async function runGpuSolve(
  spot: PreparedSpot,
  solver: CfrSolver,
  ctx: GpuContext,
  opts: RunOptions,
): Promise<SolveOutcome> {
  const run: GpuRun = {
    start: performance.now(),
    carried: opts.carry?.seconds ?? 0,
    first: solver.iteration,
    gridFrom: opts.carry?.gridFrom ?? solver.iteration,
    reached: { ...opts.carry?.reached },
  };
  for (let losses = 0;; losses++) {
    try {
      return await gpuAttempt(spot, solver, ctx, opts, run);
    } catch (e) {
      if (!isKibitzError(e, "gpu_lost") || losses >= LOST_DEVICE_RETRIES) throw e;
      const next = await getGpu();
      if (!next || next === ctx || next.lost) throw e;
      (opts.onWarning ?? console.error)(
        `warning: ${
          lostDeviceSummary(e)
        }; the solve continues on a new device from iteration ${solver.iteration} (${
          solver.iteration === run.first ? "its start" : "its last checkpoint"
        }; loss ${losses + 1} of at most ${LOST_DEVICE_RETRIES})`,
      );
      ctx = next;
    }
  }
}

/** One device's part of runGpuSolve: from `solver`'s state to the end, or to a failure. */
async function gpuAttempt(
  spot: PreparedSpot,
  solver: CfrSolver,
  ctx: GpuContext,
  opts: RunOptions,
  run: GpuRun,
): Promise<SolveOutcome> {
  const s = spot.config.solver;
  // The CPU solver's discount as it stands: a warm start may have set where the resets begin.
  const gpu = await GpuCfrSolver.create(ctx, solver.tree, spot.game, {
    ...spotSolverOptions(spot),
    discount: { ...solver.discount },
  }, spotGpuOptions(spot));
  try {
    await gpu.copyFrom(solver);
    const every = Math.max(1, Math.floor(opts.every ?? 10));
    const { start, carried, first, gridFrom, reached } = run;
    const milestones = [...(opts.milestones ?? []), s.targetExploitabilityPct];
    let ex: CfrExploitability | null = null;
    let stoppedBy: SolveOutcome["stoppedBy"] = "max_iterations";
    // Checks are pipelined: each is submitted behind its iterations and read back while the next
    // ones run, so the ~10 ms readback is off the critical path. The solve stops once a check
    // reports the target; the check queued last (of the final iteration, the returned strategy)
    // is then awaited, so the exploitability reported is the returned strategy's.
    const pending: { it: number; p: Promise<CfrExploitability> }[] = [];
    let done = false;
    const settle = async () => {
      const c = pending.shift()!;
      const e = await c.p;
      if (c.it === gpu.iteration) ex = e;
      const own = (performance.now() - start) / 1000, seconds = carried + own;
      for (const m of milestones) {
        if (e.percent <= m && reached[String(m)] === undefined) reached[String(m)] = c.it;
      }
      opts.onProgress?.({
        iteration: c.it,
        exploitabilityPct: e.percent,
        exploitabilityChips: e.chips,
        seconds,
        iterationsPerSecond: (c.it - first) / Math.max(own, 1e-9),
        memoryBytes: gpu.deviceBytes,
        rssBytes: Deno.memoryUsage().rss,
      });
      if (e.percent <= s.targetExploitabilityPct) stoppedBy = "target", done = true;
      else if (opts.shouldStop?.()) stoppedBy = "interrupted", done = true;
    };
    while (!done && gpu.iteration < s.maxIterations) {
      // Chunks end on the grid of checks, which counts from the solve's first iteration.
      gpu.run(
        Math.min(nextGridPoint(gpu.iteration, gridFrom, every), s.maxIterations) - gpu.iteration,
      );
      const p = gpu.exploitability();
      // Awaited in turn by settle; a failure of one queued behind a failing check is not unhandled.
      p.catch(() => {});
      pending.push({ it: gpu.iteration, p });
      if (pending.length >= 2) await settle();
      if (!done && gpu.iteration < s.maxIterations && opts.checkpoint?.due()) {
        // The stores as of the iterations submitted so far (the queue keeps the order).
        await gpu.copyTo(solver);
        await opts.checkpoint.write(solver, {
          seconds: carried + (performance.now() - start) / 1000,
          reached,
          gridFrom,
        });
      }
    }
    while (pending.length > 0) await settle();
    ex ??= await gpu.exploitability();
    await gpu.copyTo(solver);
    const seconds = carried + (performance.now() - start) / 1000;
    if (opts.checkpoint?.atEnd(stoppedBy)) {
      await opts.checkpoint.write(solver, { seconds, reached, gridFrom });
    }
    return {
      solver,
      backend: "gpu",
      iterations: gpu.iteration,
      exploitability: ex as CfrExploitability,
      seconds,
      stoppedBy,
      reached,
    };
  } catch (e) {
    throw await deviceFailure(ctx, "GPU solve", e);
  } finally {
    gpu.destroy();
  }
}
