import { equal, ok } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { searchBestMove } from "../../src/uhp/alphabeta.ts";
import { UhpEngine } from "../../src/uhp/engine.ts";
import {
  loadUhpModel,
  MctsPlayer,
  PLAYOUTS_PER_DEPTH,
  PolicyPlayer,
  ReferenceHiveNet,
  SyncHiveNet,
  uniformHiveEvaluator,
  winningMove,
} from "../../src/uhp/mcts_player.ts";
import { initWeights } from "../../src/nn/params.ts";

// An engine game (hive-games, seed 1000 batch) that White wins with its 29th ply, `wA2 /bG1`.
const WON = [
  "wP",
  "bL \\wP",
  "wS1 wP-",
  "bA1 -bL",
  "wS2 wS1/",
  "bS1 \\bA1",
  "wQ /wP",
  "bQ /bA1",
  "wA1 wS1\\",
  "bB1 bL/",
  "wA1 -bQ",
  "bS1 -wA1",
  "wA2 wS1\\",
  "bG1 \\bA1",
  "wA2 wA1\\",
  "bG2 \\bG1",
  "wS2 bB1/",
  "bA2 \\bG2",
  "wA2 \\bA2",
  "bS2 \\bS1",
  "wA3 \\wS2",
  "bS2 bS1\\",
  "wA3 wA1\\",
  "bS2 bQ\\",
  "wQ bS2\\",
  "bS1 wA3\\",
  "wS1 bA1\\",
  "bS1 wQ-",
  "wA2 /bG1",
];
const BEFORE_WIN = WON.slice(0, -1);

function position(moves: string[]): HiveGame {
  const g = new HiveGame("Base+MLP");
  for (const m of moves) g.playString(m);
  return g;
}

Deno.test("mcts player: exact results from the position find the winning move", () => {
  const g = position(BEFORE_WIN);
  const p = new MctsPlayer(uniformHiveEvaluator);
  const r = p.search(g, 3000);
  g.play(r.move);
  equal(g.state, 3, `${g.moveString(r.move)} wins for White`);
  g.undo();
  ok(r.value > 0.5, `root value ${r.value}`);
  equal(g.turn, BEFORE_WIN.length); // the caller's game is untouched
});

Deno.test("mcts player: depth N runs N x 100 playouts; a time limit stops the search", () => {
  const g = position(BEFORE_WIN.slice(0, 6));
  const p = new MctsPlayer(uniformHiveEvaluator);
  p.bestMove(g, { depth: 2 });
  equal(p.last!.playouts, 2 * PLAYOUTS_PER_DEPTH);
  p.bestMove(g, { timeMs: 200 });
  // Playouts with the uniform stand-in take well under a millisecond: the limit is what stopped it.
  ok(p.last!.playouts >= 2 && p.last!.ms < 200, `${p.last!.playouts} in ${p.last!.ms} ms`);
  ok(g.isValid(p.last!.move));
});

Deno.test("uhp: a loaded model answers bestmove with MCTS, info names it, UseModel 0 is alpha-beta", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/m.kbhz`;
    await Deno.writeFile(
      path,
      encodeHiveModel(initWeights(HIVE_NETS.tiny, 3), { name: "testnet" }),
    );
    const model = await loadUhpModel(path);
    const e = new UhpEngine(undefined, model);
    ok(/^id Kibitz .*model testnet 1x4/.test(e.handle("info")));
    ok(/UseModel;int;1;1;0;1/.test(e.handle("options")));
    e.handle("newgame Base+MLP;InProgress;White[2];wS1;bS1 -wS1");
    const reply = e.handle("bestmove time 00:00:01").split("\n");
    equal(reply[1], "ok");
    ok(e.game!.isValid(e.game!.parseMove(reply[0])), reply[0]);
    ok(model.mcts.last!.playouts >= 1);
    // Policy-only play picks one legal move from one evaluation.
    const pol = new PolicyPlayer(model.mcts.net);
    ok(e.game!.isValid(pol.bestMove(e.game!)));
    e.handle("options set UseModel 0");
    const ab = e.handle("bestmove depth 1").split("\n")[0];
    equal(ab, e.game!.moveString(searchBestMove(e.game!, { depth: 1 }).move));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SyncHiveNet (fast path) gives the reference pass's priors and value on Hive positions", () => {
  const w = initWeights(HIVE_NETS.tiny, 9);
  // Non-trivial batch-norm statistics, so that the folding is exercised.
  for (const [name, t] of w.tensors) {
    if (name.endsWith(".mean")) t.data.forEach((_, i) => t.data[i] = 0.1 * ((i % 5) - 2));
    if (name.endsWith(".var")) t.data.forEach((_, i) => t.data[i] = 0.5 + 0.25 * (i % 3));
  }
  const fast = new SyncHiveNet(w), ref = new ReferenceHiveNet(w);
  const g = new HiveGame("Base+MLP");
  for (const m of WON.slice(0, 12)) {
    const legal = g.validMoves();
    const a = ref.evaluate(g, legal), b = fast.evaluate(g, legal);
    ok(Math.abs(a.value - b.value) < 1e-5, `value ${a.value} vs ${b.value}`);
    for (let i = 0; i < legal.length; i++) {
      ok(
        Math.abs(a.priors[i] - b.priors[i]) < 1e-5,
        `prior ${i}: ${a.priors[i]} vs ${b.priors[i]}`,
      );
    }
    g.playString(m);
  }
  equal(fast.evaluations, 12);
});

Deno.test("mcts player: the win check plays a win in one at once and sees the reply that loses", () => {
  const g = position(BEFORE_WIN);
  const win = winningMove(g, g.validMoves());
  ok(win !== null);
  g.play(win!);
  equal(g.state, 3, "the move found wins for White");
  g.undo();
  equal(
    winningMove(position(BEFORE_WIN.slice(0, 10)), position(BEFORE_WIN.slice(0, 10)).validMoves()),
    null,
  );
  // One playout is enough with the check (the root is proven when it is expanded).
  const p = new MctsPlayer(uniformHiveEvaluator);
  const r = p.search(g, 1000);
  equal(r.playouts, 1, "a proven root ends the search");
  g.play(r.move);
  equal(g.state, 3);
  g.undo();
  // Black to move one ply earlier: the search must not allow White's win when Black can stop it;
  // every Black move that allows it is proven lost in two plies, so its value is -1.
  const b = position(BEFORE_WIN.slice(0, -1));
  const rb = new MctsPlayer(uniformHiveEvaluator).search(b, 400);
  b.play(rb.move);
  const after = winningMove(b, b.validMoves());
  ok(after === null || rb.value <= -0.99, `Black's ${rb.move} allows a win, value ${rb.value}`);
});
