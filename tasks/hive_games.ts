import { intOption, numberOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ENGINE_GAME_DEFAULTS, engineName } from "../src/hiveplayer/engine_games.ts";
import { playEngineGames } from "../src/hiveplayer/engine_games_pool.ts";
import { DAGGER_DEFAULTS, type LabelledGame, labellerName } from "../src/hiveplayer/dagger.ts";
import { playDaggerGames, playMatchGames } from "../src/hiveplayer/net_games_pool.ts";
import { MATCH_GAME_DEFAULTS, SELFPLAY_DEFAULTS } from "../src/hiveplayer/match_games.ts";
import { isGzipStore, type StoredGame } from "../src/sgf/store.ts";

await runMain(async () => {
  const d = ENGINE_GAME_DEFAULTS, dd = DAGGER_DEFAULTS, md = MATCH_GAME_DEFAULTS;
  const args = parseTaskArgs(
    Deno.args,
    "deno task hive-games --out FILE [--games N] [--depth D | --time-ms T] [--workers W]\n" +
      "       deno task hive-games --dagger MODEL --out FILE [--games N] [--label-depth D] [--vs-random P]\n" +
      "       deno task hive-games --match MODEL --out FILE [--games N] [--playouts N] [--depth D]\n" +
      "       deno task hive-games --match MODEL --selfplay --out FILE [--games N] [--playouts N]",
    "Plays games between two copies of the project's alpha-beta player (a few seeded random opening\n" +
      "plies, then search) and appends them to a game store (JSON lines, the format of\n" +
      "`deno task ingest`), labelled as engine games, as warm-start data for hive-pretrain.\n" +
      "With --dagger MODEL (imitation on the learner's own positions, DAgger): MODEL's policy plays\n" +
      "(its top move, or a sample, or with probability --beta the expert's move) against uniformly\n" +
      "random moves or itself, and every distinct position where it moves is labelled with the\n" +
      "alpha-beta player's move (policy target) and its score squashed by tanh(score / --scale)\n" +
      "(value target), stored as extra fields `labels`/`labelValues` (source `dagger:...`).\n" +
      "With --match MODEL: MODEL with MCTS (--playouts per move) plays the alpha-beta player (--depth),\n" +
      "colours alternating by seed, after --random-plies plus 0..--extra-random-plies random plies;\n" +
      "every position where a side chose among several moves is labelled with the move played and\n" +
      "the game's final result for that side (a draw or a game stopped at --max-plies: 0), source\n" +
      "`match:...`: value targets from the games the network has to win.\n" +
      "With --match MODEL --selfplay: MODEL with MCTS plays itself (one tree, --playouts per move,\n" +
      "default 400), the first --sample-plies plies after the random opening drawn by root visits;\n" +
      "every position with a choice is labelled with the search's most visited move and\n" +
      "--search-value x the search's root value + the rest x the final result (source `selfplay:...`).",
    {
      out: { type: "string", help: "game store to append to (JSON lines)" },
      games: { type: "string", default: "20", help: "games to play" },
      seed: { type: "string", default: "1", help: "seed of the first game (then seed+1, ...)" },
      depth: { type: "string", default: String(d.depth), help: "alpha-beta plies per move" },
      "time-ms": { type: "string", default: "0", help: "ms per move instead of a fixed depth" },
      "random-plies": {
        type: "string",
        help: `uniformly random plies that open each game (default ${d.randomPlies}; ` +
          `--dagger: ${dd.randomPlies})`,
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
      "max-plies": {
        type: "string",
        help: `ply cap (Unfinished; default ${d.maxPlies}, --match: ${md.maxPlies})`,
      },
      "game-type": { type: "string", default: d.gameType, help: "UHP game type" },
      workers: { type: "string", default: "2", help: "worker threads (0: main thread)" },
      dagger: { type: "string", help: "learner network (.kbhz or .kbnn): labelled games" },
      match: {
        type: "string",
        help: "network (.kbhz or .kbnn) that plays alpha-beta with MCTS: result-labelled games",
      },
      playouts: {
        type: "string",
        help: `--match: MCTS playouts per move (--selfplay: default ${SELFPLAY_DEFAULTS.playouts})`,
      },
      "extra-random-plies": {
        type: "string",
        default: String(md.extraRandomPlies),
        help: "--match: up to this many more random opening plies, by seed",
      },
      selfplay: { type: "boolean", help: "--match: MODEL plays itself (self-play labels)" },
      "search-value": {
        type: "string",
        default: String(SELFPLAY_DEFAULTS.searchValue),
        help: "--selfplay: share of the search's root value in the value label (rest: result)",
      },
      "sample-plies": {
        type: "string",
        default: String(SELFPLAY_DEFAULTS.samplePlies),
        help: "--selfplay: plies after the opening whose move is drawn by root visits",
      },
      "label-depth": {
        type: "string",
        default: String(dd.labelDepth),
        help: "--dagger: alpha-beta depth of the labels",
      },
      scale: {
        type: "string",
        default: String(dd.scale),
        help: "--dagger: value label = tanh(alpha-beta score / scale), a found win or loss +-1",
      },
      "vs-random": {
        type: "string",
        default: String(dd.vsRandom),
        help: "--dagger: share of games against uniformly random moves (the rest: self-play)",
      },
      beta: {
        type: "string",
        default: String(dd.beta),
        help: "--dagger: probability of playing the expert's move instead of the learner's",
      },
      greedy: {
        type: "string",
        default: String(dd.greedy),
        help: "--dagger: probability that the learner plays its top move (else it samples)",
      },
      temperature: {
        type: "string",
        default: String(dd.temperature),
        help: "--dagger: softmax temperature of sampled learner moves",
      },
    },
  );
  if (!args) return;
  const v = args.values;
  if (v.out === undefined) {
    throw new KibitzError("bad_args", "--out: a game store file is required");
  }
  const out = String(v.out);
  const games = intOption(v, "games", 20, 1);
  const dagger = v.dagger === undefined ? null : String(v.dagger);
  const match = v.match === undefined ? null : String(v.match);
  if (dagger && match) throw new KibitzError("bad_args", "--dagger and --match exclude each other");
  const selfPlay = v.selfplay === true;
  if (selfPlay && !match) throw new KibitzError("bad_args", "--selfplay needs --match MODEL");
  const share = (name: string, fallback: number) => {
    const x = numberOption(v, name, fallback);
    if (x < 0 || x > 1) throw new KibitzError("bad_args", `--${name} must be in [0, 1]: got ${x}`);
    return x;
  };
  const options = {
    gameType: String(v["game-type"]),
    randomPlies: intOption(
      v,
      "random-plies",
      dagger ? dd.randomPlies : match ? md.randomPlies : d.randomPlies,
      0,
      200,
    ),
    depth: intOption(v, "depth", d.depth, 1, 12),
    timeMs: intOption(v, "time-ms", 0, 0),
    maxPlies: intOption(v, "max-plies", match ? md.maxPlies : d.maxPlies, 1),
    otherDepth: intOption(v, "other-depth", d.otherDepth, 0, 12),
    otherRandom: v["other-random"] === true,
  };
  const daggerOptions = {
    gameType: options.gameType,
    labelDepth: intOption(v, "label-depth", dd.labelDepth, 1, 8),
    scale: numberOption(v, "scale", dd.scale),
    randomPlies: options.randomPlies,
    maxPlies: options.maxPlies,
    vsRandom: share("vs-random", dd.vsRandom),
    beta: share("beta", dd.beta),
    greedy: share("greedy", dd.greedy),
    temperature: numberOption(v, "temperature", dd.temperature),
  };
  if (!(daggerOptions.scale > 0)) throw new KibitzError("bad_args", "--scale must be positive");
  const matchOptions = {
    gameType: options.gameType,
    playouts: intOption(v, "playouts", selfPlay ? SELFPLAY_DEFAULTS.playouts : md.playouts, 1),
    depth: options.depth,
    randomPlies: options.randomPlies,
    extraRandomPlies: intOption(v, "extra-random-plies", md.extraRandomPlies, 0, 200),
    maxPlies: options.maxPlies,
    ...(selfPlay
      ? {
        selfPlay,
        searchValue: share("search-value", SELFPLAY_DEFAULTS.searchValue),
        samplePlies: intOption(v, "sample-plies", SELFPLAY_DEFAULTS.samplePlies, 0, 400),
      }
      : {}),
  };
  for (const [flag, model] of [["dagger", dagger], ["match", match]]) {
    if (!model) continue;
    try {
      await Deno.stat(model);
    } catch {
      throw new KibitzError("not_found", `--${flag} ${model}: no such model file`);
    }
  }
  if (isGzipStore(out)) {
    throw new KibitzError(
      "bad_args",
      `--out ${out}: stores are appended as plain JSON lines (gzip the finished file; .gz stores are read-only)`,
    );
  }
  const dir = out.includes("/") ? out.slice(0, out.lastIndexOf("/")) : "";
  if (dir) await Deno.mkdir(dir, { recursive: true });
  const file = await Deno.open(out, { append: true, create: true });
  const enc = new TextEncoder();
  const tally: Record<string, number> = {};
  let done = 0, plies = 0, labelled = 0;
  const t0 = performance.now();
  const onGame = async (g: StoredGame) => {
    await file.write(enc.encode(JSON.stringify(g) + "\n"));
    tally[g.result] = (tally[g.result] ?? 0) + 1;
    done++;
    plies += g.moves.length;
    const net = dagger ?? match;
    const l = net ? (g as LabelledGame).labels.filter((x) => x !== null).length : 0;
    labelled += l;
    console.error(
      `game ${done}/${games}: ${g.result} in ${g.moves.length} plies` +
        (net ? `, ${l} labelled` : "") + (match ? ` (${g.white} - ${g.black})` : ""),
    );
  };
  const workers = intOption(v, "workers", 2, 0, 64);
  const seed = intOption(v, "seed", 1, 0);
  try {
    if (dagger) await playDaggerGames(games, seed, workers, dagger, daggerOptions, onGame);
    else if (match) await playMatchGames(games, seed, workers, match, matchOptions, onGame);
    else await playEngineGames(games, seed, workers, options, onGame);
  } finally {
    file.close();
  }
  const s = (performance.now() - t0) / 1000;
  const what = selfPlay
    ? `self-play games (${plies} plies, ${labelled} positions labelled by the search)`
    : match
    ? `match games (${plies} plies, ${labelled} positions labelled with the result)`
    : dagger
    ? `labelled games (${plies} plies, ${labelled} positions labelled by ${
      labellerName(daggerOptions)
    })`
    : `${engineName(options)} games (${plies} positions)`;
  console.log(`${done} ${what} appended to ${out} in ${s.toFixed(1)} s: ${JSON.stringify(tally)}`);
});
