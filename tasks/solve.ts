import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { Progress } from "../src/cli/progress.ts";
import { EXAMPLE_CONFIG, parseSolveConfig } from "../src/poker/config.ts";
import { describeEstimate, formatBytes, parseMemorySize } from "../src/poker/memory.ts";
import type { CfrPolicy } from "../src/cfr/evaluate.ts";
import type { PublicTree } from "../src/cfr/tree.ts";
import type { PostflopGame } from "../src/poker/game.ts";
import {
  checkOutputDir,
  decodeSave,
  eachFirstStreetNode,
  findNodeAtPath,
  formatRootSummary,
  type NodeAtPath,
  nodeSummary,
  type RootSummary,
  rootSummary,
  writeSolveOutputs,
} from "../src/poker/results.ts";
import { expandSpot, prepareSpot, savedPolicy } from "../src/poker/solve.ts";
import { warmStartRunner } from "../src/poker/warmstart_solve.ts";
import {
  checkpointConfig,
  describeEarlierCheckpoint,
  openCheckpoint,
  type OpenedCheckpoint,
  refuseNothingLeft,
  removeFinishedCheckpoint,
  resumeLine,
} from "../src/poker/checkpoint.ts";
import { dirname, join, resolve } from "node:path";
import { chooseBackend } from "../src/poker/gpu_solve.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task solve [config.toml] [--json] [--max-memory SIZE] [--out DIR] | --resume FILE | --load FILE",
    "Solves a postflop Hold'em spot with CFR (no config: the built-in spot T1). Prints the tree size\n" +
      "and memory estimate, progress lines, and the root summary; writes result.json and solve.bin\n" +
      "to the output directory, and checkpoint.bin there every few minutes and on Ctrl-C.\n" +
      "--resume continues a solve from its checkpoint; --load reopens a solve.bin without re-solving.",
    {
      json: { type: "boolean", help: "print the meta and root summary as JSON on stdout" },
      "max-memory": {
        type: "string",
        help: "refuse to solve above this memory, e.g. 512MB (default: 80% of RAM)",
      },
      out: { type: "string", help: "output directory (overrides [output] directory)" },
      load: { type: "string", help: "open a saved solve.bin instead of solving" },
      resume: {
        type: "string",
        help:
          "continue the solve a checkpoint.bin (or the output folder holding it) holds (its config; results go to its folder unless --out)",
      },
      "checkpoint-minutes": {
        type: "string",
        default: "10",
        help: "write checkpoint.bin every this many minutes (0: only on Ctrl-C)",
      },
      "keep-checkpoint": {
        type: "boolean",
        help:
          "also write checkpoint.bin when the solve finishes, to continue it later with --resume and higher limits (default: a finished solve removes it)",
      },
      "max-iterations": { type: "string", help: "override solver.max_iterations" },
      target: { type: "string", help: "override solver.target_exploitability_pct" },
      every: {
        type: "string",
        default: "10",
        help: "grid of exploitability checks (progress lines): every this many iterations",
      },
      "check-every": {
        type: "boolean",
        help: "check at every grid point (default: skip those where the target is out of reach)",
      },
      backend: {
        type: "string",
        help:
          "cpu, gpu or auto (overrides solver.backend; auto: a hardware GPU when the spot fits)",
      },
      node: {
        type: "string",
        help:
          'also summarize the node at this path of actions and cards, e.g. "Check,Bet 120,Call,As"',
      },
    },
  );
  if (!args) return;
  const v = args.values;
  const json = v.json === true;
  const info = (line: string) => (json ? console.error(line) : console.log(line));
  const num = (name: string): number | undefined => {
    if (v[name] === undefined) return undefined;
    const n = Number(v[name]);
    if (!Number.isFinite(n) || n < 0) {
      throw new KibitzError(
        "bad_args",
        `--${name} must be a non-negative number, got "${v[name]}"`,
      );
    }
    return n;
  };

  const nodeArg = typeof v.node === "string" ? v.node : null;
  if (typeof v.load === "string") {
    if (typeof v.resume === "string") {
      throw new KibitzError(
        "bad_args",
        "--load reopens a finished solve and --resume continues one; give one of them",
      );
    }
    if (args.positionals.length > 0) {
      throw new KibitzError(
        "bad_args",
        `--load ${v.load} reopens a saved solve with its own config; leave out the config file (${
          args.positionals.join(" ")
        })`,
      );
    }
    const bytes = await Deno.readFile(v.load).catch((e) => {
      throw new KibitzError("bad_args", `--load ${v.load}: ${(e as Error).message}`);
    });
    const { header, strategies } = decodeSave(bytes, v.load);
    const config = parseSolveConfig(header.config, `${v.load} (saved config)`);
    const spot = prepareSpot(config);
    const tree = expandSpot(spot);
    const at = nodeArg === null ? null : findNodeAtPath(tree, spot.game, nodeArg);
    if (typeof v.out === "string") await checkOutputDir(v.out);
    const policy = savedPolicy(tree, strategies);
    const summary = rootSummary(tree, spot.game, policy);
    if (typeof v.out === "string") {
      await writeSolveOutputs(v.out, {
        result: { meta: header.meta, root: summary },
        nodes: eachFirstStreetNode(tree, spot.game, policy),
        save: { header, tree, policy },
      });
      info(`wrote ${v.out}/result.json and ${v.out}/solve.bin`);
    }
    printResult(json, header.meta, summary, at && nodeResult(tree, spot.game, policy, at));
    return;
  }

  let resume: OpenedCheckpoint | undefined;
  let path: string | undefined, text: string, config;
  if (typeof v.resume === "string") {
    if (args.positionals.length > 0) {
      throw new KibitzError(
        "bad_args",
        `--resume ${v.resume} continues a solve with its own config; leave out the config file (${
          args.positionals.join(" ")
        })`,
      );
    }
    resume = await openCheckpoint(v.resume);
    text = resume.header.config;
    config = checkpointConfig(resume);
  } else {
    path = args.positionals[0];
    if (args.positionals.length > 1) {
      throw new KibitzError(
        "bad_args",
        `one config file at most, got ${args.positionals.join(" ")}`,
      );
    }
    text = path === undefined ? EXAMPLE_CONFIG : await Deno.readTextFile(path).catch((e) => {
      throw new KibitzError("bad_args", `cannot read ${path}: ${(e as Error).message}`);
    });
    config = parseSolveConfig(text, path ?? "built-in example");
  }
  const mi = num("max-iterations"), tg = num("target"), minutes = num("checkpoint-minutes")!;
  if (mi !== undefined) config.solver.maxIterations = Math.max(1, Math.floor(mi));
  if (tg !== undefined) config.solver.targetExploitabilityPct = tg;
  if (typeof v.backend === "string") {
    if (v.backend !== "cpu" && v.backend !== "gpu" && v.backend !== "auto") {
      throw new KibitzError("bad_args", `--backend must be cpu, gpu or auto, got "${v.backend}"`);
    }
    config.solver.backend = v.backend;
  }
  if (resume) refuseNothingLeft(resume, config);
  // Without --max-memory, refuse what would not fit in 80 % of this machine's memory.
  const maxMemory = typeof v["max-memory"] === "string"
    ? parseMemorySize(v["max-memory"])
    : Math.floor(0.8 * Deno.systemMemoryInfo().total);
  const outDir = typeof v.out === "string"
    ? v.out
    : resume
    ? dirname(resume.path)
    : config.outputDirectory;

  const checkpointPath = join(outDir, "checkpoint.bin");
  if (!resume || resolve(resume.path) !== resolve(checkpointPath)) {
    const earlier = await describeEarlierCheckpoint(checkpointPath);
    if (earlier) {
      info(
        `note: ${checkpointPath} holds ${earlier}; this solve's checkpoints replace it (deno task solve --resume ${checkpointPath} continues that one instead)`,
      );
    }
  }
  const spot = prepareSpot(config, maxMemory);
  // Everything that can be checked is checked before the solve: the output folder, the --node path.
  await checkOutputDir(outDir);
  const at = nodeArg === null ? null : findNodeAtPath(expandSpot(spot), spot.game, nodeArg);
  const m = spot.memory;
  info(
    `spot: ${resume ? `resumed from ${resume.path}` : path ?? "built-in example (T1)"}, ${
      spot.game.numHands[0]
    } OOP / ${
      spot.game.numHands[1]
    } IP hands, betting tree ${spot.actionTree.size} nodes, expanded ${spot.size.publicNodes} nodes (${spot.size.decisionNodes} decisions, ${spot.size.elements} strategy elements)`,
  );
  info(`memory estimate: ${formatBytes(m.total)} peak RSS (${describeEstimate(m)})`);
  const choice = await chooseBackend(spot);
  const threads = config.solver.threads;
  info(
    choice.backend === "gpu"
      ? `backend: gpu (${choice.reason})`
      : `backend: cpu, ${threads} thread${
        threads === 1 ? "" : "s"
      } (turn/river subtrees on workers); ${choice.reason}`,
  );

  if (resume) info(resumeLine(resume, config));
  const checkpoints = {
    settings: {
      path: checkpointPath,
      config: text,
      limits: {
        maxIterations: config.solver.maxIterations,
        targetPct: config.solver.targetExploitabilityPct,
      },
      minutes,
      keep: v["keep-checkpoint"] === true,
      info,
    },
    resume,
  };
  const stop = stopOnSignal(
    "solve: stopping after this iteration, then writing the checkpoint and the results",
  );
  const progress = new Progress("solve", 0);
  let outcome;
  try {
    outcome = await warmStartRunner(spot, info, checkpoints)({
      every: Math.max(1, Math.floor(num("every") ?? 10)),
      checkEvery: v["check-every"] === true,
      backend: choice,
      shouldStop: () => stop.stopped,
      onProgress: (p) =>
        progress.update(
          `it ${p.iteration}  exploitability ${p.exploitabilityPct.toFixed(3)}% of pot (${
            p.exploitabilityChips.toFixed(3)
          } chips)  ${p.seconds.toFixed(1)} s  ${p.iterationsPerSecond.toFixed(1)} it/s  storage ${
            formatBytes(p.memoryBytes)
          } (rss ${formatBytes(p.rssBytes)})`,
          true,
        ),
    });
  } finally {
    stop.release();
  }
  progress.done(`stopped by ${outcome.stoppedBy} after ${outcome.iterations} iterations`);

  const tree = spot.tree!;
  const policy = outcome.solver.averagePolicy();
  const summary = rootSummary(tree, spot.game, policy);
  const meta = {
    config: text,
    iterations: outcome.iterations,
    exploitability_chips: outcome.exploitability.chips,
    exploitability_pct: outcome.exploitability.percent,
    seconds: outcome.seconds,
    memory_bytes: outcome.solver.storageBytes(),
    stopped_by: outcome.stoppedBy,
    algorithm: config.solver.algorithm,
    regret_format: m.regretFormat,
    strategy_format: m.strategyFormat,
  };
  // Both files stream node by node: no full copy of the strategies or of the files in memory.
  await writeSolveOutputs(outDir, {
    result: { meta, root: summary },
    nodes: eachFirstStreetNode(tree, spot.game, policy),
    save: { header: { config: text, meta }, tree, policy },
  });
  info(`wrote ${outDir}/result.json and ${outDir}/solve.bin`);
  if (outcome.stoppedBy !== "interrupted" && !checkpoints.settings.keep) {
    // A finished solve's state is in its results; a checkpoint left from before it would be stale.
    if (await removeFinishedCheckpoint(checkpointPath)) {
      info(`removed ${checkpointPath}: the solve finished (--keep-checkpoint keeps it)`);
    }
  }
  printResult(json, meta, summary, at && nodeResult(tree, spot.game, policy, at));
});

