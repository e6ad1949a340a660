// The batched self-play evaluator with a cells-head network: Hive positions (and their symmetric
// views) get the fast one-position evaluator's priors, GPU-style padding included.
import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { HIVE_NETS, HIVE_SELFPLAY_RULES, HiveAzGame, hiveSpec } from "../../src/alphazero/hive.ts";
import { BatchEvaluator, type BatchInfer } from "../../src/alphazero/evaluator.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { HIVE_CELLS } from "../../src/hive/move_cells.ts";
import { transformGame, transformMove } from "../../src/hive/symmetry.ts";
import type { Game } from "../../src/mcts/game.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { createNet } from "../../src/nn/create.ts";
import type { NetBatch } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { SyncHiveNet } from "../../src/uhp/mcts_player.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";

const TINY_CELLS: NetConfig = { ...HIVE_NETS.tiny, cells: { ...HIVE_CELLS, hidden: 4 } };

function positions(): HiveGame[] {
  const g = new HiveGame("Base+MLP"), out: HiveGame[] = [];
  for (const m of WON_ENGINE_GAME.slice(0, 9)) {
    out.push(g.clone());
    g.playString(m);
  }
  return out;
}

Deno.test("BatchEvaluator, cells net: the fast evaluator's priors, in every symmetric view, padded or not", async () => {
  const w = initWeights(TINY_CELLS, 5);
  const net = await createNet(w, "cpu");
  const seen: NetBatch[] = [];
  // The same CPU net posing as a GPU one, so that batches are padded to 8.
  const padded: BatchInfer = {
    backend: "gpu",
    config: net.config,
    infer: (b) => (seen.push(b), net.infer(b)),
  };
  const fast = new SyncHiveNet(w);
  const spec = hiveSpec(HIVE_SELFPLAY_RULES, false);
  for (const infer of [net, padded]) {
    const ev = new BatchEvaluator(infer, spec, 64);
    const games = positions().map((g, i) => new HiveAzGame(g, HIVE_SELFPLAY_RULES, i % 12));
    const legal = games.map((g) => g.legalMoves());
    const got = await Promise.all(games.map((g, i) => ev.evaluate(g, legal[i])));
    ev.close();
    games.forEach((g, i) => {
      // The oracle: the fast evaluator on the game seen through the same symmetry.
      const view = transformGame(g.game, g.symmetry);
      const want = fast.evaluate(view, legal[i].map((m) => transformMove(m, g.symmetry)));
      ok(Math.abs(got[i].value - want.value) < 1e-4, `value ${got[i].value} vs ${want.value}`);
      want.priors.forEach((p, j) => ok(Math.abs(got[i].priors[j] - p) < 1e-4, `prior ${j}`));
    });
  }
  equal(seen.length, 1);
  equal(seen[0].size, 16, "9 positions padded to a power of two");
  ok(seen[0].moveCells && seen[0].moveCellsWidth);
  net.dispose();
});

Deno.test("BatchEvaluator: an FC net gets no move table; a cells net needs Game.moveCells", async () => {
  const seen: NetBatch[] = [];
  const fc = await createNet(initWeights({ ...HIVE_NETS.tiny }, 5), "cpu");
  const spy: BatchInfer = {
    backend: "cpu",
    config: fc.config,
    infer: (b) => (seen.push(b), fc.infer(b)),
  };
  const spec = hiveSpec(HIVE_SELFPLAY_RULES, false);
  const ev = new BatchEvaluator(spy, spec, 8);
  const g = new HiveAzGame(positions()[4]);
  await ev.evaluate(g, g.legalMoves());
  ev.close();
  deepEqual(Object.keys(seen[0]).sort(), ["mask", "planes", "size"]);
  fc.dispose();
  const cells = await createNet(initWeights(TINY_CELLS, 5), "cpu");
  const ev2 = new BatchEvaluator(cells, spec, 8);
  const bare = Object.assign(Object.create(Object.getPrototypeOf(g)), g) as Game<number>;
  Object.defineProperty(bare, "moveCells", { value: undefined });
  throws(() => ev2.evaluate(bare, g.legalMoves()), /moveCells/);
  ev2.close();
  cells.dispose();
});
