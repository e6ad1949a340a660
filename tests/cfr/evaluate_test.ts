import assert from "node:assert/strict";
import { buildTree } from "../../src/cfr/tree.ts";
import {
  dealMass,
  policyExploitability,
  policyHandEquity,
  policyHandValues,
  policyValue,
  TreeEvaluator,
  uniformPolicy,
} from "../../src/cfr/evaluate.ts";
import { KUHN_UNIFORM_NASHCONV, kuhnGame } from "../../src/games/kuhn.ts";
import { LEDUC_UNIFORM_NASHCONV, leducGame } from "../../src/games/leduc.ts";

Deno.test("NashConv of the uniform strategy equals the published values (best response check)", () => {
  for (
    const [g, want] of [[kuhnGame(), KUHN_UNIFORM_NASHCONV], [
      leducGame(),
      LEDUC_UNIFORM_NASHCONV,
    ]] as const
  ) {
    const t = buildTree(g);
    const e = policyExploitability(new TreeEvaluator(t, g), uniformPolicy(t));
    assert.ok(Math.abs(e.nashConv - want) < 1e-6, `${g.name}: ${e.nashConv} vs ${want}`);
    assert.ok(Math.abs(e.ev[0] + e.ev[1]) < 1e-6, "zero-sum");
    assert.ok(Math.abs(e.chips - want / 2) < 1e-6);
    assert.ok(Math.abs(e.percent - (100 * want) / 2 / g.startingPot) < 1e-4);
  }
});

Deno.test("kuhn uniform: exact per-player values", () => {
  const g = kuhnGame();
  const t = buildTree(g);
  const ev = new TreeEvaluator(t, g);
  const u = uniformPolicy(t);
  assert.equal(dealMass(g), 6);
  // Uniform play: player 1 wins 1/8 per deal; best responses 1/2 (derived by hand) and 5/12.
  assert.ok(Math.abs(policyValue(ev, 0, u, "profile") - 1 / 8) < 1e-7);
  assert.ok(Math.abs(policyValue(ev, 0, u, "best-response") - 1 / 2) < 1e-7);
  assert.ok(Math.abs(policyValue(ev, 1, u, "best-response") - 5 / 12) < 1e-7);
  // Uniform play is worth 1/8 + E[showdown sign | hand] to each hand of player 1: J -7/8, Q 1/8, K 9/8.
  const hv = policyHandValues(ev, 0, u);
  [-7 / 8, 1 / 8, 9 / 8].forEach((want, h) =>
    assert.ok(Math.abs(hv[h] - want) < 1e-6, `hand ${h}`)
  );
});

Deno.test("kuhn uniform: per-hand equity (pot share) of player 1 is 1/4 + 5/8 P(win)", () => {
  // Uniform play: player 2 folds to a bet 1/4 of the time, player 1 folds 1/8, showdown 5/8.
  const g = kuhnGame();
  const t = buildTree(g);
  const eq = policyHandEquity(new TreeEvaluator(t, g), 0, uniformPolicy(t));
  [1 / 4, 9 / 16, 7 / 8].forEach((want, h) =>
    assert.ok(Math.abs(eq[h] - want) < 1e-6, `hand ${h}: ${eq[h]}`)
  );
});

Deno.test("ranges that cannot be dealt together are a clear error", () => {
  const g = kuhnGame();
  const only = (card: number) => Float32Array.from([0, 1, 2], (c) => (c === card ? 1 : 0));
  g.initialWeights = () => only(1); // both players can only hold Q: card removal forbids every deal
  assert.throws(() => dealMass(g), /no pair of hands with positive weight can be dealt together/);
});
