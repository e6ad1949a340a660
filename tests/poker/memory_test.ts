import assert from "node:assert/strict";
import { buildTree, CfrSolver } from "../../src/cfr/mod.ts";
import { isKibitzError } from "../../src/errors.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { checkMemoryLimit, parseMemorySize } from "../../src/poker/memory.ts";
import { prepareSpot } from "../../src/poker/solve.ts";
import { SMALL_TURN_SPOT } from "../helpers/spots.ts";

Deno.test("memory: the estimate counts exactly the elements and blocks the engine allocates", () => {
  for (const [r, s] of [[32, 32], [16, 16], [8, 4]]) {
    const config = parseSolveConfig(
      SMALL_TURN_SPOT + `[solver]\nregret_bits = ${r}\nstrategy_bits = ${s}\n`,
    );
    const spot = prepareSpot(config);
    const tree = buildTree(spot.game);
    let elements = 0;
    for (let b = 0; b < tree.blockSize.length; b++) elements += tree.blockSize[b];
    assert.equal(spot.size.elements, elements);
    assert.equal(spot.size.decisionNodes, tree.blockNode.length);
    assert.equal(spot.size.publicNodes, tree.size);
    const solver = new CfrSolver(tree, spot.game, { regretBits: r, strategyBits: s });
    assert.equal(spot.memory.storageBytes, solver.storageBytes());
  }
});

Deno.test("memory: --max-memory refuses with the estimate in the message", () => {
  const spot = prepareSpot(parseSolveConfig(SMALL_TURN_SPOT));
  assert.throws(
    () => checkMemoryLimit(spot.memory, 1000),
    (e) =>
      isKibitzError(e, "over_memory") &&
      /needs about .* above --max-memory 1000 B/.test((e as Error).message),
  );
  assert.throws(() => prepareSpot(parseSolveConfig(SMALL_TURN_SPOT), 1000), /over|above/);
  assert.equal(parseMemorySize("512MB"), 512 * 1024 ** 2);
  assert.equal(parseMemorySize("1.5g"), 1.5 * 1024 ** 3);
  assert.equal(parseMemorySize("4096"), 4096);
  assert.throws(() => parseMemorySize("lots"), /not a size/);
});

Deno.test("memory: the showdown-table estimate equals what tree expansion builds, once per thread", () => {
  const flop = SMALL_TURN_SPOT.replace('turn = "Qc"\n', "").replace(
    "[bet_sizes]",
    '[bet_sizes]\nflop = "minimal"',
  );
  const river = SMALL_TURN_SPOT.replace('turn = "Qc"', 'turn = "Qc"\nriver = "2s"');
  for (const text of [SMALL_TURN_SPOT, flop, river]) {
    const spot = prepareSpot(parseSolveConfig(text + "[solver]\nthreads = 3\n"));
    const est = spot.game.estimateShowdownBytes();
    assert.ok(est > 0);
    assert.equal(spot.memory.showdownBytes, 3 * est);
    buildTree(spot.game);
    assert.equal(spot.game.showdownBytes(), est);
  }
});
