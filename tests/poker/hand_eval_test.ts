import assert from "node:assert/strict";
import { parseCards } from "../../src/poker/cards.ts";
import {
  categoryOf,
  evalTables,
  evaluate7,
  evaluateCards,
  RANK_KEYS,
  releaseEvalTables,
} from "../../src/poker/hand_eval.ts";

// Independent five-card evaluator for the oracle: sorts by (count, rank) and names the category.
function slow5(cards: number[]): number[] {
  const ranks = cards.map((c) => c >> 2);
  const counts = new Map<number, number>();
  for (const r of ranks) counts.set(r, (counts.get(r) ?? 0) + 1);
  const groups = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0]);
  const flush = cards.every((c) => (c & 3) === (cards[0] & 3));
  const uniq = [...new Set(ranks)].sort((a, b) => b - a);
  let straight = -1;
  if (uniq.length === 5 && uniq[0] - uniq[4] === 4) straight = uniq[0];
  if (uniq.join() === "12,3,2,1,0") straight = 3;
  const shape = groups.map((g) => g[1]).join("");
  const cat = straight >= 0 && flush
    ? 8
    : shape === "41"
    ? 7
    : shape === "32"
    ? 6
    : flush
    ? 5
    : straight >= 0
    ? 4
    : shape === "311"
    ? 3
    : shape === "221"
    ? 2
    : shape === "2111"
    ? 1
    : 0;
  return straight >= 0 && (cat === 8 || cat === 4)
    ? [cat, straight]
    : [cat, ...groups.map((g) => g[0])];
}

function cmp(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? -1) - (b[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

Deno.test("hand eval: rank keys give every 7-card rank multiset a distinct sum", () => {
  const seen = new Set<number>();
  let n = 0;
  const rec = (r: number, left: number, sum: number) => {
    if (r === 13) {
      if (left === 0) {
        n++;
        seen.add(sum);
      }
      return;
    }
    for (let c = 0; c <= 4 && c <= left; c++) rec(r + 1, left - c, sum + c * RANK_KEYS[r]);
  };
  rec(0, 7, 0);
  assert.equal(n, 49205);
  assert.equal(seen.size, 49205);
});

Deno.test("hand eval: all 2,598,960 five-card hands, 7,462 ranks, exact category counts", () => {
  const counts = new Array(9).fill(0);
  const distinct = new Set<number>();
  const c = [0, 0, 0, 0, 0];
  for (c[0] = 0; c[0] < 48; c[0]++) {
    for (c[1] = c[0] + 1; c[1] < 49; c[1]++) {
      for (c[2] = c[1] + 1; c[2] < 50; c[2]++) {
        for (c[3] = c[2] + 1; c[3] < 51; c[3]++) {
          for (c[4] = c[3] + 1; c[4] < 52; c[4]++) {
            const s = evaluateCards(c);
            distinct.add(s);
            counts[categoryOf(s)]++;
          }
        }
      }
    }
  }
  assert.equal(counts.reduce((a, b) => a + b), 2598960);
  assert.equal(distinct.size, 7462);
  // Published five-card frequencies, high card first.
  assert.deepEqual(counts, [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 40]);
  assert.equal(evalTables().rawToStrength.size, 7462);
});

Deno.test("hand eval: 7-card table equals the best of 21 five-card subsets (random samples)", () => {
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pick = () => {
    const deck = [...Array(52).keys()];
    for (let i = 0; i < 7; i++) {
      const j = i + Math.floor(rand() * (52 - i));
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    return deck.slice(0, 7);
  };
  const hands = Array.from({ length: 400 }, pick);
  const bestSlow = (h: number[]) => {
    let best: number[] = [-1];
    for (let i = 0; i < 7; i++) {
      for (let j = i + 1; j < 7; j++) {
        const five = h.filter((_, k) => k !== i && k !== j);
        const v = slow5(five);
        if (cmp(v, best) > 0) best = v;
      }
    }
    return best;
  };
  const fast = hands.map((h) => evaluate7(h[0], h[1], h[2], h[3], h[4], h[5], h[6]));
  const slow = hands.map(bestSlow);
  for (let i = 0; i < hands.length; i++) {
    assert.equal(categoryOf(fast[i]), slow[i][0]);
    for (let j = 0; j < hands.length; j += 7) {
      assert.equal(Math.sign(fast[i] - fast[j]), Math.sign(cmp(slow[i], slow[j])));
    }
  }
});

Deno.test("hand eval: known hands order correctly", () => {
  const s = (t: string) => evaluateCards(parseCards(t));
  assert.equal(categoryOf(s("As Ks Qs Js Ts 2c 3d")), 8);
  assert.equal(s("As Ks Qs Js Ts 2c 3d"), 7462);
  assert.equal(categoryOf(s("Ah 2d 3c 4s 5h Kd Kc")), 4); // wheel beats a pair
  assert.ok(s("6h 2d 3c 4s 5h Kd Kc") > s("Ah 2d 3c 4s 5h Kd Kc")); // six-high straight > wheel
  assert.equal(s("2c 3d 4h 5s 7c"), 1); // the worst hand
  assert.equal(s("Ac Ad Ah Kc Kd Qs Qh"), s("Ac Ad Ah Kc Kd 2s 3h")); // full house, kickers moot
  assert.equal(categoryOf(s("7c 7d 7h 5c 5d 5s 2h")), 6); // two trips make a full house
});

Deno.test("hand eval: with the 7-card table released, the slow path gives the same strengths", () => {
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const hands: number[][] = [];
  for (let i = 0; i < 20_000; i++) {
    const deck = new Set<number>();
    while (deck.size < 7) deck.add(Math.floor(rnd() * 52));
    hands.push([...deck]);
  }
  evalTables();
  const fast = hands.map((c) => evaluate7(c[0], c[1], c[2], c[3], c[4], c[5], c[6]));
  releaseEvalTables();
  try {
    const slow = hands.map((c) => evaluate7(c[0], c[1], c[2], c[3], c[4], c[5], c[6]));
    assert.deepEqual(slow, fast);
    // Flushes and straight flushes are among the samples (the flush table stays in both paths).
    assert.ok(fast.some((s) => categoryOf(s) >= 5));
  } finally {
    evalTables();
  }
});
