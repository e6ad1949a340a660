// Inputs that used to pass silently or fail deep inside: a hand given twice, a 0% bet, a pot of
// 1e308. Each is now a clear error naming the key or token.
import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { parseBetSizeList } from "../../src/poker/bet_size.ts";
import { EXAMPLE_CONFIG, MAX_TOTAL_CHIPS, parseSolveConfig } from "../../src/poker/config.ts";
import { parseRange } from "../../src/poker/range.ts";

const rejects = (f: () => unknown, code: string, re: RegExp) =>
  assert.throws(f, (e) => isKibitzError(e) && e.code === code && re.test(e.message));

Deno.test("range: a hand given twice is an error naming both entries", () => {
  rejects(
    () => parseRange("AA,AA:0.5", "ranges.oop"),
    "bad_range",
    /^ranges\.oop: "AA:0\.5" at column 4 gives hands already given by "AA" at column 1/,
  );
  rejects(() => parseRange("AhAs, AsAh"), "bad_range", /"AsAh" at column 7 .* "AhAs"/);
  rejects(() => parseRange("QQ+,KK:0.5"), "bad_range", /"KK:0\.5" .* "QQ\+"/);
  // An override that changes some hands is the grammar's idiom and stays valid.
  assert.equal(parseRange("AA:0.25,QQ+").reduce((a, b) => a + b), 6 * 0.25 + 12);
});

Deno.test("bet sizes: 0% (and 0 chips, a 0% cap) is an error, not a minimum bet", () => {
  rejects(
    () => parseBetSizeList("33%, 0%", false, "bet_sizes.flop.oop_bet"),
    "bad_bet_size",
    /"0%": 0% of the pot is no bet/,
  );
  rejects(() => parseBetSizeList("0c", false, "b"), "bad_bet_size", /0 chips is no bet/);
  rejects(() => parseBetSizeList("e0%", true, "b"), "bad_bet_size", /cap of 0%/);
});

Deno.test("config: a pot or stack beyond exact integers is a config error naming the key", () => {
  const withTree = (pot: string, stack: string) =>
    EXAMPLE_CONFIG.replace(/starting_pot = \d+/, `starting_pot = ${pot}`)
      .replace(/effective_stack = \d+/, `effective_stack = ${stack}`);
  rejects(
    () => parseSolveConfig(withTree("1e308", "900"), "big.toml"),
    "bad_config",
    /^big\.toml: tree\.starting_pot = 1e\+308 is too large: at most 2147483647 chips/,
  );
  rejects(
    () => parseSolveConfig(withTree("200", "1e300"), "big.toml"),
    "bad_config",
    /tree\.effective_stack = 1e\+300 is too large/,
  );
  rejects(
    () => parseSolveConfig(withTree("1000000000", "1000000000"), "big.toml"),
    "bad_config",
    /starting_pot \+ 2 \* tree\.effective_stack = 3000000000 is too large/,
  );
  const edge = parseSolveConfig(withTree(String(MAX_TOTAL_CHIPS - 2), "1"));
  assert.equal(edge.tree.startingPot + 2 * edge.tree.effectiveStack, MAX_TOTAL_CHIPS);
});
