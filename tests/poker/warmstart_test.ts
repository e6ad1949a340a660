import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { buildTree } from "../../src/cfr/tree.ts";
import { isKibitzError } from "../../src/errors.ts";
import { decodeAll, decodeBlock } from "../../src/quant/mod.ts";
import {
  ACT_ALLIN,
  ACT_BET,
  ACT_CALL,
  ACT_CHECK,
  ACT_FOLD,
  ACT_RAISE,
  buildActionTree,
} from "../../src/poker/action_tree.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { PostflopGame } from "../../src/poker/game.ts";
import { prepareSpot } from "../../src/poker/solve.ts";
import {
  mapPokerAction,
  parseWarmStartSettings,
  type PokerAction,
  pokerTreeActions,
  sizeCoordinate,
  smallTreeConfig,
  validateWarmStartGames,
  warmStartPostflop,
} from "../../src/poker/warmstart.ts";
import { runWarmStartSolve, warmStartRunner } from "../../src/poker/warmstart_solve.ts";
import { configSpot, riverSpot, TURN_WS } from "../helpers/spots.ts";
import { runSolveTask } from "../helpers/solve_task.ts";

const fold: PokerAction = { kind: ACT_FOLD, frac: 0 };
const check: PokerAction = { kind: ACT_CHECK, frac: 0 };
const call: PokerAction = { kind: ACT_CALL, frac: 0 };
const bet = (frac: number): PokerAction => ({ kind: ACT_BET, frac });
const raise = (frac: number): PokerAction => ({ kind: ACT_RAISE, frac });
const allin = (frac: number): PokerAction => ({ kind: ACT_ALLIN, frac });
const LARGE = [check, bet(0.33), bet(0.66), bet(1), allin(4)];

Deno.test("fold, check and call map directly", () => {
  assert.deepEqual(mapPokerAction(check, LARGE), [{ index: 0, weight: 1 }]);
  const facing = [fold, call, raise(0.5), allin(3)];
  assert.deepEqual(mapPokerAction(fold, facing), [{ index: 0, weight: 1 }]);
  assert.deepEqual(mapPokerAction(call, facing), [{ index: 1, weight: 1 }]);
  // No counterpart: a raise where the large node allows none, a check where there is none.
  assert.deepEqual(mapPokerAction(raise(0.5), [fold, call]), []);
  assert.deepEqual(mapPokerAction(check, [fold, call]), []);
});

Deno.test("an equal pot fraction maps directly", () => {
  assert.deepEqual(mapPokerAction(bet(0.66), LARGE), [{ index: 2, weight: 1 }]);
  assert.deepEqual(mapPokerAction(bet(0.66), LARGE, "log"), [{ index: 2, weight: 1 }]);
});

Deno.test("a size between two sizes is split linearly or by log(1 + 2f)", () => {
  const lin = mapPokerAction(bet(0.5), LARGE, "linear");
  const w = (0.5 - 0.33) / (0.66 - 0.33);
  assert.equal(lin.length, 2);
  assert.deepEqual(lin.map((s) => s.index), [1, 2]);
  assert.ok(Math.abs(lin[0].weight - (1 - w)) < 1e-12 && Math.abs(lin[1].weight - w) < 1e-12);
  const log = mapPokerAction(bet(0.5), LARGE, "log");
  const wl = (Math.log(2) - Math.log(1.66)) / (Math.log(2.32) - Math.log(1.66));
  assert.ok(Math.abs(log[1].weight - wl) < 1e-12, `${log[1].weight} vs ${wl}`);
  assert.ok(Math.abs(log[0].weight + log[1].weight - 1) < 1e-12);
  assert.ok(wl > w, "log interpolation gives the larger size more weight for a mid size");
  assert.equal(sizeCoordinate(0, "log"), 0);
});

Deno.test("below the smallest size: split between check/call and the smallest size", () => {
  const s = mapPokerAction(bet(0.11), LARGE);
  assert.deepEqual(s.map((x) => x.index), [0, 1]);
  assert.ok(Math.abs(s[1].weight - 1 / 3) < 1e-12);
  assert.ok(Math.abs(s[0].weight - 2 / 3) < 1e-12);
  // Facing a bet the lower anchor is the call.
  const r = mapPokerAction(raise(0.25), [fold, call, raise(1), allin(3)]);
  assert.deepEqual(r.map((x) => x.index), [1, 2]);
  assert.ok(Math.abs(r[1].weight - 0.25) < 1e-12);
});

