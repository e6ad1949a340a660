import assert from "node:assert/strict";
import { CFR_CHANCE, CFR_PLAYER, CfrSolver } from "../../src/cfr/mod.ts";
import { firstStreetStats, nodeSummary, rootSummary } from "../../src/poker/results.ts";
import { wasmParitySpot } from "../helpers/spots.ts";
import { threadedWalkAvailable, walkAvailable } from "../../src/poker/wasm/walk.ts";

// The Wasm training walk (src/poker/wasm/walk.ts) against the solver's TypeScript walk.

function game(board: string, rake: boolean) {
  return wasmParitySpot(board, rake);
}

const bits = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);

Deno.test({
  name:
    "wasm walk: regrets, strategy, visits, exploitability and hand values bit-identical to the TypeScript walk and the fused step (river deals, isomorphs, rake)",
  ignore: !walkAvailable(),
  fn() {
    // Turn boards: one with all four suits, one whose two absent suits make isomorphic rivers.
    for (const [board, rake] of [["Kh Qd 7c 4s", false], ["Kh Qh 7d 4d", true]] as const) {
      const { game: g, tree } = game(board, rake);
      const mk = (o: { wasm?: boolean; wasmWalk?: boolean }) =>
        new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 3, ...o });
      const ts = mk({ wasm: false }), fused = mk({ wasmWalk: false }), walk = mk({});
      assert.equal(ts.trainer, null);
      assert.equal(fused.trainer, null);
      assert.ok(walk.trainer, "the default f32 dcfr solve runs the Wasm walk");
      if (board === "Kh Qh 7d 4d") assert.ok(tree.isoWeight.length > 0, "isomorphic rivers");
      assert.ok(tree.numHands.some((h) => h % 4 !== 0), `hands ${tree.numHands}`);
      for (let k = 0; k < 3; k++) {
        for (const s of [ts, fused, walk]) s.run(3);
        for (const s of [fused, walk]) {
          assert.deepEqual(bits(s.regrets.f32!), bits(ts.regrets.f32!), `${board} regrets`);
          assert.deepEqual(bits(s.strategy.f32!), bits(ts.strategy.f32!), `${board} strategy`);
          assert.equal(s.nodeHandVisits, ts.nodeHandVisits);
          assert.deepEqual(s.exploitability(), ts.exploitability(), `${board} exploitability`);
          for (const p of [0, 1] as const) {
            // TreeEvaluator on the average policy: the trainer's walk for the solver's own policy.
            assert.deepEqual(bits(s.handValues(p)), bits(ts.handValues(p)), `${board} values`);
          }
        }
      }
      assert.ok(walk.exploitability().percent < 100);
      // The average strategy of every node (the saves and results read it) on the walk's kernel.
      let calls = 0;
      const tr = walk.trainer!, avg = tr.average!.bind(tr);
      tr.average = (...a) => (calls++, avg(...a));
      const pw = walk.averagePolicy(), pt = ts.averagePolicy();
      const a = new Float32Array(tree.maxActions * Math.max(...tree.numHands));
      const b = new Float32Array(a.length);
      for (const n of tree.blockNode) {
        a.fill(7), b.fill(7), pw(n, a), pt(n, b);
        assert.deepEqual(bits(a), bits(b), `${board} average of node ${n}`);
      }
      assert.equal(calls, tree.blockNode.length);
    }
  },
});

Deno.test({
  name:
    "wasm walk: the results' per-node values (first street, a river node) bit-identical to the TypeScript walk, chance subtrees on the Wasm walk",
  ignore: !walkAvailable(),
  fn() {
    const { game: g, tree } = game("Kh Qh 7d 4d", true);
    const mk = (o: { wasm?: boolean }) =>
      new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 3, ...o });
    const ts = mk({ wasm: false }), walk = mk({});
    let calls = 0;
    const tr = walk.trainer!, own = tr.nodeValues!.bind(tr);
    tr.nodeValues = (...a) => (calls++, own(...a));
    // The solver bound the trainer's method when it was built: count through a policy of our own.
    const fast = { tree, values: tr.rootValues.bind(tr), nodeValues: tr.nodeValues };
    const wp = Object.assign((n: number, o: Float32Array) => walk.averagePolicy()(n, o), {
      rootValues: fast,
    });
    // A river node: the first player node below a chance node.
    let river = -1;
    for (let n = 0; n < tree.size && river < 0; n++) {
      if (tree.kind[n] === CFR_PLAYER && tree.kind[tree.parent[n]] === CFR_CHANCE) river = n;
    }
    assert.ok(river > 0);
    for (const s of [ts, walk]) s.run(7);
    const pt = ts.averagePolicy();
    assert.deepEqual(firstStreetStats(tree, g, wp), firstStreetStats(tree, g, pt));
    assert.ok(calls > 0, "the chance subtrees ran on the Wasm walk");
    assert.deepEqual(
      firstStreetStats(tree, g, walk.averagePolicy()),
      firstStreetStats(tree, g, pt),
    );
    assert.deepEqual(rootSummary(tree, g, walk.averagePolicy()), rootSummary(tree, g, pt));
    for (const n of [river, tree.parent[river]]) {
      assert.deepEqual(nodeSummary(tree, g, wp, n), nodeSummary(tree, g, pt, n), `node ${n}`);
    }
  },
});

