import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { buildTree, findNode } from "../../src/cfr/tree.ts";
import { labelMapper, warmStart, type WarmStartMapper } from "../../src/cfr/warmstart.ts";
import { isKibitzError } from "../../src/errors.ts";
import { kuhnGame } from "../../src/games/kuhn.ts";
import { leducGame } from "../../src/games/leduc.ts";
import { decodeAll, decodeBlock } from "../../src/quant/mod.ts";

const leduc = leducGame();
const tree = buildTree(leduc);

Deno.test("warm start into the identical tree with W = T continues at the same exploitability", () => {
  // T = 16 is a power of 4: the reference schedule zeroes the cumulative strategy at t = 16, so after
  // one more iteration the warm solver (regrets copied, strategy sum empty) equals the original.
  const small = new CfrSolver(tree, leduc, {});
  small.run(16);
  const large = new CfrSolver(tree, leduc, {});
  const rep = warmStart(small, large, { weight: 16 });
  assert.equal(rep.startIteration, 16);
  assert.equal(large.iteration, 16);
  assert.equal(rep.nodes, tree.blockNode.length);
  assert.equal(rep.unmatched, 0);
  assert.deepEqual(rep.warnings, []);
  assert.deepEqual(decodeAll(large.regrets), decodeAll(small.regrets));
  small.run(12);
  large.run(12);
  assert.equal(large.exploitability().chips, small.exploitability().chips);
  assert.ok(small.exploitability().chips < 0.5);
});

Deno.test("warm start scales regrets by W / T_small and restarts at t = W", () => {
  const small = new CfrSolver(tree, leduc, {});
  small.run(16);
  const large = new CfrSolver(tree, leduc, {});
  const rep = warmStart(small, large, { weight: 10 });
  assert.equal(rep.factor, 10 / 16);
  assert.equal(large.iteration, 10);
  const r = decodeAll(small.regrets), w = decodeAll(large.regrets);
  let nonzero = 0;
  for (let i = 0; i < r.length; i++) {
    assert.equal(w[i], Math.fround(0.625 * r[i]));
    if (r[i] !== 0) nonzero++;
  }
  assert.ok(nonzero > r.length / 4);
  // The cumulative strategy is not transferred.
  assert.ok(decodeAll(large.strategy).every((x) => x === 0));
});

Deno.test("warm start accumulates mapped shares per action (hand-computed root block)", () => {
  const small = new CfrSolver(tree, leduc, {});
  small.run(8);
  const large = new CfrSolver(tree, leduc, {});
  const base = labelMapper(tree, tree);
  // At the root: small action 0 goes 25% / 75% to large 0 / 1, small action 1 entirely to large 0.
  const mapper: WarmStartMapper = (s, l) => {
    const m = base(s, l);
    if (s !== 0) return m;
    const A = tree.numChildren[0];
    m.weights.fill(0);
    m.weights[0 * A + 0] = 0.25, m.weights[0 * A + 1] = 0.75, m.weights[1 * A + 0] = 1;
    return m;
  };
  warmStart(small, large, { weight: 4, mapper });
  const A = tree.numChildren[0], H = tree.numHands[0];
  assert.equal(A, 2);
  const R = new Float32Array(A * H), out = new Float32Array(A * H);
  decodeBlock(small.regrets, tree.block[0], R);
  decodeBlock(large.regrets, tree.block[0], out);
  const f = 4 / 8;
  for (let h = 0; h < H; h++) {
    const e0 = Math.fround(Math.fround(0.25 * f) * R[h]) + Math.fround(f * R[H + h]);
    const e1 = Math.fround(Math.fround(0.75 * f) * R[h]);
    assert.equal(out[h], Math.fround(e0), `hand ${h} action 0`);
    assert.equal(out[H + h], e1, `hand ${h} action 1`);
  }
  // Below the root, the label mapping copies (scaled) regrets.
  const n = findNode(tree, ["k", "b"]);
  const b = tree.block[n], size = tree.blockSize[b];
  const rs = new Float32Array(size), rl = new Float32Array(size);
  decodeBlock(small.regrets, b, rs), decodeBlock(large.regrets, b, rl);
  for (let i = 0; i < size; i++) assert.equal(rl[i], Math.fround(0.5 * rs[i]));
});

