// The fast generator against a naive one written straight from the rules, on thousands of random
// positions of every game type, and against Mzinga's full move lists for real championship games.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { GAME_TYPES } from "../../src/hive/pieces.ts";
import { xorshift32 } from "../../src/hive/playout.ts";
import { referenceMoves } from "./reference_movegen.ts";

/** Positions compared per game type (about 4,000 in all, some seconds on one core). */
const POSITIONS_PER_TYPE = 500;

function compare(g: HiveGame, fast: number[]): void {
  const ref = referenceMoves(g);
  if (fast.join() !== ref.join()) {
    const name = (m: number) => g.moveString(m);
    const extra = fast.filter((m) => !ref.includes(m)).map(name);
    const missing = ref.filter((m) => !fast.includes(m)).map(name);
    assert.fail(`${g.gameString()}\nextra: ${extra}\nmissing: ${missing}`);
  }
}

for (const type of GAME_TYPES) {
  Deno.test(`movegen ${type} equals the naive reference on ${POSITIONS_PER_TYPE} random positions`, () => {
    let positions = 0, moves = 0, stacked = 0;
    for (let seed = 1; positions < POSITIONS_PER_TYPE; seed++) {
      const g = new HiveGame(type);
      const rand = xorshift32(seed * 7919 + type.length);
      // Odd seeds play uniformly; even seeds prefer climbing onto the hive, which builds the
      // stacks and gates (beetle gates, pillbug throws between stacks) uniform play rarely reaches.
      const climber = seed % 2 === 0;
      for (let ply = 0; ply < 120 && !g.isOver() && positions < POSITIONS_PER_TYPE; ply++) {
        const fast = g.validMoves().sort((a, b) => a - b);
        compare(g, fast);
        positions++;
        moves += fast.length;
        let pick = fast[Math.floor(rand() * fast.length)];
        if (climber && rand() < 0.6) {
          const up = fast.filter((m) => g.height[m & 1023] > 0);
          if (up.length) pick = up[Math.floor(rand() * up.length)];
        }
        g.play(pick);
        if (g.height.some((h) => h > 1)) stacked++;
      }
    }
    assert.ok(moves > positions * 5, `${moves} moves in ${positions} positions`);
    assert.ok(stacked > POSITIONS_PER_TYPE / 4, `only ${stacked} positions with a stack`);
  });
}

Deno.test("mzinga: every move of every position of three championship games (Base+MLP)", () => {
  const url = new URL("../fixtures/hive/Board_ValidMovesFromRealGamesTest.csv", import.meta.url);
  let positions = 0, moves = 0;
  for (const line of Deno.readTextFileSync(url).split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const [gameString, expected] = line.split("\t");
    const g = HiveGame.fromGameString(gameString);
    const want = expected.trim() === "" ? [] : expected.trim().split(";");
    const got = g.validMoves().map((m) => g.moveString(m));
    // Same set, and each move written with the reference piece and side Mzinga picks.
    assert.deepEqual([...got].sort(), [...want].sort(), gameString);
    compare(g, g.validMoves().sort((a, b) => a - b));
    positions++;
    moves += want.length;
  }
  assert.ok(positions > 190 && moves > 10000, `${positions} positions, ${moves} moves`);
});

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