Deno.test({
  name:
    "wasm walk: the root values of the last check serve the hand values at the same iteration, not after the next",
  ignore: !walkAvailable(),
  fn() {
    const { game: g, tree } = game("Kh Qd 7c 4s", false);
    const s = new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 3 });
    const ts = new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 3, wasm: false });
    const tr = s.trainer!, own = tr.rootValues.bind(tr);
    let walks = 0;
    tr.rootValues = (...a) => (walks++, own(...a));
    for (const k of [4, 1]) {
      s.run(k), ts.run(k);
      walks = 0;
      assert.deepEqual(s.exploitability(), ts.exploitability());
      assert.equal(walks, 2, "one walk per player");
      for (const p of [0, 1] as const) {
        assert.deepEqual(bits(s.handValues(p)), bits(ts.handValues(p)));
      }
      assert.equal(walks, 2, "the hand values reuse the check's walks");
    }
  },
});

Deno.test({
  name: "wasm walk: declined where it does not apply (threads, formats, algorithms, options)",
  ignore: !walkAvailable(),
  fn() {
    const { game: g, tree } = game("Kh Qd 7c 4s", false);
    const has = (o: Record<string, unknown>) => new CfrSolver(tree, g, o).trainer !== null;
    assert.ok(has({}));
    assert.ok(has({ regretBits: 16 }), "quantized stores run on the walk");
    assert.ok(has({ strategyBits: 8 }));
    assert.ok(!has({ algorithm: "cfr+" }));
    assert.ok(!has({ pruning: 2 }));
    assert.ok(!has({ reachWeightedAverage: true }));
    assert.ok(!has({ wasm: false }));
    assert.ok(!has({ wasmWalk: false }));
  },
});

Deno.test({
  name:
    "threaded wasm walk: regrets, strategy, visits and exploitability on 2 and 3 threads bit-identical to the TypeScript threaded walk and the 1-thread Wasm walk",
  ignore: !threadedWalkAvailable(),
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    for (const [board, rake] of [["Kh Qd 7c 4s", false], ["Kh Qh 7d 4d", true]] as const) {
      const { game: g, tree } = wasmParitySpot(board, rake, true, true);
      const mk = (o: { threads: number; wasmWalk?: boolean }) =>
        new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 3, ...o });
      const one = mk({ threads: 1 }), ts = mk({ threads: 2, wasmWalk: false });
      const two = mk({ threads: 2 }), three = mk({ threads: 3 });
      try {
        assert.ok(one.trainer && !one.taskTrainer);
        assert.ok(ts.threads === 2 && !ts.trainer && !ts.taskTrainer, "TypeScript threads");
        for (const s of [two, three]) {
          assert.ok(s.taskTrainer && !s.trainer, "the threaded Wasm walk");
          assert.ok(s.tasks!.count > 1);
        }
        assert.equal(three.threads, 3);
        for (let k = 0; k < 2; k++) {
          for (const s of [one, ts, two, three]) s.run(3);
          for (const s of [ts, two, three]) {
            const what = `${board} ${s.threads} threads${s.taskTrainer ? " (Wasm)" : ""}`;
            assert.deepEqual(bits(s.regrets.f32!), bits(one.regrets.f32!), `${what}: regrets`);
            assert.deepEqual(bits(s.strategy.f32!), bits(one.strategy.f32!), `${what}: strategy`);
            assert.equal(s.nodeHandVisits, one.nodeHandVisits, `${what}: visits`);
            assert.deepEqual(s.exploitability(), one.exploitability(), `${what}: exploitability`);
          }
        }
        for (const p of [0, 1] as const) {
          assert.deepEqual(bits(two.handValues(p)), bits(ts.handValues(p)), `${board} values`);
        }
      } finally {
        for (const s of [ts, two, three]) s.close();
      }
    }
  },
});

