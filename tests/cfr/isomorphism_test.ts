import assert from "node:assert/strict";
import { buildTree, CFR_PLAYER, findNode, nodePath } from "../../src/cfr/tree.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { policyExploitability, TreeEvaluator, uniformPolicy } from "../../src/cfr/evaluate.ts";
import { LEDUC_UNIFORM_NASHCONV, leducGame } from "../../src/games/leduc.ts";

Deno.test("suit isomorphism: Leduc with 3 board subtrees instead of 6 solves the same game", () => {
  const isoGame = leducGame({ isomorphic: true }), fullGame = leducGame();
  const iso = buildTree(isoGame), full = buildTree(fullGame);
  assert.equal(iso.blockNode.length, 6 + 5 * 3 * 6);
  assert.equal(iso.permutations.length, 1);
  assert.deepEqual(Array.from(iso.permutations[0]), [1, 0, 3, 2, 5, 4]);

  const u = policyExploitability(new TreeEvaluator(iso, isoGame), uniformPolicy(iso));
  assert.ok(Math.abs(u.nashConv - LEDUC_UNIFORM_NASHCONV) < 1e-6, `uniform NashConv ${u.nashConv}`);

  const a = new CfrSolver(iso, isoGame), b = new CfrSolver(full, fullGame);
  a.run(300);
  b.run(300);
  const ea = a.exploitability(), eb = b.exploitability();
  assert.ok(Math.abs(ea.chips - eb.chips) < 1e-6, `${ea.chips} vs ${eb.chips}`);
  assert.ok(Math.abs(ea.ev[0] - eb.ev[0]) < 1e-6);

  // The isomorphic solution, spread onto the full tree (Xh boards read the Xs node with suits
  // exchanged), has the same exploitability there: the full tree's best response confirms it.
  const H = 6;
  const spread = (node: number, out: Float32Array) => {
    const path = nodePath(full, node);
    const swapped = path.some((l) => l.length === 2 && l[1] === "h");
    const n = findNode(iso, path.map((l) => (l.length === 2 ? l[0] + "s" : l)));
    const sig = a.averageStrategy(n);
    const A = full.numChildren[node];
    for (let x = 0; x < A; x++) {
      for (let h = 0; h < H; h++) out[x * H + h] = sig[x * H + (swapped ? h ^ 1 : h)];
    }
  };
  assert.equal(full.kind[0], CFR_PLAYER);
  const ef = policyExploitability(new TreeEvaluator(full, fullGame), spread);
  assert.ok(Math.abs(ef.chips - ea.chips) < 1e-6, `${ef.chips} vs ${ea.chips}`);
});
