import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { comboIndex, parseCard, parseCards } from "../../src/poker/cards.ts";
import { parseRange, rangeHands, rangeSuitSymmetric } from "../../src/poker/range.ts";

const REF = {
  BASIC_OOP: "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s",
  BASIC_IP: "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+",
  PIO_OOP:
    "88+,A8s+,A5s-A2s:0.5,AJo+,ATo:0.75,K9s+,KQo,KJo:0.75,KTo:0.25,Q9s+,QJo:0.5,J8s+,JTo:0.25,T8s+,T7s:0.45,97s+,96s:0.45,87s,86s:0.75,85s:0.45,75s+:0.75,74s:0.45,65s:0.75,64s:0.5,63s:0.45,54s:0.75,53s:0.5,52s:0.45,43s:0.5,42s:0.45,32s:0.45",
  PIO_IP:
    "AA:0.25,99-22,AJs-A2s,AQo-A8o,K2s+,K9o+,Q2s+,Q9o+,J6s+,J9o+,T6s+,T9o,96s+,95s:0.5,98o,86s+,85s:0.5,75s+,74s:0.5,64s+,63s:0.5,54s,53s:0.5,43s",
};

const same = (a: string, b: string) => assert.deepEqual(parseRange(a), parseRange(b));

Deno.test("range: reference spots have the published hand counts after card removal", () => {
  const t1 = parseCards("Td9d6h Qc"), f1 = parseCards("Qs Jh 2h");
  assert.equal(rangeHands(parseRange(REF.BASIC_OOP), t1).length, 167);
  assert.equal(rangeHands(parseRange(REF.BASIC_IP), t1).length, 250);
  assert.equal(rangeHands(parseRange(REF.PIO_OOP), f1).length, 273);
  assert.equal(rangeHands(parseRange(REF.PIO_IP), f1).length, 416);
});

Deno.test("range: plus, dash and singleton forms expand like the reference grammar", () => {
  same("88+", "AA,KK,QQ,JJ,TT,99,88");
  same("98s+", "AKs,KQs,QJs,JTs,T9s,98s");
  same("A8o+", "AKo,AQo,AJo,ATo,A9o,A8o");
  same("88-55", "88,77,66,55");
  same("98s-65s", "98s,87s,76s,65s");
  same("AQo-86o", "AQo,KJo,QTo,J9o,T8o,97o,86o");
  same("K5-K2", "K5,K4,K3,K2");
  same("AhAs-QhQs,JJ", "JJ,AhAs,KhKs,QhQs");
  same("8s8h+", "AhAs,KhKs,QhQs,JhJs,ThTs,9h9s,8h8s");
  same("  QQ - 88 , A9s-A6s , KK : 0.5 ,", "QQ-88,A9s-A6s,KK:0.5");
  const w = parseRange("AA,KK:0.5,AKs,AQo,ATs+");
  assert.equal(w[comboIndex(parseCard("Ah"), parseCard("Ad"))], 1);
  assert.equal(w[comboIndex(parseCard("Kh"), parseCard("Kd"))], 0.5);
  assert.equal(w[comboIndex(parseCard("Ah"), parseCard("Qd"))], 1);
  assert.equal(w[comboIndex(parseCard("Ah"), parseCard("Qh"))], 1);
  assert.equal(w[comboIndex(parseCard("Ah"), parseCard("Kd"))], 0);
  assert.equal(w.reduce((a, b) => a + b), 6 + 3 + 4 + 12 + 4 * 3);
  assert.equal(parseRange("").reduce((a, b) => a + b), 0);
});

Deno.test("range: the earlier group wins where groups overlap", () => {
  const w = parseRange("AA:0.25,QQ+");
  assert.equal(w[comboIndex(parseCard("Ah"), parseCard("Ad"))], 0.25);
  assert.equal(w[comboIndex(parseCard("Kh"), parseCard("Kd"))], 1);
});

Deno.test("range: errors name the bad token and its column", () => {
  const err = (text: string, re: RegExp) =>
    assert.throws(
      () => parseRange(text, "ranges.oop"),
      (e) => isKibitzError(e, "bad_range") && re.test((e as Error).message),
    );
  err("AA,KK,AKx", /ranges\.oop: bad token "AKx" at column 7: invalid suitedness/);
  err("AA, QQ:1.5", /"QQ:1\.5" at column 5: weight 1\.5 is above 1/);
  err("AA,QQ:abc", /weight "abc"/);
  err("AK,,QQ", /empty entry at column 4/);
  err("89", /"89" at column 1: the first rank/);
  err("AAo", /pair cannot be suited/);
  err("AQo-86s", /same suits/);
  err("AQo-KQo", /share the top card/);
  err("K2-K5", /high to low/);
  err("AK QQ", /missing comma/);
  err("AhAh", /duplicate card/);
});

Deno.test("range: suit symmetry", () => {
  assert.ok(rangeSuitSymmetric(parseRange(REF.BASIC_OOP), 0, 3));
  assert.ok(!rangeSuitSymmetric(parseRange("AhKh"), 2, 3));
  assert.ok(rangeSuitSymmetric(parseRange("AhKh"), 0, 1));
});
