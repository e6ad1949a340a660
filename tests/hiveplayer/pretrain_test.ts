import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { playEngineGame } from "../../src/hiveplayer/engine_games.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { decodeHiveModel, encodeHiveModel } from "../../src/nn/model_file.ts";
import {
  encodeSamples,
  engineValues,
  markTactical,
  mixEngineValues,
  oversampleTactical,
  prepareGames,
  splitByGame,
  uniformMetrics,
} from "../../src/hiveplayer/pretrain.ts";
import { runPretrain } from "../../src/hiveplayer/pretrain_run.ts";
import { initWeights } from "../../src/nn/params.ts";
import { searchBestMove } from "../../src/uhp/alphabeta.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";
import { ENGINE_GAME_OPTS, engineGames, engineStore, tinyRun } from "../helpers/pretrain_runs.ts";

const OPTS = ENGINE_GAME_OPTS;
const games = engineGames;

Deno.test("hive-games: engine games replay, are labelled, and are seeded", () => {
  const a = games(3), b = games(3);
  deepEqual(a, b);
  for (const g of a) {
    equal(g.source, "engine:kibitz-alphabeta-d1");
    equal(g.result, "Unfinished");
    equal(g.moves.length, 10);
    const h = new HiveGame(g.gameType);
    for (const m of g.moves) h.playString(m);
  }
  ok(new Set(a.map((g) => g.id)).size === 3);
});

Deno.test("pretrain: split by game, targets are the moves played, uniform figures exact", () => {
  const { games: pg } = prepareGames(games(6));
  const { train, val } = splitByGame(pg, 0.34, 3);
  equal(val.length, 2);
  equal(train.length, 4);
  const ids = new Set(train.map((g) => g.id));
  for (const g of val) ok(!ids.has(g.id));
  // Sample ply 3 of game 0 under every symmetry: one legal target, as many legal moves each time.
  const counts = new Set<number>();
  for (let s = 0; s < 12; s++) {
    const b = encodeSamples(pg, [{ game: 0, ply: 3, symmetry: s }]);
    equal(b.policy.reduce((a, v) => a + v, 0), 1);
    equal(b.mask[b.targets[0]], 1);
    counts.add(b.legalCounts[0]);
  }
  equal(counts.size, 1);
  const u = uniformMetrics([2, 4], [1, 0]);
  equal(u.policyLoss, (Math.log(2) + Math.log(4)) / 2);
  equal(u.top1, (0.5 + 0.25) / 2);
  equal(u.top5, 1);
  equal(u.valueMse, 0.5);
});

