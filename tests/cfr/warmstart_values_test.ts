import assert from "node:assert/strict";
import { uniformPolicy } from "../../src/cfr/evaluate.ts";
import { DCFR_REFERENCE, iterationDiscount } from "../../src/cfr/schedule.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { buildTree, findNode } from "../../src/cfr/tree.ts";
import { labelMapper } from "../../src/cfr/warmstart.ts";
import {
  autoWarmWeight,
  mappedPolicy,
  pairNodes,
  warmSchedule,
  warmStartFromPolicy,
} from "../../src/cfr/warmstart_values.ts";
import { isKibitzError } from "../../src/errors.ts";
import { kuhnGame } from "../../src/games/kuhn.ts";
import { leducGame } from "../../src/games/leduc.ts";
import { decodeAll, decodeBlock } from "../../src/quant/mod.ts";

const kuhn = kuhnGame();
const kt = buildTree(kuhn);
const leduc = leducGame();
const lt = buildTree(leduc);

// Kuhn (ante 1, bet 1), both players uniform, player 0's first decision, hand J against Q and K
// (opponent reach 1 each, values summed over them, in chips won):
//   check: P1 checks (1/2) -> showdown -1; bets (1/2) -> P0 folds (1/2) -1 or calls (1/2) -2
//          -> -1/2 - 3/4 = -1.25 per opponent hand, -2.5 in all;
//   bet:   P1 folds (1/2) +1, calls (1/2) -2 -> -0.5 per opponent hand, -1 in all;
//   node value 0.5 * -2.5 + 0.5 * -1 = -1.75; regrets W * (v(a) - v): check -0.75 W, bet +0.75 W.
// With K: check: P1 checks -> +1, bets -> fold -1 / call +2 -> 1/2 + 1/4 = 0.75 each, 1.5 in all;
//   bet: fold +1, call +2 -> 1.5 each, 3 in all; node 2.25; regrets check -0.75 W, bet +0.75 W.
Deno.test("value warm start sets W * (v(a) - v(node)) from the profile's counterfactual values (Kuhn, hand-computed)", () => {
  const s = new CfrSolver(kt, kuhn, {});
  const rep = warmStartFromPolicy(s, uniformPolicy(kt), { weight: 4 });
  assert.equal(rep.weight, 4);
  assert.equal(s.iteration, 4);
  assert.ok(Number.isNaN(rep.profilePct));
  const A = kt.numChildren[0], H = kt.numHands[0];
  assert.equal(A, 2);
  assert.equal(H, 3);
  const labels = [kt.label[kt.firstChild[0]], kt.label[kt.firstChild[0] + 1]];
  const check = labels.findIndex((l) => /^(k|c|check)/i.test(l));
  assert.ok(check >= 0, `root actions ${labels}`);
  const bet = 1 - check;
  const R = new Float32Array(A * H);
  decodeBlock(s.regrets, kt.block[0], R);
  const J = 0, K = 2;
  assert.ok(Math.abs(R[check * H + J] - -3) < 1e-6, `J check ${R[check * H + J]}`);
  assert.ok(Math.abs(R[bet * H + J] - 3) < 1e-6, `J bet ${R[bet * H + J]}`);
  assert.ok(Math.abs(R[check * H + K] - -3) < 1e-6, `K check ${R[check * H + K]}`);
  assert.ok(Math.abs(R[bet * H + K] - 3) < 1e-6, `K bet ${R[bet * H + K]}`);
  // The cumulative strategy is W times the profile, everywhere.
  assert.ok(decodeAll(s.strategy).every((x) => x === 2));
  // Q: check -0.5 in all (+0.75 vs J, -1.25 vs K), bet +1 (1.5 vs J, -0.5 vs K), node 0.25; so the
  // regrets are -0.75 W / +0.75 W again, and player 0's EV is (-1.75 + 0.25 + 2.25) / 6 deals.
  assert.ok(Math.abs(R[check * H + 1] - -3) < 1e-6 && Math.abs(R[bet * H + 1] - 3) < 1e-6);
  assert.ok(Math.abs(rep.ev[0] - 0.125) < 1e-6, `EV ${rep.ev}`);
  assert.ok(Math.abs(rep.ev[1] + 0.125) < 1e-6, `EV ${rep.ev}`);
});

