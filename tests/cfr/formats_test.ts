import assert from "node:assert/strict";
import { buildTree } from "../../src/cfr/tree.ts";
import { CfrSolver, type SolverOptions } from "../../src/cfr/solver.ts";
import { LEDUC_VALUE, leducGame } from "../../src/games/leduc.ts";

const game = leducGame();
const tree = buildTree(game);

// Leduc, 1000 iterations, seed 0. Bounds are about 2x the worst exploitability measured over seeds
// 0-5 (in chips; uniform play is 2.37). f32 and 16-bit regrets are deterministic (nearest rounding):
// 1.6e-4 to 1.8e-4; a u16 strategy (stochastic rounding, the solver's default for strategies):
// 2.0e-4 to 2.4e-4. 8-bit regrets: 1.6e-3 to 2.5e-3; 8-bit strategy: 6.5e-3 to 7.6e-3. 4-bit:
// regrets i4 5.3e-2 to 6.5e-2, u4 (dcfr+) 1.6e-2 to 2.1e-2; strategy u4 5.6e-2 to 7.9e-2, a noise
// floor: the stochastic rounding noise of a 15-level cumulative strategy does not shrink with
// iterations (the value at 100 iterations is already about the same), so that case asserts the
// floor only.
const CASES: { opts: SolverOptions; bound: number; improves: boolean }[] = [
  { opts: { regretBits: 32, strategyBits: 32 }, bound: 4e-4, improves: true },
  { opts: { regretBits: 16, strategyBits: 32 }, bound: 4e-4, improves: true },
  { opts: { regretBits: 8, strategyBits: 32 }, bound: 5e-3, improves: true },
  { opts: { regretBits: 4, strategyBits: 32 }, bound: 0.13, improves: true },
  { opts: { regretBits: 32, strategyBits: 16 }, bound: 6e-4, improves: true },
  { opts: { regretBits: 32, strategyBits: 8 }, bound: 1.5e-2, improves: true },
  { opts: { regretBits: 32, strategyBits: 4 }, bound: 0.16, improves: false },
  { opts: { algorithm: "dcfr+", regretBits: 8, strategyBits: 32 }, bound: 2e-3, improves: true },
  { opts: { algorithm: "dcfr+", regretBits: 4, strategyBits: 32 }, bound: 4.5e-2, improves: true },
];

for (const { opts, bound, improves } of CASES) {
  const name = `${
    opts.algorithm ?? "dcfr"
  } regret ${opts.regretBits} / strategy ${opts.strategyBits} bits`;
  Deno.test(`leduc converges with ${name}`, () => {
    const s = new CfrSolver(tree, game, { ...opts, seed: 0 });
    s.run(100);
    const early = s.exploitability().chips;
    s.run(900);
    const e = s.exploitability();
    assert.ok(e.chips < bound, `${name}: exploitability ${e.chips} >= ${bound}`);
    if (improves) assert.ok(e.chips < early, `${name}: ${early} -> ${e.chips} did not improve`);
    assert.ok(Math.abs(e.ev[0] - LEDUC_VALUE) < bound, `${name}: ev ${e.ev[0]}`);
  });
}

Deno.test("storage formats: chosen from bits, sized exactly, unsigned regrets only for + algorithms", () => {
  const blocks = tree.blockNode.length, n = tree.blockSize.reduce((a, b) => a + b, 0);
  const s32 = new CfrSolver(tree, game);
  assert.equal(s32.regrets.format, "f32");
  assert.equal(s32.storageBytes(), 2 * 4 * n);
  const s8 = new CfrSolver(tree, game, { regretBits: 8, strategyBits: 4 });
  assert.deepEqual([s8.regrets.format, s8.strategy.format], ["i8", "u4"]);
  assert.equal(s8.storageBytes(), Math.ceil(n / 4) * 4 + Math.ceil(n / 8) * 4 + 2 * 4 * blocks);
  const plus = new CfrSolver(tree, game, { algorithm: "dcfr+", regretBits: 4 });
  assert.equal(plus.regrets.format, "u4");
  const pd = new CfrSolver(tree, game, { algorithm: "pdcfr+", regretBits: 16 });
  assert.equal(pd.predicted?.format, "i16");
  assert.throws(
    () => new CfrSolver(tree, game, { algorithm: "dcfr", regretFormat: "u8" }),
    /dcfr keeps negative regrets, which unsigned u8 cannot store/,
  );
  assert.throws(
    () => new CfrSolver(tree, game, { regretBits: 12 }),
    /regret_bits must be 32, 16, 8 or 4/,
  );
  assert.throws(() => new CfrSolver(tree, game, { strategyBits: 2 }), /strategy_bits must be/);
});

Deno.test("same seed, same result; another seed, other rounding", () => {
  const run = (seed: number) => {
    const s = new CfrSolver(tree, game, { regretBits: 8, strategyBits: 8, seed });
    s.run(30);
    return [Array.from(s.regrets.words), Array.from(s.strategy.words)];
  };
  assert.deepEqual(run(7), run(7));
  assert.notDeepEqual(run(7), run(8));
});

Deno.test("a 16-bit strategy sum needs stochastic rounding: nearest stalls", () => {
  // Measured (3000 iterations, 16-bit regrets and strategy): nearest 4.9e-4, stochastic 1.5e-4.
  const run = (strategyRounding: "nearest" | "stochastic") => {
    const s = new CfrSolver(tree, game, { regretBits: 16, strategyBits: 16, strategyRounding });
    s.run(3000);
    return s.exploitability().chips;
  };
  const nearest = run("nearest"), stochastic = run("stochastic");
  assert.ok(stochastic < 2.5e-4, `stochastic ${stochastic}`);
  assert.ok(nearest > 2 * stochastic, `nearest ${nearest} vs stochastic ${stochastic}`);
});
