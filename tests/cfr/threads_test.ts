import assert from "node:assert/strict";
import { buildTree, CfrSolver } from "../../src/cfr/mod.ts";
import { packShared, shareFields } from "../../src/cfr/threads.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { prepareSpot } from "../../src/poker/solve.ts";
import { SMALL_TURN_SPOT } from "../helpers/spots.ts";

Deno.test("threads: packShared copies arrays into one SharedArrayBuffer, 8-byte aligned", () => {
  const a = Uint8Array.from([1, 2, 3]), b = Float64Array.from([0.5, -2]);
  const c = Uint16Array.from([7, 8, 9]), d = new Int32Array(new SharedArrayBuffer(8));
  const [a2, b2, c2, d2] = packShared<
    Uint8Array | Float64Array | Uint16Array | Int32Array
  >([a, b, c, d]);
  assert.deepEqual([...a2], [1, 2, 3]);
  assert.deepEqual([...b2], [0.5, -2]);
  assert.deepEqual([...c2], [7, 8, 9]);
  assert.ok(a2 instanceof Uint8Array && b2 instanceof Float64Array && c2 instanceof Uint16Array);
  assert.ok(a2.buffer instanceof SharedArrayBuffer && a2.buffer === b2.buffer);
  assert.equal(b2.byteOffset % 8, 0);
  assert.equal(d2, d, "an array already shared stays as it is");
  const obj: Record<string, unknown> = { x: Int8Array.from([-1]), pair: [a, c], n: 3, s: ["t"] };
  shareFields(obj);
  assert.ok((obj.x as Int8Array).buffer instanceof SharedArrayBuffer);
  assert.ok((obj.pair as Uint8Array[]).every((v) => v.buffer instanceof SharedArrayBuffer));
  assert.deepEqual([...(obj.pair as Uint16Array[])[1]], [7, 8, 9]);
  assert.equal(obj.n, 3);
});

Deno.test("threads: a multi-threaded solver shares the tree and the showdown tables, values unchanged", () => {
  const spot = prepareSpot(parseSolveConfig(SMALL_TURN_SPOT));
  const tree = buildTree(spot.game);
  const before = { kind: tree.kind.slice(), blocked: tree.blockedHands[1].slice() };
  // The TypeScript threaded path (the threaded Wasm walk copies all of it into its own memory).
  const solver = new CfrSolver(tree, spot.game, { threads: 2, wasmWalk: false });
  try {
    assert.ok(tree.kind.buffer instanceof SharedArrayBuffer);
    assert.ok(tree.blockedHands[1].buffer instanceof SharedArrayBuffer);
    assert.deepEqual(tree.kind, before.kind);
    assert.deepEqual(tree.blockedHands[1], before.blocked);
    const orders = (spot.game as unknown as { orders: { order: Int32Array[] }[] }).orders;
    assert.ok(orders.length > 0);
    assert.ok(orders.every((o) => o.order[0].buffer instanceof SharedArrayBuffer));
  } finally {
    solver.close();
  }
});