Deno.test("value warm start equals the values of the solver's own average strategy, in every storage format", () => {
  const ref = new CfrSolver(lt, leduc, {});
  ref.run(30);
  const policy = ref.averagePolicy();
  const exact = new CfrSolver(lt, leduc, {});
  warmStartFromPolicy(exact, policy, { weight: 8 });
  const want = decodeAll(exact.regrets);
  for (
    const [algorithm, bits] of [["dcfr", 16], ["dcfr", 8], ["dcfr", 4], ["dcfr+", 8], [
      "pdcfr+",
      32,
    ]] as const
  ) {
    const s = new CfrSolver(lt, leduc, { algorithm, regretBits: bits, strategyBits: bits });
    const rep = warmStartFromPolicy(s, policy, { weight: 8 });
    const got = decodeAll(s.regrets);
    const clip = algorithm !== "dcfr";
    if (clip) assert.ok(rep.clipped > 0);
    for (let b = 0; b < lt.blockNode.length; b++) {
      const st = s.regrets.scales.length > 0 ? s.regrets.scales[b] : 0;
      const levels = bits === 16 ? 32767 : bits === 8 ? (clip ? 255 : 127) : 7;
      const tol = bits === 32 ? 1e-6 : (st / levels) * 1.0001 + 1e-6;
      for (let i = s.regrets.offsets[b]; i < s.regrets.offsets[b + 1]; i++) {
        const w = clip ? Math.max(0, want[i]) : want[i];
        assert.ok(
          Math.abs(got[i] - w) <= tol,
          `${algorithm}/${bits} element ${i}: ${got[i]} vs ${w}`,
        );
      }
    }
    if (algorithm === "pdcfr+") assert.deepEqual(decodeAll(s.predicted!), got);
    // The warm-started solve runs on.
    s.run(30);
    const e = s.exploitability().chips;
    assert.ok(e < 0.6, `${algorithm}/${bits}: ${e}`);
  }
});

Deno.test("mapping into the identical tree reproduces the small strategy; unpaired nodes play uniformly", () => {
  const small = new CfrSolver(lt, leduc, {});
  small.run(20);
  const mapper = labelMapper(lt, lt);
  const pair = pairNodes(lt, lt, mapper);
  for (let n = 0; n < lt.size; n++) assert.equal(pair[n], n);
  const pol = mappedPolicy(small, lt, mapper, pair);
  for (const n of [0, findNode(lt, ["k", "b"])]) {
    const out = new Float32Array(lt.blockSize[lt.block[n]]);
    pol(n, out);
    const want = small.averageStrategy(n);
    for (let i = 0; i < out.length; i++) assert.ok(Math.abs(out[i] - want[i]) < 1e-6);
  }
  // A node with no pair plays uniformly; epsilon mixes in the uniform strategy.
  pair[0] = -1;
  const out = new Float32Array(lt.blockSize[0]);
  mappedPolicy(small, lt, mapper, pair)(0, out);
  assert.ok(out.every((x) => x === 1 / lt.numChildren[0]));
  const n = findNode(lt, ["k"]);
  const mixed = new Float32Array(lt.blockSize[lt.block[n]]);
  mappedPolicy(small, lt, mapper, pair, { epsilon: 0.2 })(n, mixed);
  const base = small.averageStrategy(n), A = lt.numChildren[n];
  for (let i = 0; i < mixed.length; i++) {
    assert.ok(Math.abs(mixed[i] - (0.8 * base[i] + 0.2 / A)) < 1e-6);
  }
});

