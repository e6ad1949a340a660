import { deepEqual, equal, ok } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { isLabelled, type LabelledGame } from "../../src/hiveplayer/dagger.ts";
import {
  MATCH_GAME_DEFAULTS,
  MATCH_LABELLER,
  type MatchGameOptions,
  playMatchGame,
  SELFPLAY_LABELLER,
} from "../../src/hiveplayer/match_games.ts";
import { playMatchGames } from "../../src/hiveplayer/net_games_pool.ts";
import { encodeSamples, prepareGames, samplesOf } from "../../src/hiveplayer/pretrain.ts";
import { HIVE_POLICY_SIZE } from "../../src/hive/encoding.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { initWeights } from "../../src/nn/params.ts";
import { readGameStore, type StoredGame } from "../../src/sgf/store.ts";
import { searchBestMove } from "../../src/uhp/alphabeta.ts";
import { MCTS_PLAYER_DEFAULTS, MctsPlayer, SyncHiveNet } from "../../src/uhp/mcts_player.ts";

const OPTS: MatchGameOptions = {
  ...MATCH_GAME_DEFAULTS,
  playouts: 4,
  depth: 1,
  randomPlies: 2,
  extraRandomPlies: 2,
  maxPlies: 16,
};
const weights = initWeights({ ...HIVE_NETS.tiny }, 3);
const net = new SyncHiveNet(weights);

function matchGames(n: number, o = OPTS): LabelledGame[] {
  return Array.from({ length: n }, (_, i) => playMatchGame(i + 1, net, "tiny", o));
}

Deno.test("match games: MCTS against alpha-beta, moves played and the result as labels", () => {
  const a = matchGames(4), b = matchGames(4);
  deepEqual(a, b, "seeded: the same games twice");
  const openings = new Set<number>();
  for (const [i, sg] of a.entries()) {
    ok(isLabelled(sg));
    equal(sg.labeller, MATCH_LABELLER);
    equal(sg.source, "match:tiny+kibitz-alphabeta-d1");
    // MCTS is White on even seeds (seed = i + 1).
    const mctsWhite = (i + 1) % 2 === 0;
    equal(sg.white, mctsWhite ? "kibitz-mcts4-tiny" : "kibitz-alphabeta-d1");
    equal(sg.black, mctsWhite ? "kibitz-alphabeta-d1" : "kibitz-mcts4-tiny");
    equal(sg.labels.length, sg.moves.length);
    equal(sg.result, "Unfinished", "16 plies do not finish a game");
    const g = new HiveGame(sg.gameType);
    const mcts = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, maxPlies: OPTS.maxPlies });
    let first = -1;
    sg.moves.forEach((m, ply) => {
      const label = sg.labels[ply], v = sg.labelValues[ply];
      const legal = g.validMoves();
      if (label !== null) {
        if (first < 0) first = ply;
        equal(label, m, "the label is the move played");
        equal(v, 0, "an unfinished game is worth 0 to both sides");
        ok(legal.length > 1);
        // Each searched move is the player's own choice there.
        const mctsToMove = (g.colorToMove === 0) === mctsWhite;
        const own = mctsToMove
          ? mcts.search(g, OPTS.playouts).move
          : searchBestMove(g, { depth: 1 }).move;
        equal(g.moveString(own), m, `${sg.id} ply ${ply}`);
      } else {
        equal(v, null);
        ok(ply < OPTS.randomPlies + OPTS.extraRandomPlies || legal.length === 1);
      }
      g.playString(m);
    });
    ok(first >= OPTS.randomPlies && first <= OPTS.randomPlies + OPTS.extraRandomPlies);
    openings.add(first);
  }
  ok(openings.size > 1, "the random opening's length varies by seed");
});

Deno.test("match games: a finished game's values are its result for the side to move", () => {
  // Against a 1-playout search alpha-beta at depth 2 wins within the cap.
  const o = { ...OPTS, playouts: 1, depth: 2, maxPlies: 200 };
  const sg = playMatchGame(2, net, "tiny", o);
  ok(sg.result === "WhiteWins" || sg.result === "BlackWins", sg.result);
  const white = sg.result === "WhiteWins" ? 1 : -1;
  let seen = 0;
  sg.labelValues.forEach((v, ply) => {
    if (v === null) return;
    seen++;
    equal(v, ply % 2 === 0 ? white : -white);
  });
  ok(seen > 10);
  const { games, skipped } = prepareGames([sg]);
  equal(skipped, 0);
  equal(samplesOf(games, 0, () => 0).length, seen, "one training sample per labelled position");
});