Deno.test("pretrain: a tiny run end to end writes a checkpoint, a model file and its log", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = `${dir}/games.jsonl`;
    await Deno.writeTextFile(store, games(4).map((g) => JSON.stringify(g)).join("\n") + "\n");
    const reports = await runPretrain(
      tinyRun(store, `${dir}/net.kbnn`, {
        log: `${dir}/log.jsonl`,
        model: `${dir}/net.kbhz`,
        epochs: 1,
      }),
    );
    equal(reports.length, 1);
    equal(reports[0].trainPositions, 8);
    equal(reports[0].val.positions, 4);
    ok(reports[0].uniform.top1 > 0 && reports[0].uniform.top1 < 1);
    const log = (await Deno.readTextFile(`${dir}/log.jsonl`)).trim().split("\n");
    equal(log.length, 1);
    const m = decodeHiveModel(await Deno.readFile(`${dir}/net.kbhz`));
    equal(m.meta.name, "test-net");
    equal(m.weights.config.blocks, HIVE_NETS.tiny.blocks);
    const ck = decodeHiveModel(await Deno.readFile(`${dir}/net.kbnn`));
    equal(ck.weights.config.filters, HIVE_NETS.tiny.filters);
    // Validation games from their own store (two more games, 10 plies each), fast CPU ops.
    const valStore = `${dir}/val.jsonl`;
    await Deno.writeTextFile(
      valStore,
      games(6).slice(4).map((g) => JSON.stringify(g)).join("\n") + "\n",
    );
    const r2s = await runPretrain(
      tinyRun(store, `${dir}/net2.kbnn`, {
        valStores: [valStore, store], // games also in --store stay training games
        log: `${dir}/log2.jsonl`,
        init: `${dir}/net.kbnn`,
        stopAfter: 1, // one epoch of a three-epoch schedule
        positionsPerEpoch: 4,
        valPositions: 100,
        winnerMovesOnly: true,
        backend: "cpu-fast",
      }),
    );
    equal(r2s.length, 1);
    const r2 = r2s[0];
    ok(r2.lr > 0.005, `lr ${r2.lr}: still high after a third of the schedule`);
    equal(r2.val.positions, 20);
    equal(r2.trainPolicyLoss, 0, "unfinished games have no winner: no policy targets");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("model file: int8 rows round-trip within half a step per row, small tensors exact", () => {
  const cfg = {
    blocks: 1,
    filters: 8,
    planes: 4,
    height: 8,
    width: 8,
    moves: 300,
    valueHidden: 16,
  };
  const w = initWeights(cfg, 5);
  const back = decodeHiveModel(encodeHiveModel(w, { name: "x" }));
  for (const s of w.specs) {
    const a = w.tensors.get(s.name)!.data, b = back.weights.tensors.get(s.name)!.data;
    if (a.length < 4096) {
      deepEqual(b, a, s.name);
      continue;
    }
    const rows = s.shape[0], cols = a.length / rows;
    for (let r = 0; r < rows; r++) {
      let max = 0;
      for (let c = 0; c < cols; c++) max = Math.max(max, Math.abs(a[r * cols + c]));
      for (let c = 0; c < cols; c++) {
        ok(Math.abs(a[r * cols + c] - b[r * cols + c]) <= max / 254 + 1e-7, s.name);
      }
    }
  }
  equal(back.weights.tensors.get("policy.fc.w")!.shape[0], 300);
});

Deno.test("pretrain: winner-moves targets keep only the winner's moves, every value", () => {
  // A made-up decided game: the engine game's moves with White as the winner.
  const [g] = prepareGames(games(1)).games;
  const won = { ...g, values: g.moves.map((_, ply) => (ply % 2 === 0 ? 1 : -1)) };
  const samples = [0, 1, 2, 3].map((ply) => ({ game: 0, ply, symmetry: 0 }));
  const all = encodeSamples([won], samples), winner = encodeSamples([won], samples, true);
  const M = all.policy.length / 4;
  for (let i = 0; i < 4; i++) {
    const row = (p: Float32Array) => p.subarray(i * M, (i + 1) * M).reduce((a, v) => a + v, 0);
    equal(row(all.policy), 1);
    equal(row(winner.policy), i % 2 === 0 ? 1 : 0, `ply ${i}`);
    equal(winner.value[i], all.value[i]);
  }
  deepEqual(winner.targets, all.targets);
});

Deno.test("pretrain: engine values are the squashed alpha-beta scores, mixed into the value targets only", () => {
  const [pg] =
    prepareGames([{ ...games(1)[0], moves: WON_ENGINE_GAME, result: "WhiteWins" }]).games;
  equal(pg.moves.length, 29);
  const e = engineValues(pg, 1, 200);
  equal(e.length, 29);
  for (const v of e) ok(v >= -1 && v <= 1);
  equal(e[28], 1, "White to move with a win in one: a found win");
  // Ply 10 from the search itself (not a found win there).
  const g = new HiveGame("Base+MLP");
  for (const m of WON_ENGINE_GAME.slice(0, 10)) g.playString(m);
  const s = searchBestMove(g, { depth: 1 }).score;
  ok(Math.abs(s) < 1000);
  equal(e[10], Math.tanh(s / 200));
  mixEngineValues([pg], { lambda: 0.25, depth: 1, scale: 200 });
  const samples = [10, 11, 28].map((ply) => ({ game: 0, ply, symmetry: 5 }));
  const b = encodeSamples([pg], samples, true);
  [10, 11, 28].forEach((ply, i) => {
    const want = 0.25 * e[ply] + 0.75 * pg.values[ply];
    ok(Math.abs(b.value[i] - want) < 1e-6, `ply ${ply}: ${b.value[i]} vs ${want}`);
  });
  // Winner-move policy targets still follow the result (White, even plies, won).
  const M = b.policy.length / 3;
  const row = (i: number) => b.policy.subarray(i * M, (i + 1) * M).reduce((a, v) => a + v, 0);
  deepEqual([row(0), row(1), row(2)], [1, 0, 1]);
});

Deno.test("hive-games: --other-random games, the engine against seeded random moves", () => {
  const o = { ...OPTS, randomPlies: 2, maxPlies: 16, otherRandom: true };
  const a = playEngineGame(3, o), b = playEngineGame(3, o);
  deepEqual(a, b);
  equal(a.white, "kibitz-random", "odd seeds: the other side is White");
  equal(a.black, "kibitz-alphabeta-d1");
  equal(playEngineGame(4, o).black, "kibitz-random");
  // The engine side's moves are its depth-1 choices; the random side's are not searched.
  const g = new HiveGame(a.gameType);
  a.moves.forEach((m, ply) => {
    if (ply >= 2 && g.colorToMove === 1 && !g.isOver()) {
      equal(g.moveString(searchBestMove(g, { depth: 1 }).move), m, `ply ${ply}`);
    }
    g.playString(m);
  });
});

Deno.test("pretrain: markTactical marks the winning move and new five-neighbour threats; oversampling copies them", () => {
  const [pg] =
    prepareGames([{ ...games(1)[0], moves: WON_ENGINE_GAME, result: "WhiteWins" }]).games;
  const n = markTactical([pg]);
  equal(pg.tactical![28], 1, "the last move wins");
  // Oracle by replay: a ply is marked iff its move ends the game for the mover or brings the
  // enemy queen from fewer than five neighbours to five.
  const g = new HiveGame("Base+MLP");
  let want = 0;
  for (let ply = 0; ply < pg.moves.length; ply++) {
    const me = g.turn & 1, before = g.queenNeighbors(1 - me);
    g.play(pg.moves[ply]);
    const hit = g.isOver()
      ? g.outcomeForSideToMove() === -1
      : before < 5 && g.queenNeighbors(1 - me) === 5;
    equal(pg.tactical![ply], hit ? 1 : 0, `ply ${ply}`);
    if (hit) want++;
  }
  equal(n, want);
  ok(n >= 1 && n < pg.moves.length);
  const samples = pg.moves.map((_, ply) => ({ game: 0, ply, symmetry: 0 }));
  const over = oversampleTactical([pg], samples, 4);
  equal(over.length, samples.length + 3 * n);
  equal(over.filter((s) => s.ply === 28).length, 4);
  equal(over.filter((s) => s.ply === 0).length, pg.tactical![0] ? 4 : 1);
  equal(oversampleTactical([pg], samples, 1), samples);
});

Deno.test("pretrain: a resumed run ends where an uninterrupted one does; other settings are refused", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = await engineStore(dir);
    const said: string[] = [];
    const run = (
      out: string,
      extra: { stopAfter?: number; resume?: boolean; seed?: number; shouldStop?: () => boolean },
    ) => runPretrain(tinyRun(store, out, { oversample: 2, say: (t) => said.push(t), ...extra }));
    const whole = await run(`${dir}/whole.kbnn`, {});
    equal(whole.length, 3);
    const first = await run(`${dir}/parts.kbnn`, { stopAfter: 1 });
    equal(first.length, 1);
    // Stopped (Ctrl-C) during epoch 2: the run ends once that epoch's checkpoint is saved.
    const second = await run(`${dir}/parts.kbnn`, { resume: true, shouldStop: () => true });
    deepEqual(second.map((r) => r.epoch), [2]);
    const rest = await run(`${dir}/parts.kbnn`, { resume: true });
    deepEqual(rest.map((r) => r.epoch), [3]);
    ok(said.some((t) => /resuming .*parts\.kbnn after epoch 1 of 3/.test(t)));
    ok(said.some((t) => /resuming .*parts\.kbnn after epoch 2 of 3/.test(t)));
    const strip = (r: { seconds: number }) => ({ ...r, seconds: 0 });
    deepEqual([...first, ...second, ...rest].map(strip), whole.map(strip));
    const w = (p: string) => decodeHiveModel(Deno.readFileSync(p)).weights.tensors;
    const [a, b] = [w(`${dir}/whole.kbnn`), w(`${dir}/parts.kbnn`)];
    for (const [name, t] of a) deepEqual(b.get(name)!.data, t.data, name);
    // Nothing left to resume; other settings and a missing checkpoint are clear errors.
    deepEqual(await run(`${dir}/parts.kbnn`, { resume: true }), []);
    ok(said.at(-1)!.includes("trained through epoch 3: nothing to resume"));
    await rejects(run(`${dir}/parts.kbnn`, { resume: true, seed: 2 }), /other games or settings/);
    await rejects(run(`${dir}/none.kbnn`, { resume: true }), /no checkpoint at .*none\.kbnn/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
