import assert from "node:assert/strict";
import { buildTree, CfrSolver } from "../../src/cfr/mod.ts";
import { buildActionTree, type TreeConfig } from "../../src/poker/action_tree.ts";
import { parseBetSizes } from "../../src/poker/bet_size.ts";
import { parseCards } from "../../src/poker/cards.ts";
import { PostflopGame } from "../../src/poker/game.ts";
import { parseRange } from "../../src/poker/range.ts";
import { walkAvailable } from "../../src/poker/wasm/walk.ts";

// The Wasm training walk (src/poker/wasm/walk.ts) against the solver's TypeScript walk.

function game(board: string, rake: boolean) {
  const s = parseBetSizes("50%, 100%", "60%");
  const cards = parseCards(board);
  const cfg: TreeConfig = {
    startingStreet: (cards.length - 3) as 0 | 1 | 2,
    startingPot: 100,
    effectiveStack: 150,
    rakeRate: rake ? 0.05 : 0,
    rakeCap: rake ? 3 : 0,
    betSizes: [[s, s], [s, s], [s, s]],
    donkSizes: [null, null],
    addAllinThreshold: 0,
    forceAllinThreshold: 0,
    mergingThreshold: 0,
  };
  const g = new PostflopGame(buildActionTree(cfg), cards, [
    parseRange("22+,A2s+,K9o+,QTs+,76s,65s"),
    parseRange("TT-44,AQo+,KTs+,T9s:0.5,98s,AhKh"),
  ]);
  return { game: g, tree: buildTree(g) };
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
