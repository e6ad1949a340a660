import assert from "node:assert/strict";
import { buildTree, CFR_PLAYER, findNode, nodePath } from "../../src/cfr/tree.ts";
import type { CfrGame, CfrNode } from "../../src/cfr/game.ts";
import { leducGame } from "../../src/games/leduc.ts";

Deno.test("tree is breadth-first: levels contiguous, children contiguous one level down", () => {
  const t = buildTree(leducGame());
  assert.equal(t.levelStart[0], 0);
  assert.equal(t.levelStart[t.levels], t.size);
  for (let d = 0; d < t.levels; d++) {
    for (let n = t.levelStart[d]; n < t.levelStart[d + 1]; n++) assert.equal(t.depth[n], d);
  }
  let expectNext = 1;
  for (let n = 0; n < t.size; n++) {
    if (t.numChildren[n] === 0) continue;
    assert.equal(t.firstChild[n], expectNext, `children of ${n} follow the previous node's`);
    for (let c = t.firstChild[n]; c < t.firstChild[n] + t.numChildren[n]; c++) {
      assert.equal(t.parent[c], n);
      assert.equal(t.depth[c], t.depth[n] + 1);
    }
    expectNext += t.numChildren[n];
  }
  assert.equal(expectNext, t.size);
});

Deno.test("player nodes own blocks of actions x hands in node order", () => {
  const t = buildTree(leducGame());
  let b = 0;
  for (let n = 0; n < t.size; n++) {
    if (t.kind[n] !== CFR_PLAYER) {
      assert.equal(t.block[n], -1);
      continue;
    }
    assert.equal(t.block[n], b);
    assert.equal(t.blockNode[b], n);
    assert.equal(t.blockSize[b], t.numChildren[n] * 6);
    b++;
  }
});

Deno.test("findNode and nodePath are inverse; a missing step is a clear error", () => {
  const t = buildTree(leducGame());
  const n = findNode(t, ["b", "r", "c", "Kh", "k", "b"]);
  assert.deepEqual(nodePath(t, n), ["b", "r", "c", "Kh", "k", "b"]);
  assert.deepEqual(t.numChildren[n], 3);
  assert.throws(() => findNode(t, ["b", "x"]), /no child "x" after \[b\]/);
});

Deno.test("bad games are rejected with the node named", () => {
  const bad: CfrGame<number> = {
    name: "bad",
    numHands: [1, 1],
    startingPot: 1,
    initialWeights: () => new Float32Array(1),
    root: () => 0,
    describe: (s): CfrNode =>
      s === 0
        ? { kind: "chance", outcomes: [{ label: "x", weight: 1, blocked: [[3], []] }] }
        : { kind: "terminal", terminal: 0 },
    child: (s) => s + 1,
    compatibleSums: () => {},
    terminalValues: () => {},
  };
  assert.throws(() => buildTree(bad), /blocked hand 3 of player 0 out of range/);
  const perm = Uint32Array.from([0]), notPerm = Uint32Array.from([0, 0]);
  const badIso: CfrGame<number> = {
    ...bad,
    numHands: [2, 1],
    describe: (s): CfrNode =>
      s === 0
        ? {
          kind: "chance",
          outcomes: [{
            label: "x",
            weight: 0.5,
            blocked: [[], []],
            isomorphs: [{ label: "y", weight: 0.5, permutation: [notPerm, perm] }],
          }],
        }
        : { kind: "terminal", terminal: 0 },
  };
  assert.throws(() => buildTree(badIso), /isomorph y needs a permutation of player 0's 2 hands/);
});

Deno.test("tree columns: any size hint and shared memory give the same tree", () => {
  const base = buildTree(leducGame());
  for (const [hint, shared] of [[1, false], [base.size, false], [base.size, true], [7, true]]) {
    const t = buildTree(leducGame(), 50_000_000, hint as number, shared as boolean);
    for (const [k, v] of Object.entries(base)) {
      const w = (t as unknown as Record<string, unknown>)[k];
      if (ArrayBuffer.isView(v)) {
        assert.deepEqual(Array.from(w as Uint32Array), Array.from(v as Uint32Array), k);
        assert.equal((w as Uint32Array).buffer instanceof SharedArrayBuffer, shared, k);
      } else if (k !== "permutations") assert.deepEqual(w, v, k);
    }
  }
});
