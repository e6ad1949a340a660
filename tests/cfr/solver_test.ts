import assert from "node:assert/strict";
import { buildTree } from "../../src/cfr/tree.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { CFR_ALGORITHMS } from "../../src/cfr/schedule.ts";
import { KUHN_VALUE, kuhnGame } from "../../src/games/kuhn.ts";
import { LEDUC_VALUE, leducGame } from "../../src/games/leduc.ts";

// Tolerances: measured f32 results at these iteration counts were within 7.5e-6 of the exact values,
// with exploitability <= 1.7e-4 (Kuhn) and <= 2.0e-4 (Leduc, 1.5e-4 at 2000 iterations); the bounds
// leave 3-10x headroom for platform differences in f32 rounding.

Deno.test("every algorithm reaches the Kuhn value -1/18 (f32, 1000 iterations)", () => {
  const g = kuhnGame(), t = buildTree(g);
  for (const algorithm of CFR_ALGORITHMS) {
    const s = new CfrSolver(t, g, { algorithm });
    s.run(1000);
    const e = s.exploitability();
    assert.ok(Math.abs(e.ev[0] - KUHN_VALUE) < 5e-5, `${algorithm}: ev ${e.ev[0]}`);
    assert.ok(Math.abs(e.ev[0] + e.ev[1]) < 1e-6, `${algorithm}: zero-sum`);
    assert.ok(e.chips < 1e-3, `${algorithm}: exploitability ${e.chips}`);
  }
});

Deno.test("every algorithm reaches the Leduc value -0.085606424078 (f32, 2000 iterations)", () => {
  const g = leducGame(), t = buildTree(g);
  for (const algorithm of CFR_ALGORITHMS) {
    const s = new CfrSolver(t, g, { algorithm });
    s.run(2000);
    const e = s.exploitability();
    assert.ok(Math.abs(e.ev[0] - LEDUC_VALUE) < 3e-5, `${algorithm}: ev ${e.ev[0]}`);
    assert.ok(e.chips < 5e-4, `${algorithm}: exploitability ${e.chips}`);
  }
});

Deno.test("paper DCFR schedule and reach-weighted averaging also converge on Leduc", () => {
  const g = leducGame(), t = buildTree(g);
  for (const opts of [{ schedule: "paper" as const }, { reachWeightedAverage: true }]) {
    const s = new CfrSolver(t, g, opts);
    s.run(1000);
    const e = s.exploitability();
    assert.ok(Math.abs(e.ev[0] - LEDUC_VALUE) < 1e-4, `${JSON.stringify(opts)}: ev ${e.ev[0]}`);
    assert.ok(e.chips < 2e-3, `${JSON.stringify(opts)}: exploitability ${e.chips}`);
  }
});

Deno.test("progress callback, strategies sum to one, per-hand EVs average to the EV", () => {
  const g = leducGame(), t = buildTree(g);
  const s = new CfrSolver(t, g);
  const seen: number[] = [];
  s.run(50, (it) => seen.push(it), 20);
  assert.deepEqual(seen, [20, 40, 50]);
  assert.equal(s.iteration, 50);
  for (const node of [0, t.blockNode[t.blockNode.length - 1]]) {
    const A = t.numChildren[node], H = 6;
    for (const sig of [s.averageStrategy(node), s.currentStrategy(node)]) {
      for (let h = 0; h < H; h++) {
        let sum = 0;
        for (let a = 0; a < A; a++) sum += sig[a * H + h];
        assert.ok(Math.abs(sum - 1) < 1e-5);
      }
    }
  }
  const e = s.exploitability();
  for (const p of [0, 1] as const) {
    const hv = s.handValues(p);
    const mean = hv.reduce((x, y) => x + y, 0) / hv.length; // uniform deal: every card equally likely
    assert.ok(Math.abs(mean - e.ev[p]) < 1e-5, `player ${p}: ${mean} vs ${e.ev[p]}`);
  }
  assert.throws(() => s.averageStrategy(t.size - 1), /is not a player node/);
});

Deno.test("first DCFR iteration on Kuhn: root regrets equal the hand-computed instant regrets", () => {
  // Against uniform play, player 1's check is worth 0.75 chips less than its bet per opponent card
  // for every card (J: bet -1, check -2.5; Q: 1 vs -0.5; K: 3 vs 1.5, summed over 2 opponent cards;
  // the node value is their mean, so regrets are -0.75 / +0.75). alpha_0 = 0, gamma_0 = 0.
  const g = kuhnGame(), t = buildTree(g);
  const s = new CfrSolver(t, g);
  s.step();
  const regrets = Array.from(s.regrets.f32!.subarray(s.regrets.offsets[0], s.regrets.offsets[1]));
  assert.deepEqual(regrets, [-0.75, -0.75, -0.75, 0.75, 0.75, 0.75]);
  assert.deepEqual(Array.from(s.averageStrategy(0)), [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
  assert.deepEqual(Array.from(s.currentStrategy(0)), [0, 0, 0, 1, 1, 1]);
});
