import { intOption, numberOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ensureInput, ensureOutputFile } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { arenaStage, netPlayer } from "../src/alphazero/loop.ts";
import { azGames, azPreset } from "../src/alphazero/presets.ts";
import { loadCheckpoint } from "../src/nn/checkpoint.ts";
import { releaseGpu } from "../src/gpu/mod.ts";
import { NET_BACKEND_HELP } from "../src/nn/create.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    `deno task arena <${azGames().join("|")}> --candidate FILE --best FILE --log FILE [--games N]`,
    "Arena alone: the candidate network against the best, half the games with each colour,\n" +
      "evaluation search without noise; every game is appended to --log (rerun to resume).",
    {
      candidate: { type: "string", help: "candidate checkpoint" },
      best: { type: "string", help: "best checkpoint" },
      log: { type: "string", help: "JSON-lines game log (resumed when it exists)" },
      games: { type: "string", help: "games (default: preset)" },
      playouts: { type: "string", help: "playouts per move (default: preset)" },
      threshold: { type: "string", default: "0.55", help: "promotion score" },
      seed: { type: "string", default: "1", help: "seed of the opening moves" },
      backend: { type: "string", default: "auto", help: NET_BACKEND_HELP },
    },
  );
  if (!args) return;
  const name = args.positionals[0];
  if (!name) throw new KibitzError("bad_args", `name a game: ${azGames().join(", ")}`);
  const v = args.values;
  if (v.candidate === undefined || v.best === undefined || v.log === undefined) {
    throw new KibitzError("bad_args", "--candidate, --best and --log are required");
  }
  await ensureInput(String(v.candidate), "--candidate");
  await ensureInput(String(v.best), "--best");
  await ensureOutputFile(String(v.log), "--log");
  const p = azPreset(name);
  p.arena.games = intOption(v, "games", p.arena.games, 2);
  p.arena.playouts = intOption(v, "playouts", p.arena.playouts, 1);
  const threshold = numberOption(v, "threshold", 0.55);
  const backend = String(v.backend);
  const cand = await netPlayer(
    (await loadCheckpoint(String(v.candidate), p.net)).weights,
    p.game,
    backend,
    p.maxBatch,
    p.cacheSize,
  );
  const best = await netPlayer(
    (await loadCheckpoint(String(v.best), p.net)).weights,
    p.game,
    backend,
    p.maxBatch,
    p.cacheSize,
  );
  const progress = new Progress("arena");
  const { result } = await arenaStage(p, cand, best, String(v.log), intOption(v, "seed", 1, 0), {
    progress: (t) => progress.update(t),
  });
  cand.close();
  best.close();
  progress.done(
    `+${result.wins} =${result.draws} -${result.losses}: score ${
      (result.score * 100).toFixed(1)
    } % ` +
      `(${result.score >= threshold ? "promote" : "keep the best"} at ${
        (threshold * 100).toFixed(1)
      } %)`,
  );
  console.log(JSON.stringify({ ...result, promote: result.score >= threshold }));
  await releaseGpu();
});