Deno.test("above the largest size: the largest; all-in is a size equal to the stack", () => {
  assert.deepEqual(mapPokerAction(bet(1.5), [check, bet(0.5), bet(1)]), [{ index: 2, weight: 1 }]);
  // A 150% bet between 100% and an all-in worth 4 pots.
  const s = mapPokerAction(bet(1.5), LARGE);
  assert.deepEqual(s.map((x) => x.index), [3, 4]);
  assert.ok(Math.abs(s[1].weight - 0.5 / 3) < 1e-12);
  // The small tree's all-in (4 pots) meets the large tree's all-in.
  assert.deepEqual(mapPokerAction(allin(4), LARGE), [{ index: 4, weight: 1 }]);
  // An all-in of 4 pots above a large tree whose largest size is a 150% bet.
  assert.deepEqual(mapPokerAction(allin(4), [check, bet(0.5), bet(1.5)]), [{
    index: 2,
    weight: 1,
  }]);
  // An order-independent large list (all-in listed first).
  assert.deepEqual(
    mapPokerAction(bet(2.5), [allin(4), check, bet(1)]).map((x) => x.index),
    [2, 0],
  );
});

Deno.test("pot fractions of bets, raises and all-ins from the betting tree", () => {
  const { game, tree } = configSpot(riverSpot("50%", "2.5x"));
  const acts = pokerTreeActions(tree, game.tree);
  const root = tree.firstChild[0];
  // Root: check and bet 50 (no all-in: 200 is more than 1.5 pots).
  assert.deepEqual(tree.label.slice(root, root + tree.numChildren[0]), ["Check", "Bet 50"]);
  assert.equal(acts.kind[root + 1], ACT_BET);
  assert.equal(acts.frac[root + 1], 0.5);
  // Facing bet 50: fold, call, raise to 125 = 75 more than the call into a 200 pot.
  const n = root + 1, f = tree.firstChild[n];
  // add_allin_threshold 1.5 adds the all-in (200 <= 50 + 1.5 * 200): 150 more than the call.
  assert.deepEqual(tree.label.slice(f, f + tree.numChildren[n]), [
    "Fold",
    "Call",
    "Raise 125",
    "All-in 200",
  ]);
  assert.equal(acts.kind[f + 2], ACT_RAISE);
  assert.equal(acts.frac[f + 2], 75 / 200);
  assert.equal(acts.kind[f + 3], ACT_ALLIN);
  assert.equal(acts.frac[f + 3], 150 / 200);
  // Facing the raise: the only raise left is all-in (200 total: 75 more than 125 into 350).
  const r = f + 2, g = tree.firstChild[r];
  const labels = tree.label.slice(g, g + tree.numChildren[r]);
  assert.deepEqual(labels, ["Fold", "Call", "All-in 200"]);
  assert.equal(acts.frac[g + 2], 75 / 350);
});

