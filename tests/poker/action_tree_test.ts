import assert from "node:assert/strict";
import {
  ACT_CHANCE,
  actionLabel,
  type ActionTree,
  buildActionTree,
  NODE_CHANCE,
  NODE_FOLD,
  NODE_IP,
  NODE_OOP,
  NODE_SHOWDOWN,
  type TreeConfig,
} from "../../src/poker/action_tree.ts";
import { parseBetSizeList, parseBetSizes } from "../../src/poker/bet_size.ts";

function config(over: Partial<TreeConfig>, bet = "60%, e, a", raise = "2.5x"): TreeConfig {
  const s = parseBetSizes(bet, raise);
  return {
    startingStreet: 1,
    startingPot: 200,
    effectiveStack: 900,
    rakeRate: 0,
    rakeCap: 0,
    betSizes: [[s, s], [s, s], [s, s]],
    donkSizes: [null, null],
    addAllinThreshold: 1.5,
    forceAllinThreshold: 0.15,
    mergingThreshold: 0.1,
    ...over,
  };
}

function children(t: ActionTree, n: number): number[] {
  return Array.from({ length: t.numChildren[n] }, (_, i) => t.firstChild[n] + i);
}
function labels(t: ActionTree, n: number): string[] {
  return children(t, n).map((c) => actionLabel(t, c));
}
function follow(t: ActionTree, path: string[]): number {
  let n = 0;
  for (const step of path) {
    while (t.kind[n] === NODE_CHANCE) n = t.firstChild[n];
    const c = children(t, n).find((c) => actionLabel(t, c) === step);
    assert.ok(c !== undefined, `no ${step} after ${labels(t, n)}`);
    n = c;
  }
  while (t.kind[n] === NODE_CHANCE) n = t.firstChild[n];
  return n;
}

Deno.test("action tree: T1 root actions match the reference figures", () => {
  const t = buildActionTree(config({ donkSizes: [null, parseBetSizeList("50%", false, "d")] }));
  // Geometric 2 streets at spr 4.5: ratio ((2*4.5+1)^(1/2)-1)/2 = 1.0811, 200 * 1.0811 -> 216.
  assert.deepEqual(labels(t, 0), ["Check", "Bet 120", "Bet 216", "All-in 900"]);
  // OOP bets 120, IP: fold, call, raise 2.5x = 300; no added all-in (900 > 120 + 1.5 * 440).
  assert.deepEqual(labels(t, follow(t, ["Bet 120"])), ["Fold", "Call", "Raise 300"]);
  // River after OOP calls: OOP may donk 50% of the pot (200 + 2*120 = 440 -> 220).
  const river = follow(t, ["Check", "Bet 120", "Call"]);
  assert.deepEqual(labels(t, river), ["Check", "Bet 220"]);
  // River after check-check: normal sizes (60% of 200 = 120, geometric 1 street = all-in).
  assert.deepEqual(labels(t, follow(t, ["Check", "Check"])), ["Check", "Bet 120", "All-in 900"]);
});

Deno.test("action tree: F1 root actions (3bet pot preset, thresholds off)", () => {
  const f = parseBetSizes("52%", "45%"), tu = parseBetSizes("55%", "45%");
  const r = parseBetSizes("70%", "45%");
  const t = buildActionTree(config({
    startingStreet: 0,
    startingPot: 180,
    effectiveStack: 910,
    betSizes: [[f, f], [tu, tu], [r, r]],
    addAllinThreshold: 0,
    forceAllinThreshold: 0,
    mergingThreshold: 0,
  }));
  assert.deepEqual(labels(t, 0), ["Check", "Bet 94"]);
  // Raise 45% of the pot after calling: 94 + round(0.45 * (180 + 2 * 94)) = 94 + 166 = 260.
  assert.deepEqual(labels(t, follow(t, ["Bet 94"])), ["Fold", "Call", "Raise 260"]);
});

