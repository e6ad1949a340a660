import assert from "node:assert/strict";
import { cardName, COMBO_CARDS, parseCards } from "../../src/poker/cards.ts";
import { evaluateCards } from "../../src/poker/hand_eval.ts";
import { chanceIsomorphism, swapPermutation, swapSuit } from "../../src/poker/isomorphism.ts";
import { parseRange, rangeHands } from "../../src/poker/range.ts";

const SYM = parseRange("22+,A2s+,K9o+,QTs+,T9s,65s");
const both = [SYM, SYM] as const;

Deno.test("isomorphism: two-tone flop merges the two absent suits", () => {
  const iso = chanceIsomorphism(parseCards("Qs Jh 2h"), both);
  assert.equal(iso.outcomes, 49 - 13);
  assert.equal(cardName(iso.representative[parseCards("7d")[0]]), "7c");
  assert.equal(iso.representative[parseCards("7h")[0]], parseCards("7h")[0]);
});

Deno.test("isomorphism: three-suited boards merge nothing on the turn", () => {
  const iso = chanceIsomorphism(parseCards("Qs Jh 2d"), both);
  assert.equal(iso.outcomes, 49);
  assert.ok(iso.swapWith.every((s) => s === -1));
  // River of a three-suited turn board: still four different suit patterns.
  assert.equal(chanceIsomorphism(parseCards("Qs Jh 2d 5c"), both).outcomes, 48);
});

Deno.test("isomorphism: monotone and rainbow boards, and asymmetric ranges", () => {
  // Monotone: clubs, diamonds and hearts are interchangeable: 13 + 10 outcomes.
  assert.equal(chanceIsomorphism(parseCards("As Ks Qs"), both).outcomes, 10 + 13);
  // Same ranks in two suits: spades merge into hearts, diamonds into clubs.
  assert.equal(chanceIsomorphism(parseCards("Qs Js Qh Jh"), both).outcomes, 13 + 11);
  // A range naming hearts breaks the hearts swap.
  const asym = [parseRange("AhKh,QQ"), SYM] as const;
  assert.equal(chanceIsomorphism(parseCards("As Ks Qs"), asym).outcomes, 13 + 13 + 10);
});

Deno.test("isomorphism: the swap maps hands to hands with equal weight and equal strength", () => {
  const flop = parseCards("Qs Jh 2h");
  const iso = chanceIsomorphism(flop, both);
  const hands = rangeHands(SYM, flop);
  const perm = swapPermutation(hands, 0, 1);
  for (let h = 0; h < hands.length; h++) {
    assert.ok(perm[h] >= 0);
    assert.equal(perm[perm[h]], h);
    assert.equal(SYM[hands[perm[h]]], SYM[hands[h]]);
  }
  // Dealing 7d then 3c equals dealing 7c then 3d for every hand swapped: same showdown strength.
  for (let c = 0; c < 52; c++) {
    if (iso.swapWith[c] < 0) continue;
    const twin = iso.representative[c];
    const river = parseCards("3c")[0];
    const boardA = [...flop, c, river], boardB = [...flop, twin, swapSuit(river, 0, 1)];
    for (let h = 0; h < hands.length; h += 7) {
      const a = evaluateCards([...boardA, ...cardsOf(hands[h])]);
      const b = evaluateCards([...boardB, ...cardsOf(hands[perm[h]])]);
      if (!cardsOf(hands[h]).some((x) => boardA.includes(x))) assert.equal(a, b);
    }
  }
});

function cardsOf(combo: number): number[] {
  return [COMBO_CARDS[2 * combo], COMBO_CARDS[2 * combo + 1]];
}
