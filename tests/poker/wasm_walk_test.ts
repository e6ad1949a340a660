import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/mod.ts";
import { wasmParitySpot } from "../helpers/spots.ts";
import { walkAvailable } from "../../src/poker/wasm/walk.ts";

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
    assert.ok(!has({ regretBits: 16 }));
    assert.ok(!has({ strategyBits: 8 }));
    assert.ok(!has({ algorithm: "cfr+" }));
    assert.ok(!has({ pruning: 2 }));
    assert.ok(!has({ reachWeightedAverage: true }));
    assert.ok(!has({ wasm: false }));
    assert.ok(!has({ wasmWalk: false }));
  },
});
