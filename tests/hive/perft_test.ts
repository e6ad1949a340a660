// Perft from the start position against the published counts (Mzinga, nokamute, hivegame.com).
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { perft, perftDivide } from "../../src/hive/perft.ts";

const rows = Deno.readTextFileSync(new URL("../fixtures/hive/perft.tsv", import.meta.url))
  .trim().split("\n").slice(1).map((l) => l.split("\t"));

for (const type of new Set(rows.map((r) => r[0]))) {
  Deno.test(`perft ${type} matches perft.tsv`, () => {
    const g = new HiveGame(type);
    const hash = g.hash();
    for (const [, depth, nodes] of rows.filter((r) => r[0] === type)) {
      // Depth 5 takes well under a second here thanks to bulk counting at the last ply.
      assert.equal(perft(g, Number(depth)), Number(nodes), `${type} depth ${depth}`);
    }
    assert.equal(g.hash(), hash, "perft leaves the game as it found it");
    assert.equal(g.historyLength, 0);
  });
}

Deno.test("perft divide sums to perft and names each first move", () => {
  const g = new HiveGame("Base+MLP");
  const parts = perftDivide(g, 3);
  assert.equal(parts.length, 7);
  assert.equal(parts.reduce((s, [, n]) => s + n, 0), 6678);
  assert.deepEqual(parts.map(([m]) => m).sort(), ["wA1", "wB1", "wG1", "wL", "wM", "wP", "wS1"]);
});
