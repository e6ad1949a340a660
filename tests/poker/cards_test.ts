import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import {
  cardName,
  COMBO_CARDS,
  comboIndex,
  NUM_COMBOS,
  parseCard,
  parseCards,
  parseExactCards,
} from "../../src/poker/cards.ts";

Deno.test("cards: ids follow 4 * rank + suit, names round-trip", () => {
  assert.equal(parseCard("2c"), 0);
  assert.equal(parseCard("3d"), 5);
  assert.equal(parseCard("4h"), 10);
  assert.equal(parseCard("As"), 51);
  assert.equal(parseCard("aS"), 51);
  for (let c = 0; c < 52; c++) assert.equal(parseCard(cardName(c)), c);
});

Deno.test("cards: boards with and without spaces, case-insensitive suits", () => {
  assert.deepEqual(parseCards("Qs Jh 2h"), parseCards("QsJh2h"));
  assert.deepEqual(parseCards("QS JH 2H"), [parseCard("Qs"), parseCard("Jh"), parseCard("2h")]);
  assert.deepEqual(parseExactCards("Td9d6h", 3, "cards.flop").map(cardName), ["Td", "9d", "6h"]);
});

Deno.test("cards: invalid and duplicate cards name the card", () => {
  const err = (f: () => unknown, re: RegExp) =>
    assert.throws(f, (e) => isKibitzError(e, "bad_card") && re.test((e as Error).message));
  err(() => parseCards("Qs Jh 2x"), /"2x"/);
  err(() => parseCards("Qs Jh Qs"), /duplicate card Qs/);
  err(() => parseCards("Qs1"), /dangling/);
  err(() => parseCard("10h"), /"10h"/);
  err(() => parseExactCards("QsJh", 3, "cards.flop"), /cards\.flop: expected 3 cards, got 2/);
});

Deno.test("cards: combo indices are a bijection onto 0..1325", () => {
  const seen = new Uint8Array(NUM_COMBOS);
  for (let a = 0; a < 52; a++) {
    for (let b = a + 1; b < 52; b++) {
      const i = comboIndex(a, b);
      assert.equal(comboIndex(b, a), i);
      assert.equal(seen[i], 0);
      seen[i] = 1;
      assert.equal(COMBO_CARDS[2 * i], a);
      assert.equal(COMBO_CARDS[2 * i + 1], b);
    }
  }
});