Deno.test("signed regrets into dcfr+ unsigned 8-bit storage clip negatives and warn", () => {
  const small = new CfrSolver(tree, leduc, {});
  small.run(16);
  const large = new CfrSolver(tree, leduc, { algorithm: "dcfr+", regretBits: 8, seed: 3 });
  assert.equal(large.regrets.format, "u8");
  const rep = warmStart(small, large, { weight: 16 });
  assert.ok(rep.clipped > 0);
  assert.ok(rep.warnings.some((w) => w.includes("drops precision")));
  assert.ok(rep.warnings.some((w) => w.includes("clipped to 0")));
  assert.ok(rep.warnings.some((w) => w.includes("across algorithms")));
  const r = decodeAll(small.regrets), w = decodeAll(large.regrets);
  for (let b = 0; b < large.regrets.blocks; b++) {
    const step = large.regrets.scales[b] / 255;
    for (let i = large.regrets.offsets[b]; i < large.regrets.offsets[b + 1]; i++) {
      const want = Math.max(0, r[i]);
      assert.ok(w[i] >= 0);
      assert.ok(Math.abs(w[i] - want) <= step * 1.0001, `element ${i}: ${w[i]} vs ${want}`);
    }
  }
  // The warm-started dcfr+ solve still runs and improves.
  large.run(20);
  assert.ok(large.exploitability().chips < 1);
});

Deno.test("8-bit regrets into f32 copy exactly; pdcfr+ predictions start at zero", () => {
  const small = new CfrSolver(tree, leduc, { regretBits: 8 });
  small.run(16);
  const large = new CfrSolver(tree, leduc, { algorithm: "pdcfr+" });
  const rep = warmStart(small, large, { weight: 16 });
  assert.ok(!rep.warnings.some((w) => w.includes("drops precision")));
  const r = decodeAll(small.regrets), w = decodeAll(large.regrets);
  for (let i = 0; i < r.length; i++) assert.equal(w[i], Math.max(0, r[i]));
  assert.ok(decodeAll(large.predicted!).every((x) => x === 0));
  const unsignedToSigned = new CfrSolver(tree, leduc, { regretBits: 16 });
  const from = new CfrSolver(tree, leduc, { algorithm: "dcfr+", regretBits: 8 });
  from.run(16);
  warmStart(from, unsignedToSigned, { weight: 16 });
  const u = decodeAll(from.regrets), s = decodeAll(unsignedToSigned.regrets);
  for (let b = 0; b < from.regrets.blocks; b++) {
    const step = unsignedToSigned.regrets.scales[b] / 32767;
    for (let i = from.regrets.offsets[b]; i < from.regrets.offsets[b + 1]; i++) {
      assert.ok(Math.abs(s[i] - u[i]) <= step * 0.51, `element ${i}`);
    }
  }
});

Deno.test("warm start rejects different hands and an unsolved small tree", () => {
  const kuhn = kuhnGame();
  const k = new CfrSolver(buildTree(kuhn), kuhn, {});
  k.run(2);
  assert.throws(
    () => warmStart(k, new CfrSolver(tree, leduc, {})),
    (e) => isKibitzError(e, "warmstart_mismatch") && /hands/.test(e.message),
  );
  assert.throws(
    () => warmStart(new CfrSolver(tree, leduc, {}), new CfrSolver(tree, leduc, {})),
    (e) => isKibitzError(e, "bad_option") && /iteration count is 0/.test(e.message),
  );
  assert.throws(
    () => warmStart(k, new CfrSolver(buildTree(kuhn), kuhn, {}), { weight: -1 }),
    (e) => isKibitzError(e, "bad_option"),
  );
});
