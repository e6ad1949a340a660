// Solves one spot off the page's thread and reports progress every 10 iterations.
import {
  CfrSolver,
  expandSpot,
  KibitzError,
  parseSolveConfig,
  prepareSpot,
  rootSummary,
} from "./kibitz.js";

onmessage = async (e) => {
  const { config, iterations, target } = e.data;
  const t0 = performance.now();
  let solver = null;
  try {
    const cfg = parseSolveConfig(config, "the spot");
    const spot = prepareSpot(cfg), tree = expandSpot(spot);
    solver = new CfrSolver(tree, spot.game, {
      algorithm: cfg.solver.algorithm,
      regretBits: cfg.solver.regretBits,
      strategyBits: cfg.solver.strategyBits,
      seed: cfg.solver.seed,
      threads: cfg.solver.threads,
    });
    await solver.startThreads();
    let percent = Infinity;
    while (solver.iteration < iterations && percent > target) {
      solver.run(Math.min(10, iterations - solver.iteration));
      percent = solver.exploitability().percent;
      postMessage({
        type: "progress",
        iteration: solver.iteration,
        percent,
        threads: solver.threads,
        seconds: (performance.now() - t0) / 1000,
      });
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
