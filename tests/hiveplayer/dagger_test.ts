import { deepEqual, equal, ok } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import {
  DAGGER_DEFAULTS,
  type DaggerOptions,
  isLabelled,
  type LabelledGame,
  learnerChoice,
  playDaggerGame,
  squashScore,
} from "../../src/hiveplayer/dagger.ts";
import { playDaggerGames } from "../../src/hiveplayer/net_games_pool.ts";
import {
  encodeSamples,
  markTactical,
  prepareGames,
  samplesOf,
} from "../../src/hiveplayer/pretrain.ts";
import { runPretrain } from "../../src/hiveplayer/pretrain_run.ts";
import { hiveMoveIndex } from "../../src/hive/encoding.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { initWeights } from "../../src/nn/params.ts";
import { readGameStore, type StoredGame } from "../../src/sgf/store.ts";
import { searchBestMove } from "../../src/uhp/alphabeta.ts";
import { SyncHiveNet } from "../../src/uhp/mcts_player.ts";

const OPTS: DaggerOptions = {
  ...DAGGER_DEFAULTS,
  labelDepth: 1,
  maxPlies: 14,
  randomPlies: 2,
  vsRandom: 0.5,
  beta: 0.3,
};
const weights = initWeights({ ...HIVE_NETS.tiny }, 3);
const net = new SyncHiveNet(weights);

function daggerGames(n: number, o = OPTS): LabelledGame[] {
  return Array.from({ length: n }, (_, i) => playDaggerGame(i + 1, net, "tiny", o));
}

Deno.test("dagger: labels are the expert's legal moves at the learner's positions, seeded", () => {
  const a = daggerGames(4), b = daggerGames(4);
  deepEqual(a, b);
  let labelled = 0, randomSide = 0;
  for (const sg of a) {
    ok(isLabelled(sg));
    equal(sg.source, "dagger:tiny+kibitz-alphabeta-d1");
    equal(sg.labels.length, sg.moves.length);
    equal(sg.labelValues.length, sg.moves.length);
    const vsRandom = sg.white === "kibitz-random" || sg.black === "kibitz-random";
    const g = new HiveGame(sg.gameType);
    sg.moves.forEach((m, ply) => {
      const label = sg.labels[ply], v = sg.labelValues[ply];
      if (ply < OPTS.randomPlies) equal(label, null, "opening plies are not labelled");
      const randomToMove = vsRandom &&
        (g.colorToMove === 0 ? sg.white : sg.black) === "kibitz-random";
      if (randomToMove) {
        equal(label, null, "the random side's positions are not labelled");
        randomSide++;
      }
      if (label !== null) {
        labelled++;
        const code = g.parseMove(label);
        ok(g.isValid(code), `${sg.id} ply ${ply}: label ${label} is legal`);
        // The label is the depth-1 search's move there and the value its squashed score.
        const r = searchBestMove(g, { depth: 1 });
        equal(label, g.moveString(r.move));
        equal(v, squashScore(r.score, OPTS.scale));
        ok(v! >= -1 && v! <= 1);
      } else equal(v, null);
      g.playString(m);
    });
  }
  ok(labelled > 20, `${labelled} labelled positions`);
  ok(randomSide > 0, "some games are against the random player");
});

Deno.test("dagger: labelled games round-trip through a store and train on the labels", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const model = `${dir}/tiny.kbhz`;
    await Deno.writeFile(model, encodeHiveModel(weights, { name: "tiny" }));
    const store = `${dir}/dagger.jsonl`;
    const file = await Deno.open(store, { create: true, write: true });
    const enc = new TextEncoder();
    await playDaggerGames(3, 1, 0, model, OPTS, async (g) => {
      await file.write(enc.encode(JSON.stringify(g) + "\n"));
    });
    file.close();
    const back: StoredGame[] = [];
    for await (const g of readGameStore(store)) back.push(g);
    // The pool on this thread with the model file plays the same games as the evaluator directly.
    deepEqual(back, daggerGames(3));
    const { games: pg, skipped } = prepareGames(back);
    equal(skipped, 0);
    equal(pg.length, 3);
    markTactical(pg); // labelled games are not marked
    for (const p of pg) equal(p.tactical!.reduce((x, y) => x + y, 0), 0);
    const samples = samplesOf(pg, 0, () => 0);
    const nLabels = back.reduce(
      (a, g) => a + (g as LabelledGame).labels.filter((l) => l).length,
      0,
    );
    equal(samples.length, nLabels, "one sample per labelled position");
    // Policy targets are the labels (not the moves played), for every side (winner-moves or not);
    // value targets are the labels' values.
    const b = encodeSamples(pg, samples, true);
    let differ = 0;
    samples.forEach((s, i) => {
      const sg = back[s.game] as LabelledGame, g = new HiveGame(sg.gameType);
      for (let k = 0; k < s.ply; k++) g.playString(sg.moves[k]);
      const t = hiveMoveIndex(g, g.parseMove(sg.labels[s.ply]!));
      equal(b.targets[i], t);
      equal(b.policy[i * (b.policy.length / b.size) + t], 1);
      equal(b.value[i], Math.fround(sg.labelValues[s.ply]!));
      if (sg.labels[s.ply] !== sg.moves[s.ply]) differ++;
    });
    ok(differ > 0, "some labels differ from the moves played");
    // A label that is not legal makes the game unreplayable (skipped, not trained on).
    const bad = structuredClone(back[0]) as LabelledGame;
    const at = bad.labels.findIndex((l) => l !== null);
    bad.labels[at] = "wQ";
    equal(prepareGames([bad]).skipped, 1);
    // --finished-only keeps labelled games stopped at the ply cap; the run trains on them.
    ok(back.some((g) => g.result === "Unfinished"));
    const reports = await runPretrain({
      stores: [store],
      out: `${dir}/net.kbnn`,
      log: `${dir}/log.jsonl`,
      net: { ...HIVE_NETS.tiny },
      netName: "tiny",
      init: model,
      model: null,
      modelName: "tiny-dagger",
      epochs: 1,
      batch: 4,
      positionsPerEpoch: 8,
      valFraction: 0.34,
      valPositions: 4,
      maxGames: 0,
      finishedOnly: true,
      winnerMovesOnly: true,
      lrMax: 0.01,
      lrMin: 0.001,
      augment: true,
      backend: "cpu-fast",
      seed: 1,
      say: () => {},
      step: () => {},
      epoch: () => {},
    });
    equal(reports.length, 1);
    equal(reports[0].trainPositions, 8);
    equal(reports[0].val.positions, 4);
    // Unfinished games have no winner: without the labels --winner-moves would leave no target.
    ok(reports[0].trainPolicyLoss > 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dagger: learner choice is the top prior when greedy, a tempered sample otherwise", () => {
  const p = new Float32Array([0.1, 0.6, 0.3]);
  equal(learnerChoice(p, true, 1, 0.99), 1);
  equal(learnerChoice(p, false, 1, 0.05), 0);
  equal(learnerChoice(p, false, 1, 0.5), 1);
  equal(learnerChoice(p, false, 1, 0.95), 2);
  // Temperature 0.5 squares the priors: weights 0.01, 0.36, 0.09 (sum 0.46).
  equal(learnerChoice(p, false, 0.5, 0.02), 0);
  equal(learnerChoice(p, false, 0.5, 0.8), 1);
  equal(learnerChoice(p, false, 0.5, 0.9), 2);
  equal(squashScore(2_000_000, 200), 1);
  equal(squashScore(-999_999, 200), -1);
  equal(squashScore(100, 200), Math.tanh(0.5));
});