/** The summary at a --node path found before the solve; prints its notes. */
function nodeResult(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  at: NodeAtPath,
): { path: string[]; summary: RootSummary } {
  for (const n of at.notes) console.error(`note: ${n}`);
  return { path: at.path, summary: nodeSummary(tree, game, policy, at.node) };
}

function printResult(
  json: boolean,
  meta: Record<string, unknown>,
  summary: RootSummary,
  at: { path: string[]; summary: RootSummary } | null,
): void {
  const brief = (x: RootSummary) => ({
    actions: x.actions,
    frequencies: x.frequencies,
    ev: x.ev,
    equity: x.equity,
  });
  if (json) {
    console.log(JSON.stringify({
      exploitability_pct: meta.exploitability_pct,
      iterations: meta.iterations,
      memory_bytes: meta.memory_bytes,
      root: brief(summary),
      ...(at ? { node: { path: at.path, player: at.summary.player, ...brief(at.summary) } } : {}),
    }));
    return;
  }
  console.log(
    `exploitability ${
      Number(meta.exploitability_pct).toFixed(3)
    }% of pot after ${meta.iterations} iterations`,
  );
  console.log(formatRootSummary(summary));
  if (at) console.log("\n" + formatRootSummary(at.summary, `[${at.path.join(", ")}]`));
}