Deno.test("action tree: structure: terminals, chance nodes and all-in runouts", () => {
  const t = buildActionTree(config({ startingStreet: 0 }, "50%, a", "a"));
  for (let n = 0; n < t.size; n++) {
    const k = t.kind[n];
    if (k === NODE_FOLD || k === NODE_SHOWDOWN) assert.equal(t.numChildren[n], 0);
    if (k === NODE_CHANCE) {
      assert.equal(t.numChildren[n], 1);
      assert.equal(t.action[t.firstChild[n]], ACT_CHANCE);
      assert.equal(t.street[t.firstChild[n]], t.street[n] + 1);
    }
    if (k === NODE_SHOWDOWN && t.street[n] < 2) assert.fail("showdown before the river");
    if (k === NODE_OOP || k === NODE_IP) assert.ok(t.numChildren[n] >= 2);
    if (t.action[n] === 6 /* all-in */) assert.equal(t.actionAmount[n] <= 900, true);
  }
  // Flop all-in and call: chance (turn), chance (river), showdown with both stacks in.
  let n = follow(t, ["All-in 900"]);
  n = children(t, n).find((c) => actionLabel(t, c) === "Call")!;
  assert.equal(t.kind[n], NODE_CHANCE);
  assert.equal(t.kind[t.firstChild[n]], NODE_CHANCE);
  const end = t.firstChild[t.firstChild[n]];
  assert.equal(t.kind[end], NODE_SHOWDOWN);
  assert.equal(t.amount[end], 900);
});

Deno.test("action tree: add-all-in, force-all-in and merging thresholds", () => {
  // add_allin: stack 250 <= 1.5 * pot 200 adds an all-in beside the 50% bet.
  let t = buildActionTree(config({ effectiveStack: 250 }, "50%", ""));
  assert.deepEqual(labels(t, 0), ["Check", "Bet 100", "All-in 250"]);
  t = buildActionTree(config({ effectiveStack: 250, addAllinThreshold: 0 }, "50%", ""));
  assert.deepEqual(labels(t, 0), ["Check", "Bet 100"]);
  // force_allin: betting 100 of 120 leaves 20 <= 0.15 * (200 + 2 * 100) = 60, so it becomes all-in.
  t = buildActionTree(config({ effectiveStack: 120, addAllinThreshold: 0 }, "50%", ""));
  assert.deepEqual(labels(t, 0), ["Check", "All-in 120"]);
  // merging: 70% and 75% are within 10% ((1 + 0.75) / (1 + 0.70) < 1.1): the larger one stays.
  t = buildActionTree(config({ addAllinThreshold: 0 }, "70%, 75%, 33%", ""));
  assert.deepEqual(labels(t, 0), ["Check", "Bet 66", "Bet 150"]);
  t = buildActionTree(config({ addAllinThreshold: 0, mergingThreshold: 0 }, "70%, 75%", ""));
  assert.deepEqual(labels(t, 0), ["Check", "Bet 140", "Bet 150"]);
});

Deno.test("action tree: chips with a raise cap, previous-bet multiples, geometric raises", () => {
  const t = buildActionTree(
    config({ startingStreet: 2, addAllinThreshold: 0, forceAllinThreshold: 0 }, "20c", "20c2r"),
  );
  // Bet 20, raise to 40 (2nd bet), raise to 60 (3rd bet: cap 2 reached), then only fold/call.
  assert.deepEqual(labels(t, follow(t, ["Bet 20"])), ["Fold", "Call", "Raise 40"]);
  assert.deepEqual(labels(t, follow(t, ["Bet 20", "Raise 40"])), ["Fold", "Call", "Raise 60"]);
  assert.deepEqual(labels(t, follow(t, ["Bet 20", "Raise 40", "Raise 60"])), ["Fold", "Call"]);
  const g = buildActionTree(
    config({ startingStreet: 2, addAllinThreshold: 0, forceAllinThreshold: 0 }, "50%", "3x, e"),
  );
  // Facing 100 on the river: 3x -> 300; geometric (1 street) -> all-in 900.
  assert.deepEqual(labels(g, follow(g, ["Bet 100"])), ["Fold", "Call", "Raise 300", "All-in 900"]);
});
