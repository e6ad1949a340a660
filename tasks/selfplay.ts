import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { ensureInput, ensureOutputDir } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { ReplayBuffer } from "../src/alphazero/buffer.ts";
import { netPlayer, selfPlayStage } from "../src/alphazero/loop.ts";
import { azGames, azPreset } from "../src/alphazero/presets.ts";
import { inputSize } from "../src/mcts/game.ts";
import { loadCheckpoint } from "../src/nn/checkpoint.ts";
import { initWeights } from "../src/nn/params.ts";
import { releaseGpu } from "../src/gpu/mod.ts";
import { NET_BACKEND_HELP } from "../src/nn/create.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    `deno task selfplay <${azGames().join("|")}> --buffer DIR [--model FILE] [--games N]`,
    "Self-play alone: the network (--model, or random weights) plays games against itself with\n" +
      "PUCT search and root noise; every position goes into the replay buffer folder.",
    {
      buffer: { type: "string", help: "replay buffer folder (created if missing)" },
      model: { type: "string", help: "network checkpoint (default: random weights from --seed)" },
      games: { type: "string", help: "games to play (default: the preset's per iteration)" },
      playouts: { type: "string", help: "playouts per move (default: preset)" },
      iteration: { type: "string", default: "0", help: "iteration tag stored with the games" },
      seed: { type: "string", default: "1", help: "seed of the games (and of random weights)" },
      backend: { type: "string", default: "auto", help: NET_BACKEND_HELP },
    },
  );
  if (!args) return;
  const name = args.positionals[0];
  if (!name) throw new KibitzError("bad_args", `name a game: ${azGames().join(", ")}`);
  if (args.values.buffer === undefined) throw new KibitzError("bad_args", "--buffer is required");
  const p = azPreset(name), v = args.values;
  p.seed = intOption(v, "seed", 1, 0);
  p.selfplay.playouts = intOption(v, "playouts", p.selfplay.playouts, 1);
  const games = intOption(v, "games", p.gamesPerIteration, 1);
  const iteration = intOption(v, "iteration", 0, 0);
  if (v.model !== undefined) await ensureInput(String(v.model), "--model");
  await ensureOutputDir(String(v.buffer), "--buffer");
  const weights = v.model === undefined
    ? initWeights(p.net, p.seed)
    : (await loadCheckpoint(String(v.model), p.net)).weights;
  const buffer = await ReplayBuffer.open(
    String(v.buffer),
    p.bufferCapacity,
    inputSize(p.game),
    p.game.moves,
    p.net.cells !== undefined,
  );
  const player = await netPlayer(weights, p.game, String(v.backend), p.maxBatch, p.cacheSize);
  const progress = new Progress("selfplay");
  const first = buffer.gamesFor(iteration);
  const stop = stopOnSignal(
    "selfplay: stopping once the games in play are stored",
  );
  const s = await selfPlayStage(p, player, buffer, iteration, first, games, null, {
    progress: (t) => progress.update(t),
    stopped: () => stop.stopped,
  }).finally(stop.release);
  player.close();
  progress.done(
    `${s.games} games, ${s.positions} positions in ${s.seconds.toFixed(1)} s${
      stop.stopped ? " (stopped)" : ""
    }`,
  );
  console.log(JSON.stringify(s));
  await releaseGpu();
});
