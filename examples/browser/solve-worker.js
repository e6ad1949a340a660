// Solves one spot off the page's thread and reports progress every 10 iterations.
import {
  CfrSolver,
  expandSpot,
  getGpu,
  GpuCfrSolver,
  KibitzError,
  parseSolveConfig,
  prepareSpot,
  rootSummary,
} from "./kibitz.js";

onmessage = async (e) => {
  const { config, iterations, target, backend } = e.data;
  const t0 = performance.now();
  let solver = null;
  try {
    const cfg = parseSolveConfig(config, "the spot");
    const spot = prepareSpot(cfg), tree = expandSpot(spot);
    // solver.backend: "gpu" solves on WebGPU, "auto" does when the browser offers a hardware
    // adapter; the CPU solver then receives the GPU's stores for the results.
    const want = backend ?? cfg.solver.backend;
    const ctx = want === "cpu" ? null : await getGpu();
    if (want === "gpu" && !ctx) throw new KibitzError("no_gpu", "backend = gpu: no WebGPU here");
    const onGpu = ctx !== null && (want === "gpu" || !ctx.report.isFallback);
    const options = {
      algorithm: cfg.solver.algorithm,
      regretBits: cfg.solver.regretBits,
      strategyBits: cfg.solver.strategyBits,
      seed: cfg.solver.seed,
      threads: onGpu ? 1 : cfg.solver.threads,
    };
    solver = new CfrSolver(tree, spot.game, options);
    const gpu = onGpu ? await GpuCfrSolver.create(ctx, tree, spot.game, options) : null;
    if (!gpu) await solver.startThreads();
    let percent = Infinity;
    try {
      while ((gpu ?? solver).iteration < iterations && percent > target) {
        const n = Math.min(10, iterations - (gpu ?? solver).iteration);
        if (gpu) {
          gpu.run(n);
          percent = (await gpu.exploitability()).percent;
        } else {
          solver.run(n);
          percent = solver.exploitability().percent;
        }
        postMessage({
          type: "progress",
          iteration: (gpu ?? solver).iteration,
          percent,
          threads: solver.threads,
          backend: gpu ? "gpu" : "cpu",
          seconds: (performance.now() - t0) / 1000,
        });
      }
      if (gpu) await gpu.copyTo(solver);
    } finally {
      gpu?.destroy();
    }
    postMessage({
      type: "done",
      iteration: solver.iteration,
      percent,
      seconds: (performance.now() - t0) / 1000,
      summary: rootSummary(tree, spot.game, solver.averagePolicy()),
    });
  } catch (err) {
    const message = err instanceof KibitzError
      ? `error: ${err.message}`
      : String(err?.stack ?? err);
    postMessage({ type: "error", message });
  } finally {
    solver?.close();
  }
};
