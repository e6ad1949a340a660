import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ENGINE_GAME_DEFAULTS, engineName } from "../src/hiveplayer/engine_games.ts";
import { playEngineGames } from "../src/hiveplayer/engine_games_pool.ts";

await runMain(async () => {
  const d = ENGINE_GAME_DEFAULTS;
  const args = parseTaskArgs(
    Deno.args,
    "deno task hive-games --out FILE [--games N] [--depth D | --time-ms T] [--workers W]",
    "Plays games between two copies of the project's alpha-beta player (a few seeded random opening\n" +
      "plies, then search) and appends them to a game store (JSON lines, the format of\n" +
      "`deno task ingest`), labelled as engine games, as warm-start data for hive-pretrain.",
    {
      out: { type: "string", help: "game store to append to (JSON lines)" },
      games: { type: "string", default: "20", help: "games to play" },
      seed: { type: "string", default: "1", help: "seed of the first game (then seed+1, ...)" },
      depth: { type: "string", default: String(d.depth), help: "alpha-beta plies per move" },
      "time-ms": { type: "string", default: "0", help: "ms per move instead of a fixed depth" },
      "random-plies": {
        type: "string",
        default: String(d.randomPlies),
        help: "uniformly random plies that open each game",
      },
      "other-depth": {
        type: "string",
        default: String(d.otherDepth),
        help: "depth of the weaker side, colours alternating by seed (0: both equal)",
      },
      "other-random": {
        type: "boolean",
        help: "the weaker side plays uniformly random moves (seeded) instead of searching",
      },
      "max-plies": { type: "string", default: String(d.maxPlies), help: "ply cap (Unfinished)" },
      "game-type": { type: "string", default: d.gameType, help: "UHP game type" },
      workers: { type: "string", default: "2", help: "worker threads (0: main thread)" },
    },
  );
  if (!args) return;
  if (args.values.out === undefined) {
    throw new KibitzError("bad_args", "--out: a game store file is required");
  }
  const out = String(args.values.out);
  const games = intOption(args.values, "games", 20, 1);
  const options = {
    gameType: String(args.values["game-type"]),
    randomPlies: intOption(args.values, "random-plies", d.randomPlies, 0, 200),
    depth: intOption(args.values, "depth", d.depth, 1, 12),
    timeMs: intOption(args.values, "time-ms", 0, 0),
    maxPlies: intOption(args.values, "max-plies", d.maxPlies, 1),
    otherDepth: intOption(args.values, "other-depth", d.otherDepth, 0, 12),
    otherRandom: args.values["other-random"] === true,
  };
  const dir = out.includes("/") ? out.slice(0, out.lastIndexOf("/")) : "";
  if (dir) await Deno.mkdir(dir, { recursive: true });
  const file = await Deno.open(out, { append: true, create: true });
  const enc = new TextEncoder();
  const tally: Record<string, number> = {};
  let done = 0, plies = 0;
  const t0 = performance.now();
  try {
    await playEngineGames(
      games,
      intOption(args.values, "seed", 1, 0),
      intOption(args.values, "workers", 2, 0, 64),
      options,
      async (g) => {
        await file.write(enc.encode(JSON.stringify(g) + "\n"));
        tally[g.result] = (tally[g.result] ?? 0) + 1;
        done++;
        plies += g.moves.length;
        console.error(`game ${done}/${games}: ${g.result} in ${g.moves.length} plies`);
      },
    );
  } finally {
    file.close();
  }
  const s = (performance.now() - t0) / 1000;
  console.log(
    `${done} ${engineName(options)} games (${plies} positions) appended to ${out} in ${
      s.toFixed(1)
    } s: ${JSON.stringify(tally)}`,
  );
});
