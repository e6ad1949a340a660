import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { ensureOutputDir } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { azGames, azPreset } from "../src/alphazero/presets.ts";
import { runLoop } from "../src/alphazero/loop.ts";
import { releaseGpu } from "../src/gpu/mod.ts";
// Also registers hive, hive-cpu, hive-tiny, their cells-head twins hive-cells(-cpu, -tiny) and
// hive-cells-pool-cpu (cells head, pooled value head).
import { warmStart } from "../src/alphazero/hive.ts";
import { NET_BACKEND_HELP } from "../src/nn/create.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    `deno task az <${
      azGames().join("|")
    }> [--dir DIR] [--iterations N] [--backend auto|gpu|cpu-fast|cpu]`,
    "The AlphaZero loop: self-play with the best network -> train the candidate from the replay\n" +
      "buffer -> arena candidate vs best -> promote at >= 55 %. State (checkpoints, buffer, logs)\n" +
      "lives in --dir; run the same command again to resume after Ctrl-C or a crash.",
    {
      dir: { type: "string", help: "state folder (default out/az/<game>)" },
      iterations: { type: "string", help: "iterations in total (default: the game's preset)" },
      games: { type: "string", help: "self-play games per iteration (default: preset)" },
      playouts: { type: "string", help: "self-play playouts per move (default: preset)" },
      steps: { type: "string", help: "training steps per iteration (default: preset)" },
      "arena-games": { type: "string", help: "arena games per iteration (default: preset)" },
      "arena-playouts": { type: "string", help: "arena playouts per move (default: preset)" },
      "max-plies": {
        type: "string",
        help: "ply cap of self-play and arena games, scored a draw (default: preset)",
      },
      backend: { type: "string", default: "auto", help: NET_BACKEND_HELP },
      seed: { type: "string", help: "seed of weights and games (default 1)" },
      init: {
        type: "string",
        help: "warm start: a checkpoint or model file (e.g. from hive-pretrain) as the first best",
      },
    },
  );
  if (!args) return;
  const name = args.positionals[0];
  if (!name) throw new KibitzError("bad_args", `name a game: ${azGames().join(", ")}`);
  const p = azPreset(name);
  const v = args.values;
  p.iterations = intOption(v, "iterations", p.iterations, 0);
  p.gamesPerIteration = intOption(v, "games", p.gamesPerIteration, 1);
  p.selfplay.playouts = intOption(v, "playouts", p.selfplay.playouts, 1);
  p.train.steps = intOption(v, "steps", p.train.steps, 1);
  p.arena.games = intOption(v, "arena-games", p.arena.games, 2);
  p.arena.playouts = intOption(v, "arena-playouts", p.arena.playouts, 1);
  p.selfplay.maxPlies = intOption(v, "max-plies", p.selfplay.maxPlies, 0);
  p.arena.maxPlies = intOption(v, "max-plies", p.arena.maxPlies, 0);
  p.seed = intOption(v, "seed", p.seed, 0);
  const dir = v.dir === undefined ? `out/az/${name}` : String(v.dir);
  await ensureOutputDir(dir, "--dir");
  if (v.init !== undefined) await warmStart(dir, String(v.init), p.net);
  const stop = stopOnSignal(
    "az: stopping at the next durable point",
  );
  const progress = new Progress("az");
  console.log(
    `az ${name}: net ${p.net.blocks} x ${p.net.filters}${p.net.cells ? " (cells head)" : ""}${
      p.net.valuePool ? ` (pooled value head of ${p.net.valuePool})` : ""
    }, ` +
      `${p.gamesPerIteration} games x ` +
      `${p.selfplay.playouts} playouts, ${p.train.steps} steps x ${p.train.batch}, arena ` +
      `${p.arena.games} games x ${p.arena.playouts} playouts; state in ${dir}`,
  );
  const lines = await runLoop(dir, p, String(v.backend), {
    progress: (t, force) => force ? progress.done(t) : progress.update(t),
    stopped: () => stop.stopped,
  });
  stop.release();
  progress.done(
    `${lines.length} iteration(s) in ${progress.elapsed().toFixed(1)} s; log in ${dir}/log.jsonl`,
  );
  await releaseGpu();
});
