// Finished games are scored from the position (who is surrounded), never from who moved last.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { BLACK_WINS, DRAW, WHITE_WINS } from "../../src/hive/state.ts";
import { searchBestMove, terminalScore } from "../../src/uhp/alphabeta.ts";

const WIN = 1_000_000;

// Found by random playout: White's wA1 -wG1 fills the last cell around White's own queen.
const SELF_SURROUND =
  "Base;InProgress;White[20];wS1;bS1 wS1/;wG1 /wS1;bB1 \\bS1;wB1 wS1\\;bQ \\bB1;wQ /wG1;" +
  "bB2 bQ/;wB2 wG1\\;bB2 \\bQ;wB2 wB1\\;bA1 bB1/;wA1 /wQ;bA1 -bB2;wS2 wG1\\;bG1 bA1\\;" +
  "wA1 /bA1;bG1 -wA1;wG2 wQ\\;bA2 \\bB2;wA2 -wG1;bA3 /bQ;wA2 wB2\\;bS2 bS1/;wB1 wS2;" +
  "bG2 -bA2;wA2 wB2/;bA2 -wS1;wB1 wB2;bA2 /wQ;wA2 /bG2;bA2 /bA3;wG3 /wQ;bG3 bB2/;" +
  "wA1 /bG1;bA2 bA1\\;wA3 -wQ;bS2 bG3-";
// Found by random playout: Black's bB1 bG1\ surrounds both queens at once.
const DOUBLE_SURROUND =
  "Base;InProgress;Black[22];wS1;bS1 \\wS1;wS2 /wS1;bQ \\bS1;wA1 wS1-;bQ bS1/;wQ wA1/;" +
  "bS2 \\bQ;wB1 wS1\\;bG1 bQ/;wB1 wA1;bG2 \\bS2;wA2 wQ/;bB1 /bS2;wA3 wA2/;bG3 \\bG1;" +
  "wB2 wB1\\;bB1 bS2;wA3 /wS2;bB2 \\bG3;wB1 wQ\\;bG3 \\bB2;wA3 wB1\\;bA1 /bG2;wA3 -bA1;" +
  "bA2 -bG3;wA2 /wB2;bB1 bG1;wA2 /wA3;bA2 /wA2;wG1 wS2\\;bA2 bB2/;wQ bQ\\;bB1 bG1/;" +
  "wA2 /wS2;bA2 wB1/;wA2 wB1\\;bA2 -wA3;wA2 \\bA2;bB1 bG1-;wA2 bA1\\;bA2 \\wB1;wG2 wB2\\";

/** Mzinga's test CSV lines: [position, depth, expected move] under their `#` headings. */
function mzingaCases(
  name: string,
): { heading: string; game: string; depth: number; move: string }[] {
  const url = new URL(`../fixtures/hive/${name}`, import.meta.url);
  const out = [];
  let heading = "";
  for (const line of Deno.readTextFileSync(url).split("\n")) {
    if (line.startsWith("#")) heading = line.slice(1).trim();
    else if (line.trim() !== "") {
      const [game, depth, move] = line.split("\t");
      out.push({ heading, game, depth: Number(depth), move: move.trim() });
    }
  }
  return out;
}

Deno.test("outcome for the side to move comes from the queens, not from who moved", () => {
  const g = HiveGame.fromGameString(SELF_SURROUND);
  assert.equal(g.outcomeForSideToMove(), null);
  g.playString("wA1 -wG1"); // White surrounds its own queen
  assert.equal(g.state, BLACK_WINS);
  assert.equal(g.colorToMove, 1);
  assert.equal(g.outcomeForSideToMove(), 1, "Black, to move, has won");
  assert.equal(terminalScore(g, 1), WIN - 1);
  const d = HiveGame.fromGameString(DOUBLE_SURROUND);
  d.playString("bB1 bG1\\");
  assert.equal(d.state, DRAW);
  assert.equal(d.outcomeForSideToMove(), 0);
  assert.equal(terminalScore(d, 3), 0);
});

Deno.test("alpha-beta never plays a move that surrounds its own queen", () => {
  const g = HiveGame.fromGameString(SELF_SURROUND);
  const suicide = g.parseMove("wA1 -wG1");
  for (const depth of [1, 2]) {
    const r = searchBestMove(g, { depth });
    assert.notEqual(r.move, suicide, `depth ${depth} chose ${g.moveString(r.move)}`);
    assert.ok(Math.abs(r.score) < WIN - 1000, `depth ${depth}: no win here, score ${r.score}`);
  }
});

Deno.test("alpha-beta scores a move that surrounds both queens as a draw", () => {
  const g = HiveGame.fromGameString(DOUBLE_SURROUND);
  const draw = g.parseMove("bB1 bG1\\");
  g.play(draw);
  assert.equal(g.state, DRAW);
  g.undo();
  // Restricted to that move at the root, a 1-ply search must report exactly 0.
  const r = searchBestMove(g, { depth: 1, rootMoves: [draw] });
  assert.equal(r.move, draw);
  assert.ok(r.score === 0, `score ${r.score}`);
});

Deno.test("Mzinga: block the opponent's winning move (the engine used to surround its own queen instead)", () => {
  for (const c of mzingaCases("GameAI_BlockWinningMoveIsBestMoveTest.csv")) {
    const g = HiveGame.fromGameString(c.game);
    const r = searchBestMove(g, { depth: c.depth });
    assert.equal(g.moveString(r.move), c.move, `${c.heading}: ${c.game}`);
    g.play(r.move);
    assert.equal(g.outcomeForSideToMove(), null, "the chosen move does not end the game");
  }
});

Deno.test("Mzinga puzzles to 4 plies: the one move that forces a win, or forces the opponent's only replies to lose", () => {
  const cases = mzingaCases("PuzzleCandidate_IsOneBestMoveToForceWinPuzzleTest.csv")
    .filter((c) => c.depth <= 4);
  assert.ok(cases.length >= 14);
  assert.ok(cases.some((c) => /suicide/.test(c.heading)), "includes the forced-suicide puzzles");
  for (const c of cases) {
    const g = HiveGame.fromGameString(c.game);
    const r = searchBestMove(g, { depth: c.depth });
    assert.equal(g.moveString(r.move), c.move, `${c.heading}: ${c.game}`);
    assert.ok(r.score > WIN - 1000, `${c.heading}: a proven win, got ${r.score}`);
  }
});

Deno.test("the opponent's only reply surrounds its own queen: a forced win two plies deep", () => {
  // Mzinga's 2-ply suicide puzzle: after wB1 bQ\, every Black move completes Black's own surround.
  const c = mzingaCases("PuzzleCandidate_IsOneBestMoveToForceWinPuzzleTest.csv")
    .find((c) => c.depth === 2)!;
  const g = HiveGame.fromGameString(c.game);
  g.playString(c.move);
  const replies = g.validMoves();
  assert.ok(replies.length >= 1);
  for (const m of replies) {
    g.play(m);
    assert.equal(g.state, WHITE_WINS, `${g.moveString(m)} loses for Black`);
    g.undo();
  }
  g.undo();
  const r = searchBestMove(g, { depth: 2 });
  assert.equal(g.moveString(r.move), c.move);
  assert.equal(r.score, WIN - 2);
});