Deno.test("transferred root regrets equal hand-computed values (bracketing split)", () => {
  const small = configSpot(riverSpot("50%", "2.5x"));
  const large = configSpot(riverSpot("33%, 75%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(20);
  const ls = new CfrSolver(large.tree, large.game, {});
  const rep = warmStartPostflop({ solver: ss, game: small.game }, {
    solver: ls,
    game: large.game,
  }, { weight: 5 });
  assert.equal(ls.iteration, 5);
  assert.ok(rep.nodes > 1);
  const lr = large.tree.firstChild[0];
  assert.deepEqual(large.tree.label.slice(lr, lr + 3), ["Check", "Bet 33", "Bet 75"]);
  const H = small.tree.numHands[0], f = 5 / 20;
  const R = new Float32Array(2 * H), out = new Float32Array(3 * H);
  decodeBlock(ss.regrets, 0, R);
  decodeBlock(ls.regrets, 0, out);
  const w = (0.5 - 0.33) / (0.75 - 0.33);
  for (let h = 0; h < H; h++) {
    assert.equal(out[h], Math.fround(f * R[h]));
    const lo = Math.fround(Math.fround((1 - w) * f) * R[H + h]);
    const hi = Math.fround(Math.fround(w * f) * R[H + h]);
    assert.equal(out[H + h], lo, `hand ${h} bet 33`);
    assert.equal(out[2 * H + h], hi, `hand ${h} bet 75`);
  }
  assert.ok(R.some((x) => x !== 0));
});

Deno.test("warm start into the identical tree continues at the same exploitability", () => {
  const a = configSpot(riverSpot("50%, a", "2.5x")), b = configSpot(riverSpot("50%, a", "2.5x"));
  const sa = new CfrSolver(a.tree, a.game, {});
  sa.run(16);
  const sb = new CfrSolver(b.tree, b.game, {});
  const rep = warmStartPostflop({ solver: sa, game: a.game }, { solver: sb, game: b.game }, {
    weight: 16,
  });
  assert.equal(rep.unmatched, 0);
  assert.deepEqual(decodeAll(sb.regrets), decodeAll(sa.regrets));
  sa.run(8), sb.run(8);
  assert.equal(sb.exploitability().chips, sa.exploitability().chips);
});

Deno.test("games that differ in more than bet sizes are rejected, naming the differences", () => {
  const base = configSpot(riverSpot("50%", "2.5x"));
  const other = (text: string) => configSpot(text).game;
  const expect = (text: string, re: RegExp) =>
    assert.throws(
      () => validateWarmStartGames(base.game, other(text)),
      (e) => isKibitzError(e, "warmstart_mismatch") && re.test(e.message),
    );
  expect(
    riverSpot("33%", "2x").replace("effective_stack = 200", "effective_stack = 300"),
    /effective stack \(small 200, large 300\)/,
  );
  expect(
    riverSpot("33%", "2x").replace("starting_pot = 100", "starting_pot = 120"),
    /starting pot/,
  );
  expect(riverSpot("33%", "2x", "rake_rate = 0.05\nrake_cap = 3"), /rake rate.*rake cap/);
  expect(
    riverSpot("33%", "2x").replace('river = "3h"', 'river = "4h"'),
    /board \(small .*3h, large .*4h\)/,
  );
  expect(riverSpot("33%", "2x").replace('ip = "KK-JJ,AQs,T9s"', 'ip = "KK-JJ,AQs"'), /IP range/);
  expect(
    riverSpot("33%", "2x").replace("AKs,54s", "AKs:0.5,54s"),
    /OOP range \(.* weight 1 vs 0\.5\)/,
  );
  // Only bet sizes differ: accepted.
  validateWarmStartGames(base.game, other(riverSpot("33%, 75%, a", "2x, a")));
  // warmStartPostflop validates before touching anything.
  const s = new CfrSolver(base.tree, base.game, {});
  s.run(2);
  const bad = configSpot(
    riverSpot("50%", "2.5x").replace("starting_pot = 100", "starting_pot = 120"),
  );
  const l = new CfrSolver(bad.tree, bad.game, {});
  assert.throws(() =>
    warmStartPostflop({ solver: s, game: base.game }, { solver: l, game: bad.game })
  );
  assert.equal(l.iteration, 0);
});

Deno.test("warm-start settings: defaults, the minimal preset, explicit sizes and errors", () => {
  const d = parseWarmStartSettings({});
  assert.equal(d.enabled, false);
  assert.equal(d.method, "auto");
  assert.equal(d.weight, "auto");
  assert.equal(d.interpolation, "linear");
  assert.equal(d.minimalMaxIters, 40);
  assert.equal(d.minimalExploitabilityPct, 1);
  assert.equal(d.preset, "minimal");
  assert.deepEqual(d.sizes, { bet: [{ kind: "pot", ratio: 0.66 }], raise: [{ kind: "allin" }] });
  assert.equal(d.donk, null);
  const c = parseWarmStartSettings({
    use_warmstart: true,
    warmstart_method: "regrets",
    warmstart_weight: 30,
    warmstart_interpolation: "log",
    warmstart_bet: "66%, a",
    warmstart_raise: "2.5x",
  });
  assert.equal(c.enabled, true);
  assert.equal(c.method, "regrets");
  assert.equal(c.weight, 30);
  assert.equal(parseWarmStartSettings({ warmstart_weight: "auto" }).weight, "auto");
  assert.equal(c.interpolation, "log");
  assert.deepEqual(c.sizes.raise, [{ kind: "prev", ratio: 2.5 }]);
  const bad = (t: Record<string, unknown>, re: RegExp) =>
    assert.throws(
      () => parseWarmStartSettings(t),
      (e) => isKibitzError(e, "bad_config") && re.test(e.message),
    );
  bad({ use_warmstart: "yes" }, /solver\.use_warmstart must be a boolean/);
  bad({ warmstart_weight: 0 }, /warmstart_weight must be a positive number or "auto"/);
  bad({ warmstart_weight: "big" }, /warmstart_weight must be a number/);
  bad({ warmstart_method: "strategy" }, /warmstart_method must be "auto", "values" or "regrets"/);
  bad({ warmstart_interpolation: "cubic" }, /"linear" or "log"/);
  bad({ warmstart_minimal_max_iters: 2.5 }, /warmstart_minimal_max_iters must be an integer/);
  bad({ warmstart_minimal_exploitability_pct: -1 }, /must be >= 0/);
  bad({ warmstart_bet_sizes: "huge" }, /unknown preset "huge"; valid: minimal/);
  assert.throws(() => parseWarmStartSettings({ warmstart_bet: "66" }), /solver\.warmstart_bet/);
});

Deno.test("the small tree keeps the spot and takes the warm-start sizes on every street", () => {
  const { config } = configSpot(riverSpot("25%, 50%, 100%, a", "2.5x, a"));
  const ws = parseWarmStartSettings({ warmstart_minimal_max_iters: 7 });
  const sc = smallTreeConfig(config, ws);
  assert.equal(sc.tree.startingPot, config.tree.startingPot);
  assert.equal(sc.tree.effectiveStack, config.tree.effectiveStack);
  assert.deepEqual(sc.board, config.board);
  assert.equal(sc.solver.maxIterations, 7);
  assert.equal(sc.solver.targetExploitabilityPct, 1);
  assert.deepEqual(sc.tree.donkSizes, [null, null]);
  for (const street of sc.tree.betSizes) {
    for (const p of street) assert.deepEqual(p, ws.sizes);
  }
  const small = new PostflopGame(buildActionTree(sc.tree), sc.board, sc.rangeWeights);
  const tree = buildTree(small);
  const f = tree.firstChild[0];
  assert.deepEqual(tree.label.slice(f, f + tree.numChildren[0]), ["Check", "Bet 66"]);
  validateWarmStartGames(small, configSpot(riverSpot("25%, 50%, 100%, a", "2.5x, a")).game);
});

Deno.test("a warm-started solve (regret transfer): small tree, transfer, full tree from t = W", async () => {
  const config = parseSolveConfig(
    TURN_WS,
  );
  const ws = config.solver.warmStart!;
  assert.equal(ws.enabled, true);
  const s = prepareSpot(config);
  let transferred = -1;
  const r = await runWarmStartSolve(s, ws, { onTransfer: (_, t) => (transferred = t.nodes) });
  assert.equal(r.small.iterations, 20);
  assert.equal(r.small.stoppedBy, "max_iterations");
  assert.equal(r.transfer.method, "regrets");
  assert.equal(r.transfer.startIteration, 10);
  assert.equal(transferred, r.transfer.nodes);
  assert.ok(r.transfer.nodes > r.transfer.unmatched, JSON.stringify(r.transfer));
  // max_iterations counts the full tree's own iterations: at most 40 after t = 10.
  assert.ok(r.outcome.iterations > 10 && r.outcome.iterations <= 50);
  assert.equal(r.outcome.exploitability.percent <= 0.5, r.outcome.stoppedBy === "target");
  assert.ok(r.outcome.exploitability.percent < r.small.exploitability.percent);
  assert.ok(s.tree !== null);
  // Without use_warmstart the runner is the plain solve.
  const plain = parseSolveConfig(TURN_WS.replace("use_warmstart = true", ""));
  const lines: string[] = [];
  const o = await warmStartRunner(prepareSpot(plain), (l) => lines.push(l))({});
  assert.deepEqual(lines, []);
  assert.ok(o.iterations <= 40);
});

Deno.test("deno task solve with use_warmstart prints both phases", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const text = TURN_WS.replace("max_iterations = 40", "max_iterations = 20");
    await Deno.writeTextFile(`${dir}/spot.toml`, text);
    const out = await runSolveTask([`${dir}/spot.toml`, "--out", dir]);
    const stdout = out.stdout;
    assert.equal(out.code, 0, out.stderr);
    assert.match(stdout, /phase 1: small tree \(bet sizes 66%; raises a\)/);
    assert.match(stdout, /phase 1 done: 20 iterations/);
    assert.match(stdout, /phase 2: full tree warm-started: regrets of \d+ decision nodes/);
    assert.match(stdout, /continuing at iteration 10/);
    assert.match(stdout, /exploitability [\d.]+% of pot after \d+ iterations/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
