// `deno task bench hive-strength [key=value ...]` (keys: USAGE below, or `--help`):
// the strength ladder of the Hive players (see strength.ts) with the shipped network by default.
import { benchKeyValues, type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { KibitzError } from "../errors.ts";
import {
  DEFAULT_HIVE_MODEL,
  HYBRID_SEARCH,
  MCTS_PLAYER_DEFAULTS,
  type MctsPlayerConfig,
  SyncHiveNet,
} from "../uhp/mcts_player.ts";
import { loadHiveModel } from "../nn/model_file.ts";
import { readGameStore } from "../sgf/store.ts";
import { winInOneStats } from "./win_in_one.ts";
import {
  alphaBetaLadderPlayer,
  effortText,
  type LadderPlayer,
  mctsLadderPlayer,
  playMatch,
  policyLadderPlayer,
  randomPlayer,
} from "./strength.ts";

/** The ladder's default pairings (A:B, A's score reported). */
export const DEFAULT_PAIRS = [
  "alphabeta-d2:random",
  "policy:random",
  "mcts:random",
  "mcts-time:random",
  "mcts:alphabeta-d2",
  "mcts-time:alphabeta-time",
  "policy:alphabeta-d2",
];

const USAGE = [
  "pairs=A:B,...   pairings (players: random, alphabeta-d2, alphabeta-time, policy, policy-win1,",
  "                mcts, mcts-time, hybrid, hybrid-time, lazy, lazy-time, policy2, mcts2,",
  "                mcts2-time; none: no match); default " + DEFAULT_PAIRS.join(","),
  "games=N         games per pairing (default 4, --full 200); colours alternate per opening",
  "first=K         first game's number (split one match across processes)",
  "budget=S        no new game after S seconds (0: none)",
  "model=FILE      the network (default models/hive-default.kbhz); model2=FILE for the *2 players",
  "playouts=N      MCTS playouts per move of the fixed players (default 100)",
  "ms=N            ms per move of the time players (default 1000)",
  "plies=N         draw at this ply (default 200)",
  "record=FILE     append one JSON line per finished game (players, score, UHP GameString)",
  "cpuct=C fpu=F   MCTS c_puct and first-play urgency (cpuct2= fpu2= for the model2 players)",
  "loss-check=N    MCTS loss check: no root move that lets the opponent force a win in N plies",
  "batch=N discount=X reuse=0|1 cap-aware=0|1   other MCTS settings (MctsPlayerConfig)",
  "mix=X mix-scale=S surround=K net-visits=N    hybrid and lazy players' settings",
  "win1-store=FILE also rank the policy's wins in one on this store's games",
].join("\n");

const KEYS = [
  "pairs",
  "games",
  "first",
  "budget",
  "model",
  "model2",
  "playouts",
  "ms",
  "plies",
  "record",
  "cpuct",
  "fpu",
  "cpuct2",
  "fpu2",
  "batch",
  "discount",
  "reuse",
  "cap-aware",
  "mix",
  "mix-scale",
  "surround",
  "net-visits",
  "win1-store",
  "loss-check",
];

/** The `hive-strength` benchmark suite. */
export const suite: BenchSuite = {
  description: "Hive strength ladder: random, alpha-beta, policy-only and MCTS with the network",
  usage: USAGE,
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("hive-strength", opts.args);
    for (const k of kv.keys()) {
      if (!KEYS.includes(k)) {
        throw new KibitzError(
          "bad_args",
          `hive-strength: unknown argument "${k}=" (valid: ${KEYS.join(", ")})`,
        );
      }
    }
    const num = (k: string, d: number) => {
      const v = kv.has(k) ? Number(kv.get(k)) : d;
      if (!Number.isFinite(v) || v < 0) throw new KibitzError("bad_args", `${k} must be a number`);
      return v;
    };
    const games = num("games", opts.full ? 200 : 4);
    const playouts = num("playouts", 100);
    const ms = num("ms", 1000);
    const maxPlies = num("plies", 200);
    const first = num("first", 0);
    // No new game starts after `budget` seconds (0: none); the rows report the games played.
    const budget = num("budget", 0);
    const deadline = budget > 0 ? performance.now() + budget * 1000 : undefined;
    const modelPath = kv.get("model") ?? DEFAULT_HIVE_MODEL;
    // One JSON line per finished game (players, score, UHP GameString), appended as it ends.
    const record = kv.get("record");
    const pairsArg = kv.get("pairs") ?? DEFAULT_PAIRS.join(",");
    const pairs = pairsArg === "none" ? [] : pairsArg.split(",");
    const model = await loadHiveModel(modelPath);
    const net = new SyncHiveNet(model.weights);
    // A second network for head-to-head pairings (players policy2, mcts2, mcts2-time).
    const model2Path = kv.get("model2");
    const net2 = model2Path ? new SyncHiveNet((await loadHiveModel(model2Path)).weights) : null;
    const second = (name: string): SyncHiveNet => {
      if (!net2) throw new KibitzError("bad_args", `hive-strength: ${name} needs model2=FILE`);
      return net2;
    };
    const named = (p: LadderPlayer, name: string): LadderPlayer => {
      p.name = name;
      return p;
    };
    // MCTS settings: the match's ply cap, and optional overrides (batch, discount, reuse) for
    // comparisons.
    const mctsConfig: Partial<MctsPlayerConfig> = { maxPlies };
    if (kv.has("batch")) mctsConfig.batch = num("batch", 1);
    if (kv.has("discount")) mctsConfig.discount = num("discount", 0);
    if (kv.has("reuse")) mctsConfig.reuseTree = num("reuse", 1) > 0;
    if (kv.has("cap-aware") && num("cap-aware", 1) === 0) mctsConfig.maxPlies = Infinity;
    if (kv.has("cpuct")) mctsConfig.cPuct = num("cpuct", MCTS_PLAYER_DEFAULTS.cPuct);
    if (kv.has("fpu")) mctsConfig.fpuReduction = num("fpu", MCTS_PLAYER_DEFAULTS.fpuReduction);
    if (kv.has("loss-check")) mctsConfig.lossCheck = num("loss-check", 0);
    // The model2 players' search settings: mcts's unless cpuct2 / fpu2 say otherwise (so one
    // network against itself compares two settings).
    const mcts2Config: Partial<MctsPlayerConfig> = { ...mctsConfig };
    if (kv.has("cpuct2")) mcts2Config.cPuct = num("cpuct2", MCTS_PLAYER_DEFAULTS.cPuct);
    if (kv.has("fpu2")) mcts2Config.fpuReduction = num("fpu2", MCTS_PLAYER_DEFAULTS.fpuReduction);
    // The hybrid players (hybrid, hybrid-time): MCTS whose leaf values blend the network's with the
    // alpha-beta player's static score (MctsPlayerConfig.valueMix) and whose priors lean towards
    // queen-surround gains (surroundPrior), labelled apart from "mcts"; HYBRID_SEARCH by default.
    const mix = num("mix", HYBRID_SEARCH.valueMix!);
    if (mix > 1) throw new KibitzError("bad_args", "mix must be in [0, 1]");
    const hybridConfig: Partial<MctsPlayerConfig> = {
      ...mctsConfig,
      valueMix: mix,
      valueScale: num("mix-scale", MCTS_PLAYER_DEFAULTS.valueScale),
      surroundPrior: num("surround", HYBRID_SEARCH.surroundPrior!),
    };
    const sp = hybridConfig.surroundPrior ? `s${hybridConfig.surroundPrior}` : "";
    // The lazy hybrids (lazy, lazy-time): static values at new leaves, the network's priors once a
    // node has `net-visits` visits (MctsPlayerConfig.netVisits).
    const netVisits = Math.max(1, Math.floor(num("net-visits", 8)));
    const lazyConfig: Partial<MctsPlayerConfig> = { ...hybridConfig, netVisits };
    const make = (name: string, seed: number): LadderPlayer => {
      switch (name) {
        case "random":
          return randomPlayer(seed);
        case "alphabeta-d2":
          return alphaBetaLadderPlayer({ depth: 2 });
        case "alphabeta-time":
          return alphaBetaLadderPlayer({ timeMs: ms });
        case "policy":
          return policyLadderPlayer(net);
        case "policy-win1":
          return policyLadderPlayer(net, true);
        case "mcts":
          return mctsLadderPlayer(net, { playouts }, mctsConfig);
        case "mcts-time":
          return mctsLadderPlayer(net, { timeMs: ms }, mctsConfig);
        case "hybrid":
          return named(
            mctsLadderPlayer(net, { playouts }, hybridConfig),
            `hybrid${mix}${sp}-${playouts}`,
          );
        case "hybrid-time":
          return named(
            mctsLadderPlayer(net, { timeMs: ms }, hybridConfig),
            `hybrid${mix}${sp}-${ms}ms`,
          );
        case "lazy":
          return named(
            mctsLadderPlayer(net, { playouts }, lazyConfig),
            `lazy${netVisits}${sp}-${playouts}`,
          );
        case "lazy-time":
          return named(
            mctsLadderPlayer(net, { timeMs: ms }, lazyConfig),
            `lazy${netVisits}${sp}-${ms}ms`,
          );
        case "policy2":
          return named(policyLadderPlayer(second(name)), "policy (model2)");
        case "mcts2":
          return named(
            mctsLadderPlayer(second(name), { playouts }, mcts2Config),
            `mcts-${playouts} (model2)`,
          );
        case "mcts2-time":
          return named(
            mctsLadderPlayer(second(name), { timeMs: ms }, mcts2Config),
            `mcts-${ms}ms (model2)`,
          );
        default:
          throw new KibitzError("bad_args", `hive-strength: unknown player "${name}"`);
      }
    };
    const report = newReport("hive-strength", null);
    const rows: (string | number)[][] = [];
    const results = [];
    for (const [k, pair] of pairs.entries()) {
      const [an, bn] = pair.split(":");
      const a = make(an, 11 + k), b = make(bn, 101 + k);
      opts.log(`${a.name} vs ${b.name}: ${games} games`);
      const r = playMatch(a, b, {
        games,
        gameType: "Base+MLP",
        openingPlies: 2,
        maxPlies,
        seed: 1 + k,
        first,
        deadline,
      }, (i, s, plies, g) => {
        opts.log(`  game ${i + 1}: ${a.name} scores ${s} in ${plies} plies`);
        if (record) {
          const aWhite = i % 2 === 0, moves = g.gameString();
          const line = { game: i + 1, a: a.name, b: b.name, aWhite, scoreA: s, plies, moves };
          Deno.writeTextFileSync(record, JSON.stringify(line) + "\n", { append: true });
        }
      });
      results.push(r);
      rows.push([
        r.a,
        r.b,
        r.games,
        `${r.winsA}/${r.draws}/${r.winsB}`,
        r.score,
        `${r.low.toFixed(2)}-${r.high.toFixed(2)}`,
        Math.round(r.elo),
        r.msPerMoveA,
        r.msPerMoveB,
        effortText(a),
        effortText(b),
        r.meanPlies,
      ]);
    }
    report.tables.push({
      title:
        `Matches (Base+MLP, 2 random opening plies per opening, colours alternated, draw at 200 plies)`,
      columns: [
        "A",
        "B",
        "games",
        "A wins/draws/B wins",
        "A score",
        "95 % interval",
        "Elo A-B",
        "ms/move A",
        "ms/move B",
        "search/move A",
        "search/move B",
        "mean plies",
      ],
      rows,
    });
    const win1Store = kv.get("win1-store");
    if (win1Store) {
      const games = [];
      for await (const g of readGameStore(win1Store)) games.push(g);
      const w = winInOneStats(net, games);
      const sorted = [...w.ranks].sort((x, y) => x - y);
      const within = (k: number) => w.ranks.filter((r) => r <= k).length;
      const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
      report.tables.push({
        title: `Policy on the wins in one of ${win1Store.slice(win1Store.lastIndexOf("/") + 1)}`,
        columns: [
          "positions",
          "with a win in one",
          "win played in the game",
          "policy top-1",
          "top-3",
          "top-5",
          "median rank",
          "mean legal moves",
          "prior on wins",
          "uniform prior on wins",
        ],
        rows: [[
          w.positions,
          w.wins,
          w.played,
          within(1),
          within(3),
          within(5),
          sorted.length ? sorted[(sorted.length - 1) >> 1] : 0,
          Math.round(mean(w.legal)),
          mean(w.mass),
          mean(w.legal.map((l) => 1 / l)),
        ]],
      });
    }
    const c = model.weights.config;
    if (model2Path) {
      report.notes.push(
        `model2 (players marked "model2"): ${model2Path}, settings ${
          JSON.stringify({ ...MCTS_PLAYER_DEFAULTS, ...mcts2Config })
        }.`,
      );
    }
    report.notes.push(
      `Network: ${modelPath.slice(modelPath.lastIndexOf("/") + 1)} (${c.blocks} x ${c.filters}, ` +
        `${JSON.stringify(model.meta)}), MCTS with the fast one-position CPU ` +
        `inference (sparse stem, Wasm SIMD convolutions, legal policy logits only), MCTS-Solver ` +
        `with the win check, settings ${
          JSON.stringify({ ...MCTS_PLAYER_DEFAULTS, ...mctsConfig })
        }; ` +
        `mcts = ${playouts} playouts per move, time players ${ms} ms per move` +
        `; hybrid players: valueMix ${hybridConfig.valueMix}, valueScale ${hybridConfig.valueScale} ` +
        `(leaf value = (1 - mix) x network + mix x tanh(alpha-beta static score / scale)); lazy ` +
        `players: new leaves get equal priors and the static value, the network's priors once a ` +
        `node has ${netVisits} visits; surround priors x exp(${hybridConfig.surroundPrior} x gain) ` +
        `for hybrid and lazy players` +
        (first > 0 ? `; games from index ${first} of each match` : "") +
        (budget > 0 ? `; no game started after ${budget} s` : "") + ".",
      "Targets (issue 17): MCTS at 1 s/move >= 99 % vs random and >= 75 % vs alpha-beta at 1 s " +
        "over 200 games; policy-only >= 90 % vs random.",
    );
    return report;
  },
};