/** The first index where two arrays differ (-1: equal): a cheap failure on large stores. */
function firstDiff(x: Uint32Array, y: Uint32Array): number {
  if (x.length !== y.length) return Math.min(x.length, y.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/** The stores of two solvers bit for bit: payload words and block scales of both. */
function sameStores(a: CfrSolver, b: CfrSolver, what: string) {
  for (const k of ["regrets", "strategy"] as const) {
    assert.equal(a[k].format, b[k].format, `${what}: ${k} format`);
    assert.equal(firstDiff(a[k].words, b[k].words), -1, `${what}: ${k} payload`);
    assert.equal(firstDiff(bits(a[k].scales), bits(b[k].scales)), -1, `${what}: ${k} scales`);
  }
}

Deno.test({
  name:
    "wasm walk: quantized stores (16/16, 8/4, 4/8, mixed with f32, both roundings) bit-identical to the TypeScript walk: payload, scales, visits, exploitability, values, averages",
  ignore: !walkAvailable(),
  fn() {
    const { game: g, tree } = game("Kh Qh 7d 4d", true);
    assert.ok(tree.numHands.some((h) => h % 8 !== 0), "4-bit blocks that share words");
    const cases: Record<string, unknown>[] = [
      { regretBits: 16, strategyBits: 16 },
      { regretBits: 8, strategyBits: 4 },
      { regretBits: 4, strategyBits: 8 },
      { regretBits: 32, strategyBits: 16 },
      { regretBits: 16, strategyBits: 32 },
      // Stochastic 16-bit regrets, nearest 4-bit strategy (the defaults are the other way).
      { regretBits: 16, strategyBits: 4, rounding: "stochastic", strategyRounding: "nearest" },
    ];
    for (const o of cases) {
      const what = JSON.stringify(o);
      const mk = (x: Record<string, unknown>) => new CfrSolver(tree, g, { seed: 5, ...o, ...x });
      const ts = mk({ wasmWalk: false }), walk = mk({});
      assert.equal(ts.trainer, null);
      assert.ok(walk.trainer, `${what}: the walk runs`);
      for (let k = 0; k < 2; k++) {
        for (const s of [ts, walk]) s.run(3);
        sameStores(walk, ts, what);
        assert.equal(walk.nodeHandVisits, ts.nodeHandVisits);
        assert.deepEqual(walk.exploitability(), ts.exploitability(), `${what}: exploitability`);
      }
      for (const p of [0, 1] as const) {
        assert.deepEqual(bits(walk.handValues(p)), bits(ts.handValues(p)), `${what}: values`);
      }
      const pw = walk.averagePolicy(), pt = ts.averagePolicy();
      const a = new Float32Array(tree.maxActions * Math.max(...tree.numHands));
      const b = new Float32Array(a.length);
      for (const n of tree.blockNode) {
        a.fill(7), b.fill(7), pw(n, a), pt(n, b);
        assert.deepEqual(bits(a), bits(b), `${what}: average of node ${n}`);
      }
    }
  },
});

Deno.test({
  name:
    "threaded wasm walk: quantized stores (16/16, 8/4) on 2 and 3 threads bit-identical to the TypeScript threaded and 1-thread walks, stores in the shared memory",
  ignore: !threadedWalkAvailable(),
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    const { game: g, tree } = wasmParitySpot("Kh Qd 7c 4s", false, true, true);
    for (const [rb, sb] of [[16, 16], [8, 4]]) {
      const mk = (o: { threads: number; wasmWalk?: boolean }) =>
        new CfrSolver(tree, g, { regretBits: rb, strategyBits: sb, seed: 3, ...o });
      const one = mk({ threads: 1, wasmWalk: false }), ts = mk({ threads: 2, wasmWalk: false });
      const two = mk({ threads: 2 }), three = mk({ threads: 3 });
      try {
        assert.ok(ts.threads === 2 && !ts.taskTrainer, "TypeScript threads");
        for (const s of [two, three]) {
          assert.ok(s.taskTrainer && !s.trainer, "the threaded Wasm walk");
          for (const k of ["regrets", "strategy"] as const) {
            assert.ok(s[k].words.buffer instanceof SharedArrayBuffer, "payload in shared memory");
            assert.equal(s[k].scales.buffer, s[k].words.buffer, "scales beside it");
          }
        }
        for (let k = 0; k < 2; k++) {
          for (const s of [one, ts, two, three]) s.run(2);
          for (const s of [ts, two, three]) {
            const what = `${rb}/${sb} ${s.threads} threads${s.taskTrainer ? " (Wasm)" : ""}`;
            sameStores(s, one, what);
            assert.equal(s.nodeHandVisits, one.nodeHandVisits, `${what}: visits`);
            assert.deepEqual(s.exploitability(), one.exploitability(), `${what}: exploitability`);
          }
        }
      } finally {
        for (const s of [ts, two, three]) s.close();
      }
    }
  },
});
