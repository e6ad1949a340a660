import assert from "node:assert/strict";
import { buildTree, findNode } from "../../src/cfr/tree.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { kuhnGame } from "../../src/games/kuhn.ts";

const game = kuhnGame();
const tree = buildTree(game);
const ROOT = 0, FACING_BET = findNode(tree, ["b"]);
const J = 0, Q = 1, K = 2, H = 3;
/** Probability that player 2 calls a bet with `card` (actions at "b" are f, c). */
const callProb = (s: CfrSolver, card: number) => s.averageStrategy(FACING_BET)[1 * H + card];

Deno.test("kuhn equilibrium: facing a bet, player 2 calls with Q one time in three", () => {
  const s = new CfrSolver(tree, game);
  s.run(2000);
  assert.ok(Math.abs(callProb(s, Q) - 1 / 3) < 0.02, `Q calls ${callProb(s, Q)}`);
  assert.ok(callProb(s, K) > 0.99 && callProb(s, J) < 0.01);
});

Deno.test("locking player 1 to always bet makes player 2 call with Q and K and fold J", () => {
  // Against a bet from every card, Q wins 2 against J and loses 2 against K: calling is worth 0,
  // folding -1, so the best response calls with Q (and K) and folds J.
  const always = Float32Array.from([0, 0, 0, 1, 1, 1]); // row k, then row b
  const s = new CfrSolver(tree, game, { lockedNodes: [{ node: ROOT, strategy: always }] });
  s.run(1000);
  assert.deepEqual(Array.from(s.averageStrategy(ROOT)), Array.from(always));
  assert.deepEqual(Array.from(s.currentStrategy(ROOT)), Array.from(always));
  assert.ok(callProb(s, Q) > 0.99, `Q calls ${callProb(s, Q)}`);
  assert.ok(callProb(s, K) > 0.99 && callProb(s, J) < 0.01);
  // Player 2's EV rises: player 1's fixed strategy is exploitable.
  const e = s.exploitability();
  assert.ok(e.ev[1] > 1 / 18 + 0.05, `player 2 EV ${e.ev[1]}`);
});

Deno.test("a per-hand lock fixes only that hand: J always bluffs, Q and K stay free", () => {
  // Locking J to bet makes bets at least half bluffs, so Q calls (value >= 0 > -1 for folding).
  const lock = Float32Array.from([0, NaN, NaN, 1, NaN, NaN]);
  const s = new CfrSolver(tree, game, { lockedNodes: [{ node: ROOT, strategy: lock }] });
  s.run(1000);
  const root = s.averageStrategy(ROOT);
  assert.deepEqual([root[J], root[H + J]], [0, 1]);
  assert.ok(root[Q] > 0.9, `Q checks ${root[Q]}: never betting Q is still optimal for a free hand`);
  assert.ok(callProb(s, Q) > 0.9, `Q calls ${callProb(s, Q)}`);
});

Deno.test("bad locks are rejected", () => {
  assert.throws(
    () =>
      new CfrSolver(tree, game, { lockedNodes: [{ node: ROOT, strategy: new Float32Array(5) }] }),
    /locked node 0 needs 6 values/,
  );
  const leaf = findNode(tree, ["k", "k"]);
  assert.throws(
    () =>
      new CfrSolver(tree, game, { lockedNodes: [{ node: leaf, strategy: new Float32Array(6) }] }),
    /is not a player node/,
  );
});

Deno.test("locks hold under pruning: a locked hand's actions are never skipped", () => {
  const always = Float32Array.from([0, 0, 0, 1, 1, 1]);
  const s = new CfrSolver(tree, game, {
    pruning: 0.5,
    lockedNodes: [{ node: ROOT, strategy: always }],
  });
  s.run(500);
  assert.deepEqual(Array.from(s.averageStrategy(ROOT)), Array.from(always));
  assert.ok(callProb(s, Q) > 0.99, `Q calls ${callProb(s, Q)}`);
});
