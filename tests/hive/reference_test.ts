// The fast generator against a naive one written straight from the rules, on random games.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { GAME_TYPES } from "../../src/hive/pieces.ts";
import { xorshift32 } from "../../src/hive/playout.ts";
import { referenceMoves } from "./reference_movegen.ts";

for (const type of GAME_TYPES) {
  Deno.test(`movegen ${type} equals the naive reference on random games`, () => {
    let positions = 0, moves = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const g = new HiveGame(type);
      const rand = xorshift32(seed * 7919 + type.length);
      for (let ply = 0; ply < 90 && !g.isOver(); ply++) {
        const fast = g.validMoves().sort((a, b) => a - b);
        const ref = referenceMoves(g);
        if (fast.join() !== ref.join()) {
          const name = (m: number) => g.moveString(m);
          const extra = fast.filter((m) => !ref.includes(m)).map(name);
          const missing = ref.filter((m) => !fast.includes(m)).map(name);
          assert.fail(`${g.gameString()}\nextra: ${extra}\nmissing: ${missing}`);
        }
        positions++;
        moves += fast.length;
        g.play(fast[Math.floor(rand() * fast.length)]);
      }
    }
    assert.ok(positions > 100 && moves > positions);
  });
}

Deno.test("pillbug cannot lift a piece through a gate of two stacks", () => {
  // Found by search: wS2 sits between two stacks of height 2 on its way up onto the pillbug.
  const g = HiveGame.fromGameString(
    "Base+LP;InProgress;White[17];wS1;bS1 -wS1;wS2 wS1-;bB1 \\bS1;wP wS1\\;bS2 /bS1;wQ wS2/;" +
      "bQ /bS2;wG1 wQ\\;bB1 bS1;wP bB1\\;bB1 wP;wQ \\wS2;bB1 bS2;wG2 wS2\\;bB1 bS1;wL wS1\\;" +
      "bB1 bS2;wL wP\\;bB1 bS1;wQ \\wG1;bB2 bQ\\;wL -wQ;bA1 \\bB1;wQ wG1/;bB1 wS1;wB1 /wG2;" +
      "bG1 -bA1;wB1 wG2;bB1 wL;wP wS1\\;bB1 wS1",
  );
  const fast = g.validMoves().sort((a, b) => a - b);
  assert.deepEqual(fast, referenceMoves(g));
  for (const s of ["wS2 bS1\\", "wS2 wP\\", "wS2 /wP"]) {
    assert.ok(!fast.includes(g.parseMove(s)), s);
  }
});
