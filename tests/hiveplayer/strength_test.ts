import { equal, ok, rejects } from "node:assert/strict";
import { suite } from "../../src/hiveplayer/strength_bench.ts";
import {
  alphaBetaLadderPlayer,
  effortText,
  eloFromScore,
  mctsLadderPlayer,
  playMatch,
  randomPlayer,
  scoreStats,
} from "../../src/hiveplayer/strength.ts";
import { DEFAULT_HIVE_MODEL, uniformHiveEvaluator } from "../../src/uhp/mcts_player.ts";
import { HiveGame } from "../../src/hive/game.ts";

Deno.test("strength: score, interval and Elo of known results", () => {
  equal(eloFromScore(0.5), 0);
  ok(Math.abs(eloFromScore(0.75) - 190.85) < 0.01);
  const s = scoreStats([1, 1, 0, 0.5]);
  equal(s.score, 0.625);
  // sd of (1, 1, 0, 0.5) with n - 1 = 0.4787; half width 1.96 * 0.4787 / 2.
  ok(Math.abs(s.score - s.low - 1.96 * Math.sqrt(0.22916666666666666 / 4)) < 1e-9);
  equal(s.high, 1);
  const all = scoreStats([1, 1, 1, 1]);
  equal(all.low, 1);
  ok(Math.abs(all.elo - eloFromScore(1 - 0.5 / 4)) < 1e-9);
});

Deno.test("strength: matches alternate colours over shared openings and count every game", () => {
  const r = playMatch(randomPlayer(1), randomPlayer(2), {
    games: 4,
    gameType: "Base+MLP",
    openingPlies: 2,
    maxPlies: 30,
    seed: 5,
  });
  equal(r.games, 4);
  equal(r.winsA + r.draws + r.winsB, 4);
  ok(r.meanPlies <= 30);
  // A one-ply search beats random play, and exact MCTS results find wins too.
  const ab = playMatch(alphaBetaLadderPlayer({ depth: 1 }), randomPlayer(3), {
    games: 2,
    gameType: "Base+MLP",
    openingPlies: 2,
    maxPlies: 200,
    seed: 1,
  });
  ok(ab.score >= 0.5, `alpha-beta scored ${ab.score}`);
  const m = mctsLadderPlayer(uniformHiveEvaluator, { playouts: 8 });
  equal(m.name, "mcts-8");
  const g = new HiveGame("Base+MLP");
  g.play(g.validMoves()[0]);
  m.move(g);
  equal(effortText(m), "8 playouts");
  const d = alphaBetaLadderPlayer({ depth: 2 });
  d.move(g);
  equal(effortText(d), "d2.0");
  equal(effortText(randomPlayer(1)), "");
});

Deno.test("strength: a match split with `first` adds up to the whole match", () => {
  // Alpha-beta at depth 1 is deterministic, so game i depends only on the seed and i.
  const o = { gameType: "Base+MLP", openingPlies: 2, maxPlies: 40, seed: 3 };
  const a = () => alphaBetaLadderPlayer({ depth: 1 });
  const whole = playMatch(a(), a(), { ...o, games: 4 });
  const p1 = playMatch(a(), a(), { ...o, games: 2 });
  const p2 = playMatch(a(), a(), { ...o, games: 2, first: 2 });
  equal(p1.winsA + p2.winsA, whole.winsA);
  equal(p1.draws + p2.draws, whole.draws);
  equal(p1.meanPlies * 2 + p2.meanPlies * 2, whole.meanPlies * 4);
  // A passed deadline: the game under way finishes, no other starts, the result counts it alone.
  const cut = playMatch(a(), a(), { ...o, games: 4, deadline: performance.now() - 1 });
  equal(cut.games, 1);
  equal(cut.winsA + cut.draws + cut.winsB, 1);
});

Deno.test("hive-strength: model2 players meet the first network head to head; without model2 an error", async () => {
  const opts = (pairs: string, extra: string[] = []) => ({
    full: false,
    backend: "cpu",
    args: ["games=2", "plies=12", `pairs=${pairs}`, ...extra],
    log: () => {},
  });
  const r = await suite.run(opts("policy:policy2", [`model2=${DEFAULT_HIVE_MODEL}`]));
  const row = r.tables[0].rows[0];
  equal(row[0], "policy");
  equal(row[1], "policy (model2)");
  equal(row[2], 2);
  // The same network on both sides of a shared opening, colours swapped: equal scores.
  equal(row[4], 0.5);
  await rejects(() => suite.run(opts("policy:policy2")), /needs model2=FILE/);
  // A misspelt key is an error naming it, not a silently ignored setting.
  await rejects(() => suite.run(opts("policy:random", ["recrod=x"])), /unknown argument "recrod="/);
  ok(suite.usage?.includes("record=FILE"));
  // The loss check's key is accepted, and MCTS players with it play the match.
  const lc = await suite.run(opts("mcts:random", ["playouts=4", "loss-check=5"]));
  equal(lc.tables[0].rows[0][2], 2);
});

Deno.test("hive-strength: record=FILE appends each game's players, score and replayable moves", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const record = `${dir}/games.jsonl`;
    await suite.run({
      full: false,
      backend: "cpu",
      args: ["games=3", "plies=30", "pairs=alphabeta-d2:random", `record=${record}`],
      log: () => {},
    });
    const lines = (await Deno.readTextFile(record)).trim().split("\n").map((l) => JSON.parse(l));
    equal(lines.length, 3);
    for (const [i, r] of lines.entries()) {
      equal(r.game, i + 1);
      equal(r.a, "alphabeta-d2");
      equal(r.b, "random");
      equal(r.aWhite, i % 2 === 0);
      // The GameString replays to the recorded length and result.
      const g = HiveGame.fromGameString(r.moves);
      equal(g.turn, r.plies);
      const white = g.isOver() ? (g.outcomeForSideToMove() ?? 0) * (g.turn % 2 === 0 ? 1 : -1) : 0;
      const whiteScore = (white + 1) / 2;
      equal(r.scoreA, r.aWhite ? whiteScore : 1 - whiteScore);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
