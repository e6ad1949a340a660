import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { findNode } from "../../src/cfr/tree.ts";
import { mappedPolicy, pairNodes } from "../../src/cfr/warmstart_values.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { prepareSpot, runSolve } from "../../src/poker/solve.ts";
import {
  AUTO_REGRETS_COVERAGE,
  autoWarmStartMethod,
  pokerMapper,
  warmStartCoverage,
} from "../../src/poker/warmstart.ts";
import { runWarmStartSolve } from "../../src/poker/warmstart_solve.ts";
import {
  pathReach,
  potOddsResponses,
  rankResponses,
  warmStartPostflopValues,
} from "../../src/poker/warmstart_values.ts";
import { decodeAll } from "../../src/quant/mod.ts";
import { configSpot, riverSpot } from "../helpers/spots.ts";

function side(s: ReturnType<typeof configSpot>) {
  return { tree: s.tree, actionTree: s.game.tree };
}

Deno.test("strategy mapping: the small sizes keep their strategy, the responses to a new size come from the nearest one with pot-odds folds", () => {
  const small = configSpot(riverSpot("50%", "2.5x")),
    large = configSpot(riverSpot("25%, 50%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(30);
  const mapper = pokerMapper(side(small), side(large));
  const pair = pairNodes(small.tree, large.tree, mapper);
  const copy = mappedPolicy(ss, large.tree, mapper, pair);
  const adjusted = mappedPolicy(ss, large.tree, mapper, pair, {
    adjust: potOddsResponses(side(small), side(large)),
  });
  const H0 = large.tree.numHands[0], H1 = large.tree.numHands[1];
  // Root: check and bet 50 keep the small strategy, the new bet 25 gets probability 0.
  const root = new Float32Array(3 * H0), sr = ss.averageStrategy(0);
  copy(0, root);
  for (let h = 0; h < H0; h++) {
    assert.ok(Math.abs(root[h] - sr[h]) < 1e-6);
    assert.equal(root[H0 + h], 0);
    assert.ok(Math.abs(root[2 * H0 + h] - sr[H0 + h]) < 1e-6);
  }
  // Facing bet 50: the small tree's responses, unchanged by the correction.
  const n50 = findNode(large.tree, ["Bet 50"]), s50 = findNode(small.tree, ["Bet 50"]);
  assert.equal(pair[n50], s50);
  const want = ss.averageStrategy(s50), A = large.tree.numChildren[n50];
  const got = new Float32Array(A * H1);
  adjusted(n50, got);
  for (let i = 0; i < got.length; i++) assert.ok(Math.abs(got[i] - want[i]) < 1e-6);
  // Facing bet 25: copied from bet 50's responses; with the correction each hand folds
  // fold_50 * a(0.25) / a(0.5), a(x) = x / (1 + x), and its other actions keep their proportions.
  const n25 = findNode(large.tree, ["Bet 25"]);
  assert.equal(pair[n25], s50);
  const labels = large.tree.label.slice(
    large.tree.firstChild[n25],
    large.tree.firstChild[n25] + A,
  );
  assert.deepEqual(labels.slice(0, 2), ["Fold", "Call"]);
  const plain = new Float32Array(A * H1), fixed = new Float32Array(A * H1);
  copy(n25, plain);
  adjusted(n25, fixed);
  const k = (0.25 / 1.25) / (0.5 / 1.5);
  let folded = 0;
  for (let h = 0; h < H1; h++) {
    const f = plain[h];
    if (f > 0) folded++;
    assert.ok(Math.abs(fixed[h] - f * k) < 1e-6, `hand ${h} fold`);
    for (let a = 1; a < A; a++) {
      const e = f < 1 ? (plain[a * H1 + h] * (1 - f * k)) / (1 - f) : a === 1 ? 1 - f * k : 0;
      assert.ok(Math.abs(fixed[a * H1 + h] - e) < 1e-6, `hand ${h} action ${a}`);
    }
  }
  assert.ok(folded > 0);
});

Deno.test("value warm start of a river spot: new sizes get regrets from their values, W automatic", () => {
  const small = configSpot(riverSpot("50%", "2.5x")),
    large = configSpot(riverSpot("25%, 50%, 100%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(40);
  const ls = new CfrSolver(large.tree, large.game, {});
  const rep = warmStartPostflopValues({ solver: ss, game: small.game }, {
    solver: ls,
    game: large.game,
  });
  assert.ok(rep.profilePct > 0);
  assert.ok(rep.weight >= 1 && rep.weight <= 40);
  assert.equal(ls.iteration, rep.startIteration);
  assert.equal(rep.resetFrom, 4 * rep.startIteration);
  assert.equal(rep.paired, rep.playerNodes); // every large node has a small counterpart here
  // The new size's root regrets are set (not zero) for some hands.
  const H = large.tree.numHands[0];
  const R = decodeAll(ls.regrets).subarray(0, 4 * H);
  assert.ok(R.subarray(H, 2 * H).some((x) => x !== 0));
});

Deno.test("a warm-started solve by either method (regrets at W auto = 30, values, auto) reaches the cold solve's equilibrium (root EVs within 0.1 chip)", async () => {
  const text = riverSpot("33%, 66%, 100%, a", "2.5x, a") +
    `[solver]\nmax_iterations = 300\ntarget_exploitability_pct = 0.1\nthreads = 1\n` +
    `use_warmstart = true\nwarmstart_minimal_max_iters = 30\nwarmstart_minimal_exploitability_pct = 0\n`;
  const coldConfig = parseSolveConfig(text.replace("use_warmstart = true", ""));
  const c = await runSolve(prepareSpot(coldConfig));
  for (const method of ["regrets", "values", "auto"] as const) {
    const cfg = parseSolveConfig(text + `warmstart_method = "${method}"\n`);
    const w = await runWarmStartSolve(prepareSpot(cfg), cfg.solver.warmStart!);
    // The default small tree (66 %, all-in raise) pairs 18 of the 20 decision nodes (not the two
    // that face an all-in over a 2.5x raise), so "auto" transfers regrets.
    assert.equal(w.transfer.coverage, 0.9);
    assert.equal(w.transfer.auto, method === "auto");
    assert.equal(w.transfer.method, method === "auto" ? "regrets" : method);
    if (method !== "values") assert.equal(w.transfer.startIteration, 30);
    assert.ok(c.exploitability.percent <= 0.1 && w.outcome.exploitability.percent <= 0.1);
    for (const p of [0, 1]) {
      const d = Math.abs(w.outcome.exploitability.ev[p] - c.exploitability.ev[p]);
      assert.ok(
        d < 0.1,
        `player ${p}: warm ${w.outcome.exploitability.ev[p]} cold ${c.exploitability.ev[p]}`,
      );
    }
  }
});

Deno.test("rank responses: the range's fold frequency moves by the pot odds, marginal hands first", () => {
  const small = configSpot(riverSpot("50%", "2.5x")),
    large = configSpot(riverSpot("25%, 100%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(30);
  const mapper = pokerMapper(side(small), side(large));
  const pair = pairNodes(small.tree, large.tree, mapper);
  const copy = mappedPolicy(ss, large.tree, mapper, pair);
  const reach = pathReach(large.tree, (p) => large.game.initialWeights(p), copy);
  const ranked = mappedPolicy(ss, large.tree, mapper, pair, {
    adjust: rankResponses(side(small), side(large), reach),
  });
  const H1 = large.tree.numHands[1];
  for (const [line, f] of [["Bet 25", 0.25], ["Bet 100", 1]] as const) {
    const n = findNode(large.tree, [line]), A = large.tree.numChildren[n];
    const plain = new Float32Array(A * H1), got = new Float32Array(A * H1);
    copy(n, plain);
    ranked(n, got);
    const r = new Float32Array(H1);
    reach(n, 1, r);
    let F = 0, G = 0;
    for (let h = 0; h < H1; h++) (F += r[h] * plain[h]), (G += r[h] * got[h]);
    const k = (f / (1 + f)) / (0.5 / 1.5);
    assert.ok(F > 0);
    assert.ok(Math.abs(G - Math.min(F * k, r.reduce((x, y) => x + y, 0))) < 1e-4, `${line}: ${G}`);
    // Order kept: a hand that folded less (more) than another never ends up folding more (less).
    for (let x = 0; x < H1; x++) {
      for (let y = 0; y < H1; y++) {
        if (r[x] > 0 && r[y] > 0 && plain[x] < plain[y]) assert.ok(got[x] <= got[y] + 1e-6);
      }
      let sum = 0;
      for (let a = 0; a < A; a++) sum += got[a * H1 + x];
      assert.ok(Math.abs(sum - 1) < 1e-5);
    }
  }
});

Deno.test("value warm start with offLine = 0: nodes reached through a new size start cold", () => {
  const small = configSpot(riverSpot("50%", "2.5x")),
    large = configSpot(riverSpot("25%, 50%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(30);
  const ls = new CfrSolver(large.tree, large.game, {});
  warmStartPostflopValues({ solver: ss, game: small.game }, { solver: ls, game: large.game }, {
    weight: 10,
    offLine: 0,
  });
  const R = decodeAll(ls.regrets), S = decodeAll(ls.strategy);
  const block = (n: number) => {
    let off = 0;
    for (let b = 0; b < large.tree.block[n]; b++) off += large.tree.blockSize[b];
    return [off, off + large.tree.blockSize[large.tree.block[n]]];
  };
  const [a25, b25] = block(findNode(large.tree, ["Bet 25"]));
  const [a50, b50] = block(findNode(large.tree, ["Bet 50"]));
  assert.ok(
    R.subarray(a25, b25).every((x) => x === 0) && S.subarray(a25, b25).every((x) => x === 0),
  );
  assert.ok(S.subarray(a50, b50).some((x) => x > 0));
});

Deno.test("value warm start with newActions capped: a size the small tree lacks starts at regret <= 0", () => {
  const small = configSpot(riverSpot("50%", "2.5x")),
    large = configSpot(riverSpot("25%, 50%", "2.5x"));
  const ss = new CfrSolver(small.tree, small.game, {});
  ss.run(30);
  const run = (newActions: "value" | "capped") => {
    const ls = new CfrSolver(large.tree, large.game, {});
    warmStartPostflopValues({ solver: ss, game: small.game }, { solver: ls, game: large.game }, {
      weight: 10,
      newActions,
    });
    const H = large.tree.numHands[0];
    // Root actions: check, bet 25 (new), bet 50.
    return Array.from(decodeAll(ls.regrets).subarray(0, 3 * H));
  };
  const plain = run("value"), capped = run("capped");
  const H = large.tree.numHands[0];
  assert.ok(plain.slice(H, 2 * H).some((x) => x > 0)); // the new size looks profitable ...
  assert.ok(capped.slice(H, 2 * H).every((x) => x <= 0)); // ... and is capped
  assert.deepEqual(capped.slice(0, H), plain.slice(0, H)); // the others are unchanged
  assert.deepEqual(capped.slice(2 * H), plain.slice(2 * H));
});

Deno.test("coverage: the share of full-tree decision nodes with a small-tree counterpart; auto picks regrets from 0.5", () => {
  const noRaise = configSpot(riverSpot("50%", "")), raise = configSpot(riverSpot("50%", "2.5x"));
  // 10 decision nodes; the two that face a raise have no counterpart in a tree without raises.
  assert.equal(raise.tree.blockNode.length, 10);
  assert.equal(warmStartCoverage(noRaise, raise), 0.8);
  assert.equal(warmStartCoverage(raise, configSpot(riverSpot("25%, 50%, 100%", "2.5x"))), 1);
  assert.equal(autoWarmStartMethod(0.8), "regrets");
  assert.equal(autoWarmStartMethod(AUTO_REGRETS_COVERAGE), "regrets");
  assert.equal(autoWarmStartMethod(0.26), "values"); // F1 from its raise-less one-size tree
});
