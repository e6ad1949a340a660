import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { betSizeToString, parseBetSizeList, parseBetSizes } from "../../src/poker/bet_size.ts";

Deno.test("bet sizes: every form of the grammar parses to the reference's values", () => {
  const one = (s: string) => parseBetSizeList(s, true, "t")[0];
  assert.deepEqual(one("0.5%"), { kind: "pot", ratio: 0.005 });
  assert.deepEqual(one("112.5%"), { kind: "pot", ratio: 1.125 });
  assert.deepEqual(one("3.5X"), { kind: "prev", ratio: 3.5 });
  assert.deepEqual(one("123C"), { kind: "chips", chips: 123, cap: 0 });
  assert.deepEqual(one("100C100R"), { kind: "chips", chips: 100, cap: 100 });
  assert.deepEqual(one("20c3r"), { kind: "chips", chips: 20, cap: 3 });
  assert.deepEqual(one("e"), { kind: "geometric", streets: 0, maxRatio: Infinity });
  assert.deepEqual(one("2e"), { kind: "geometric", streets: 2, maxRatio: Infinity });
  assert.deepEqual(one("E37.5%"), { kind: "geometric", streets: 0, maxRatio: 0.375 });
  assert.deepEqual(one("3e200%"), { kind: "geometric", streets: 3, maxRatio: 2 });
  assert.deepEqual(one("A"), { kind: "allin" });
});

Deno.test("bet sizes: invalid entries are errors naming the entry and the key", () => {
  const bad = [
    "0",
    "0%",
    "0c",
    "3e0%",
    "1.23",
    "%",
    "+42%",
    "-30%",
    "x",
    "0x",
    "1x",
    "c",
    "12.3c",
    "10c10",
    "42cr",
    "c3r",
    "0c0r",
    "123c101r",
    "1c2r3",
    "12c3.4r",
    "0e",
    "2.7e",
    "101e",
    "3e7",
    "E%",
    "1e2e3",
    "bet",
    "1a",
    "a1",
  ];
  for (const s of bad) {
    assert.throws(
      () => parseBetSizeList(s, true, "bet_sizes.flop.oop_raise"),
      (e) =>
        isKibitzError(e, "bad_bet_size") &&
        (e as Error).message.startsWith(`bet_sizes.flop.oop_raise: invalid bet size "${s}"`),
      s,
    );
  }
  assert.throws(() => parseBetSizes("2.5x", ""), /only valid for raises/);
  assert.throws(() => parseBetSizes("20c3r", ""), /raise cap \(r\) is only valid for raises/);
  assert.throws(() => parseBetSizes(",", ""), /empty entry/);
});

Deno.test("bet sizes: lists are trimmed, sorted like the reference, trailing comma allowed", () => {
  const o = parseBetSizes("a, e, 50c,", "e200%, 2.5x, 25%");
  assert.deepEqual(o.bet.map(betSizeToString), ["50c", "e", "a"]);
  assert.deepEqual(o.raise.map(betSizeToString), ["25%", "2.5x", "e200%"]);
  assert.deepEqual(parseBetSizes("", "").bet, []);
});