Deno.test("automatic W: iterations a cold solve needs to reach the profile's exploitability (1/t)", () => {
  assert.equal(autoWarmWeight(40, 1.5, 3), 20);
  assert.equal(autoWarmWeight(40, 1.5, 1.5), 40);
  assert.equal(autoWarmWeight(40, 1.5, 1), 40); // never above the small solve's iterations
  assert.equal(autoWarmWeight(40, 1.5, 100), 1); // at least 1
  const s = new CfrSolver(lt, leduc, {});
  const rep = warmStartFromPolicy(s, uniformPolicy(lt), {
    reference: { iterations: 40, percent: 1 },
  });
  assert.ok(rep.profilePct > 10);
  assert.equal(rep.weight, autoWarmWeight(40, 1, rep.profilePct));
  assert.throws(
    () => warmStartFromPolicy(new CfrSolver(lt, leduc, {}), uniformPolicy(lt)),
    (e) => isKibitzError(e, "bad_option") && /auto/.test(e.message),
  );
  assert.throws(
    () => warmStartFromPolicy(new CfrSolver(lt, leduc, {}), uniformPolicy(lt), { weight: 0 }),
    (e) => isKibitzError(e, "bad_option"),
  );
});

Deno.test("schedule of a warm start at W: no average reset before 4 W, the reference resets after", () => {
  const p = { ...DCFR_REFERENCE, resetFrom: 40 };
  assert.ok(iterationDiscount(p, 16).gamma > 0);
  assert.equal(iterationDiscount(p, 16).gamma, (16 / 17) ** 3); // as if t had never reset
  assert.equal(iterationDiscount(p, 64).gamma, 0);
  assert.equal(iterationDiscount(p, 70).gamma, (6 / 7) ** 3);
  assert.equal(iterationDiscount(DCFR_REFERENCE, 16).gamma, 0);
  const s = new CfrSolver(lt, leduc, {});
  assert.equal(warmSchedule(s, 10), 40);
  assert.equal(s.discount.resetFrom, 40);
  assert.equal(s.options.discount?.resetFrom, 40); // worker threads build from the options
  assert.equal(warmSchedule(new CfrSolver(lt, leduc, {}), 10, "none"), Infinity);
  assert.equal(warmSchedule(new CfrSolver(lt, leduc, {}), 10, "keep"), 0);
  assert.equal(warmSchedule(new CfrSolver(lt, leduc, { algorithm: "cfr+" }), 10), 0);
});

Deno.test("a warm start at W = 10 keeps its head start through t = 16 (the reset would erase it)", () => {
  const ref = new CfrSolver(lt, leduc, {});
  ref.run(100);
  const runs = (["continue", "keep"] as const).map((resets) => {
    const s = new CfrSolver(lt, leduc, {});
    warmStartFromPolicy(s, ref.averagePolicy(), { weight: 10 });
    warmSchedule(s, 10, resets);
    s.run(7); // t = 10 .. 16
    return s.exploitability().chips;
  });
  // Continued, the average still holds the warm strategy; reset at 16, it is one iterate.
  assert.ok(runs[0] < runs[1], `continue ${runs[0]} vs keep ${runs[1]}`);
});

Deno.test("a regret margin makes regret matching on the seeded regrets return the profile", () => {
  const ref = new CfrSolver(lt, leduc, {});
  ref.run(30);
  const plain = new CfrSolver(lt, leduc, {}), kept = new CfrSolver(lt, leduc, {});
  warmStartFromPolicy(plain, ref.averagePolicy(), { weight: 10 });
  warmStartFromPolicy(kept, ref.averagePolicy(), { weight: 10, margin: 1000 });
  const want = ref.averageStrategy(0);
  const gap = (s: CfrSolver) => {
    const got = s.currentStrategy(0);
    let m = 0;
    for (let i = 0; i < got.length; i++) m = Math.max(m, Math.abs(got[i] - want[i]));
    return m;
  };
  assert.ok(gap(kept) < 0.01, `margin: ${gap(kept)}`);
  assert.ok(gap(plain) > 0.1, `no margin: ${gap(plain)}`);
});
