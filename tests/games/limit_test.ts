import assert from "node:assert/strict";
import { buildTree, CFR_CHANCE, CFR_PLAYER, CFR_TERMINAL } from "../../src/cfr/tree.ts";
import { kuhnGame } from "../../src/games/kuhn.ts";
import { leducGame } from "../../src/games/leduc.ts";
import type { LimitPokerGame } from "../../src/games/limit.ts";

function count(kind: Uint8Array, k: number): number {
  return kind.reduce((n, x) => n + (x === k ? 1 : 0), 0);
}

Deno.test("kuhn public tree: 4 decisions, 5 terminals, labelled histories", () => {
  const g = kuhnGame();
  const t = buildTree(g);
  assert.equal(t.size, 9);
  assert.equal(count(t.kind, CFR_PLAYER), 4);
  assert.equal(count(t.kind, CFR_TERMINAL), 5);
  assert.equal(count(t.kind, CFR_CHANCE), 0);
  assert.deepEqual(Array.from(t.levelStart), [0, 1, 3, 7, 9]);
  assert.deepEqual(t.label.slice(1, 3), ["k", "b"]);
  assert.deepEqual([g.handLabel(0, 0), g.handLabel(0, 2)], ["J", "K"]);
});

Deno.test("leduc public tree: 6 decisions per round, 5 chance nodes of 6 cards at weight 1/4", () => {
  const t = buildTree(leducGame());
  // Round-1 decisions: "", k, b, kb, br, kbr; 5 ways to reach round 2, each x 6 boards x 6 decisions.
  assert.equal(count(t.kind, CFR_PLAYER), 6 + 5 * 6 * 6);
  assert.equal(count(t.kind, CFR_CHANCE), 5);
  for (let n = 0; n < t.size; n++) {
    if (t.kind[n] !== CFR_CHANCE) continue;
    assert.equal(t.numChildren[n], 6);
    for (let c = t.firstChild[n]; c < t.firstChild[n] + 6; c++) {
      assert.equal(t.chanceWeight[c], Math.fround(1 / 4));
      for (const p of [0, 1] as const) {
        const s = t.blockedStart[p];
        assert.deepEqual(Array.from(t.blockedHands[p].subarray(s[c], s[c + 1])), [
          c - t.firstChild[n],
        ]);
      }
    }
  }
});

/** Brute-force payoff of hand h of `player` against opponent hand o at a terminal (O(n^2) oracle). */
function payoff(g: LimitPokerGame, terminal: number, player: 0 | 1, h: number, o: number): number {
  const t = g.terminalInfo(terminal);
  if (t.end === 0 || t.end === 1) {
    return t.end === player ? -t.contrib[player] : t.contrib[1 - player];
  }
  const suits = g.rules.suits;
  const strength = (c: number) => {
    const r = Math.floor(c / suits);
    return t.board >= 0 && r === Math.floor(t.board / suits) ? 100 + r : r;
  };
  const sh = strength(h), so = strength(o);
  return sh > so ? t.contrib[0] : sh < so ? -t.contrib[0] : 0;
}

Deno.test("O(n) terminal values and equity equal the brute-force sums over compatible opponent cards", () => {
  for (const g of [kuhnGame(), leducGame()]) {
    const t = buildTree(g);
    const n = g.numHands[0];
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const out = new Float32Array(n + 3), eq = new Float32Array(n);
    for (let node = 0; node < t.size; node++) {
      if (t.kind[node] !== CFR_TERMINAL) continue;
      const id = t.terminal[node];
      const board = g.terminalInfo(id).board;
      for (const p of [0, 1] as const) {
        const reach = Float32Array.from({ length: n }, (_, o) => (o === board ? 0 : rand()));
        g.terminalEquity(id, p, reach, eq, 0);
        g.terminalValues(id, p, reach, out, 3);
        for (let h = 0; h < n; h++) {
          if (h === board) continue;
          let want = 0;
          for (let o = 0; o < n; o++) {
            if (o !== h && o !== board) want += reach[o] * payoff(g, id, p, h, o);
          }
          assert.ok(
            Math.abs(out[3 + h] - want) < 1e-5,
            `${g.name} terminal ${id} p${p} h${h}: ${out[3 + h]} vs ${want}`,
          );
          let share = 0;
          for (let o = 0; o < n; o++) {
            if (o === h || o === board) continue;
            const x = payoff(g, id, p, h, o);
            share += reach[o] * (x > 0 ? 1 : x < 0 ? 0 : 0.5);
          }
          assert.ok(Math.abs(eq[h] - share) < 1e-5, `${g.name} equity ${id} p${p} h${h}`);
        }
      }
    }
  }
});

Deno.test("compatibleSums excludes the hand's own card", () => {
  const g = leducGame();
  const out = new Float32Array(6);
  g.compatibleSums(0, Float32Array.from([1, 2, 3, 4, 5, 6]), out);
  assert.deepEqual(Array.from(out), [20, 19, 18, 17, 16, 15]);
});
