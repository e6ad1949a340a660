import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { EXAMPLE_CONFIG, parseSolveConfig } from "../../src/poker/config.ts";
import { betSizeToString } from "../../src/poker/bet_size.ts";

const BASE = `
[ranges]
oop = "AA,KK"
ip = "QQ,AKs"
[cards]
flop = "Qs Jh 2h"
[tree]
starting_pot = 180
effective_stack = 910
`;

function bad(text: string, re: RegExp) {
  assert.throws(
    () => parseSolveConfig(text, "spot.toml"),
    (e) =>
      isKibitzError(e) && (e as Error).message.startsWith("spot.toml: ") &&
      re.test((e as Error).message),
  );
}

Deno.test("config: the built-in example parses to spot T1", () => {
  const c = parseSolveConfig(EXAMPLE_CONFIG);
  assert.equal(c.board.length, 4);
  assert.equal(c.tree.startingStreet, 1);
  assert.equal(c.tree.startingPot, 200);
  assert.deepEqual(c.tree.betSizes[1][0].bet.map(betSizeToString), ["60%", "e", "a"]);
  assert.deepEqual(c.tree.donkSizes[1]?.map(betSizeToString), ["50%"]);
  assert.equal(c.tree.donkSizes[0], null);
  assert.equal(c.solver.algorithm, "dcfr");
});

Deno.test("config: defaults, presets and seed 001's quantization key", () => {
  const c = parseSolveConfig(
    BASE + `[bet_sizes]\nflop = "minimal"\n[bet_sizes.turn]\npreset = "full"\nip_bet = "50%"\n` +
      `[solver]\nquantization = "16bit"\nstrategy_bits = 8\n`,
  );
  assert.equal(c.tree.startingStreet, 0);
  assert.deepEqual(c.tree.betSizes[0][0].bet.map(betSizeToString), ["66%"]);
  assert.deepEqual(c.tree.betSizes[1][0].bet.map(betSizeToString), [
    "25%",
    "50%",
    "75%",
    "125%",
    "a",
  ]);
  assert.deepEqual(c.tree.betSizes[1][1].bet.map(betSizeToString), ["50%"]);
  assert.deepEqual(c.tree.betSizes[2][0].bet.map(betSizeToString), ["33%", "75%"]); // standard
  assert.equal(c.solver.regretBits, 16);
  assert.equal(c.solver.strategyBits, 8);
  assert.equal(c.tree.addAllinThreshold, 1.5);
  assert.equal(c.outputDirectory, "out/solve");
});

Deno.test("config: unknown keys are errors listing the valid ones", () => {
  bad(
    BASE + `[tree2]\nx = 1\n`,
    /spot\.toml: unknown key "tree2"; valid keys: ranges, cards, tree/,
  );
  bad(
    BASE.replace("starting_pot", "startingpot"),
    /unknown key "tree\.startingpot"; valid keys in \[tree\]: starting_pot, effective_stack/,
  );
  bad(BASE + `[solver]\niterations = 3\n`, /unknown key "solver\.iterations".*max_iterations/);
  bad(
    BASE + `[bet_sizes.turn]\noop_bets = "50%"\n`,
    /"bet_sizes\.turn\.oop_bets".*oop_bet, oop_raise/,
  );
  bad(BASE + `[bet_sizes.flop]\noop_donk = "50%"\n`, /"bet_sizes\.flop\.oop_donk"/);
});

Deno.test("config: wrong types name the key path", () => {
  bad(BASE.replace("180", '"180"'), /tree\.starting_pot must be an integer, got string "180"/);
  bad(BASE + `[solver]\nenable_pruning = "yes"\n`, /solver\.enable_pruning must be true or false/);
  bad(BASE + `[solver]\nmax_iterations = 1.5\n`, /solver\.max_iterations must be an integer/);
  bad(BASE.replace('oop = "AA,KK"', "oop = 3"), /ranges\.oop must be a string, got integer/);
  bad(BASE + `[bet_sizes]\nriver = 5\n`, /bet_sizes\.river must be a table or a preset name/);
  bad(
    BASE + `[bet_sizes]\nriver = "huge"\n`,
    /unknown preset "huge"; valid: minimal, standard, full/,
  );
});

Deno.test("config: bad cards, ranges and sizes keep their own messages with the key", () => {
  bad(BASE.replace("Qs Jh 2h", "Qs Jh 2x"), /cards\.flop: invalid card "2x"/);
  bad(BASE.replace("Qs Jh 2h", "Qs Jh Qs"), /cards\.flop: duplicate card Qs/);
  bad(
    BASE.replace('flop = "Qs Jh 2h"', 'flop = "Qs Jh 2h"\nturn = "Jh"'),
    /cards\.turn: Jh is already/,
  );
  bad(BASE.replace('flop = "Qs Jh 2h"', 'flop = "Qs Jh 2h"\nriver = "3c"'), /needs cards\.turn/);
  bad(BASE.replace("AA,KK", "AA,KX"), /ranges\.oop: bad token "KX" at column 4/);
  bad(
    BASE + `[bet_sizes.flop]\noop_bet = "2.5x"\n`,
    /bet_sizes\.flop\.oop_bet: invalid bet size "2\.5x"/,
  );
  bad(BASE.replace('oop = "AA,KK"', 'oop = "QsQh"'), /ranges\.oop has no hand left/);
});

Deno.test("config: impossible combinations explain why", () => {
  bad(
    BASE + `[solver]\nalgorithm = "dcfr"\nregret_format = "u8"\n`,
    /unsigned, but dcfr keeps negative regrets/,
  );
  bad(BASE + `[solver]\nalgorithm = "cfr+"\nenable_pruning = true\n`, /cfr\+ floors regrets at 0/);
  bad(
    BASE + `[solver]\nquantization = "16bit"\nregret_bits = 8\n`,
    /already sets regret_bits = 16/,
  );
  bad(
    BASE + `[solver]\nregret_bits = 16\nregret_format = "i8"\n`,
    /regret_format = "i8" stores 8-bit regrets, but regret_bits is 16/,
  );
  bad(BASE + `[solver]\nstrategy_bits = 12\n`, /strategy_bits must be 32, 16, 8 or 4, got 12/);
  bad(BASE + `[solver]\nalgorithm = "mccfr"\n`, /unknown algorithm "mccfr"; valid: dcfr, dcfr\+/);
  bad(BASE + `[tree]\n`, /invalid TOML/);
});
