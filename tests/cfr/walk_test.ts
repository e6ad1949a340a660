import assert from "node:assert/strict";
import { TreeEvaluator } from "../../src/cfr/evaluate.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { buildTree, CFR_CHANCE, CFR_PLAYER, nodePath } from "../../src/cfr/tree.ts";
import { leducGame } from "../../src/games/leduc.ts";

// TreeEvaluator.nodeValues: the evaluation walk started at any node, reporting player nodes.

const game = leducGame({ isomorphic: true });
const tree = buildTree(game);
const solver = new CfrSolver(tree, game);
solver.run(50);
const policy = solver.averagePolicy();
const ev = new TreeEvaluator(tree, game);

Deno.test("walk: nodeValues at the root is rootValues, bit for bit, in both modes", () => {
  for (const p of [0, 1] as const) {
    for (const mode of ["profile", "best-response"] as const) {
      const a = new Float32Array(game.numHands[p]), b = new Float32Array(game.numHands[p]);
      ev.rootValues(p, policy, mode, a);
      ev.nodeValues(0, p, game.initialWeights((1 - p) as 0 | 1), policy, mode, b);
      assert.deepEqual(b, a);
    }
  }
});

Deno.test("walk: each reported node equals the walk started there with the reported reach", () => {
  for (const p of [0, 1] as const) {
    const seen = new Map<number, { values: Float32Array; opp: Float32Array }>();
    const out = new Float32Array(game.numHands[p]);
    ev.nodeValues(0, p, game.initialWeights((1 - p) as 0 | 1), policy, "profile", out, {
      onPlayerNode: (n, values, opp) => seen.set(n, { values: values.slice(), opp: opp.slice() }),
    });
    // Every player node above the first chance nodes, and none below.
    let first = 0;
    for (let n = 0; n < tree.size; n++) {
      let below = false;
      for (let m = tree.parent[n]; m >= 0; m = tree.parent[m]) {
        if (tree.kind[m] === CFR_CHANCE) below = true;
      }
      if (tree.kind[n] === CFR_PLAYER && !below) first++, assert.ok(seen.has(n), `node ${n}`);
      if (below) assert.ok(!seen.has(n), `node ${n} is below a chance node`);
    }
    assert.equal(seen.size, first);
    for (const [n, s] of seen) {
      const again = new Float32Array(game.numHands[p]);
      ev.nodeValues(n, p, s.opp, policy, "profile", again);
      assert.deepEqual(again, s.values, `[${nodePath(tree, n)}]`);
    }
  }
});

Deno.test("walk: a node below an isomorphic card counts the card it stands for", () => {
  // Below a chance node, the values of a board card's subtree enter the chance node's value with
  // the weights of the card and its isomorph; the chance node's value is the weighted sum.
  const chance = tree.kind.indexOf(CFR_CHANCE);
  assert.ok(chance > 0);
  assert.ok(tree.isoStart[tree.size] > 0, "the tree has isomorphic outcomes");
  const p = 0, opp = game.initialWeights(1);
  const whole = new Float32Array(game.numHands[p]);
  ev.nodeValues(chance, p, opp, policy, "profile", whole);
  const sum = new Float32Array(game.numHands[p]);
  const first = tree.firstChild[chance];
  const isos = tree.isoStart[first + tree.numChildren[chance]] - tree.isoStart[first];
  assert.ok(isos > 0, "this chance node has isomorphic outcomes");
  for (let c = first; c < first + tree.numChildren[chance]; c++) {
    const r = opp.slice();
    for (let i = tree.blockedStart[1][c]; i < tree.blockedStart[1][c + 1]; i++) {
      r[tree.blockedHands[1][i]] = 0;
    }
    const v = new Float32Array(game.numHands[p]);
    ev.nodeValues(c, p, r, policy, "profile", v);
    for (let i = tree.blockedStart[0][c]; i < tree.blockedStart[0][c + 1]; i++) {
      v[tree.blockedHands[0][i]] = 0;
    }
    for (let h = 0; h < v.length; h++) sum[h] += tree.chanceWeight[c] * v[h];
    for (let k = tree.isoStart[c]; k < tree.isoStart[c + 1]; k++) {
      const perm = tree.permutations[tree.isoPerm[0][k]];
      for (let h = 0; h < v.length; h++) sum[h] += tree.isoWeight[k] * v[perm[h]];
    }
  }
  for (let h = 0; h < sum.length; h++) assert.ok(Math.abs(sum[h] - whole[h]) < 1e-6, `hand ${h}`);
});