Deno.test("match games: the worker pool writes the same games as the direct calls", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const model = `${dir}/tiny.kbhz`;
    await Deno.writeFile(model, encodeHiveModel(weights, { name: "tiny" }));
    let prev: StoredGame[] = [];
    for (const workers of [0, 2]) {
      const got: StoredGame[] = [];
      await playMatchGames(3, 1, workers, model, OPTS, (g) => {
        got.push(g);
      });
      got.sort((x, y) => x.index - y.index);
      const back: StoredGame[] = [];
      const store = `${dir}/m${workers}.jsonl`;
      await Deno.writeTextFile(store, got.map((g) => JSON.stringify(g)).join("\n") + "\n");
      for await (const g of readGameStore(store)) back.push(g);
      equal(back.length, 3);
      deepEqual(back.map((g) => g.index), [1, 2, 3]);
      // Two threads (each loading the model file) play the same games as this thread.
      if (workers === 2) deepEqual(back, prev);
      prev = back;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("match games: with winner moves only, the loser's moves are not imitated, all values kept", () => {
  const sg = playMatchGame(2, net, "tiny", { ...OPTS, playouts: 1, depth: 2, maxPlies: 200 });
  const { games } = prepareGames([sg]);
  const samples = samplesOf(games, 0, () => 0);
  const all = encodeSamples(games, samples, false), won = encodeSamples(games, samples, true);
  const stride = HIVE_POLICY_SIZE;
  let kept = 0, dropped = 0;
  samples.forEach((s, i) => {
    const rowSum = (b: typeof all) =>
      b.policy.subarray(i * stride, (i + 1) * stride).reduce((a, x) => a + x, 0);
    equal(rowSum(all), 1);
    equal(won.value[i], all.value[i]);
    const winner = sg.labelValues[s.ply] === 1;
    equal(rowSum(won), winner ? 1 : 0);
    winner ? kept++ : dropped++;
  });
  ok(kept > 0 && dropped > 0);
  // An expert's labels (DAgger games) stay targets for both sides.
  const expert = prepareGames([{ ...sg, labeller: "kibitz-alphabeta-d2" } as LabelledGame]).games;
  const e = encodeSamples(expert, samples, true);
  equal(e.policy.reduce((a, x) => a + x, 0), samples.length);
});

Deno.test("self-play games: the search's choice and a blend of its value and the result as labels", () => {
  const o: MatchGameOptions = {
    ...OPTS,
    selfPlay: true,
    playouts: 8,
    searchValue: 0.5,
    samplePlies: 4,
    maxPlies: 40,
  };
  const a = playMatchGame(1, net, "tiny", o);
  deepEqual(playMatchGame(1, net, "tiny", o), a, "seeded");
  equal(a.labeller, SELFPLAY_LABELLER);
  equal(a.source, "selfplay:tiny");
  equal(a.white, "kibitz-mcts8-tiny");
  equal(a.black, a.white);
  // A finished game's result or an unfinished one's 0 (the tiny net rarely finishes in 40 plies).
  const white = a.result === "WhiteWins" ? 1 : a.result === "BlackWins" ? -1 : 0;
  // Replayed with one tree as the game did: each label is the search's most visited move and
  // each value half its root value, half the result; after the sampled plies the label is played.
  const mcts = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, maxPlies: o.maxPlies });
  const g = new HiveGame(a.gameType);
  let first = -1, sampledOther = 0, labelled = 0;
  a.moves.forEach((m, ply) => {
    const label = a.labels[ply], v = a.labelValues[ply];
    if (label !== null) {
      if (first < 0) first = ply;
      labelled++;
      const r = mcts.search(g, o.playouts);
      equal(label, g.moveString(r.move), `ply ${ply}`);
      const q = r.value;
      if (r.proven) equal(q, r.proven.result, "a proven root's value is its result");
      const z = ply % 2 === 0 ? white : -white;
      ok(Math.abs(v! - (0.5 * q + 0.5 * z)) < 1e-12, `ply ${ply}: ${v} vs ${q}, ${z}`);
      if (ply >= first + o.samplePlies!) {
        equal(m, label, `ply ${ply}: no sampling after the opening`);
      } else if (m !== label) sampledOther++;
    } else equal(v, null);
    g.playString(m);
  });
  ok(labelled > 10);
  ok(first >= o.randomPlies && first <= o.randomPlies + o.extraRandomPlies);
  // Over a few games the sampled plies sometimes play another move than the label.
  let other = sampledOther;
  for (let seed = 2; seed <= 4 && other === 0; seed++) {
    const b = playMatchGame(seed, net, "tiny", o);
    other += b.moves.filter((m, ply) => b.labels[ply] !== null && b.labels[ply] !== m).length;
  }
  ok(other > 0, "visit sampling plays other moves than the label");
  // The labels train both sides (an expert's, not the moves played).
  const { games } = prepareGames([a]);
  const samples = samplesOf(games, 0, () => 0);
  equal(samples.length, labelled);
  const won = encodeSamples(games, samples, true);
  equal(won.policy.reduce((x, y) => x + y, 0), samples.length);
});
