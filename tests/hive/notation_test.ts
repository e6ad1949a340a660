// UHP strings: game types, move strings (every separator), errors, and the bare first move.
import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { cellAt, neighbor } from "../../src/hive/grid.ts";
import { makeMove, PASS } from "../../src/hive/move.ts";
import {
  GAME_TYPES,
  gameTypeString,
  parseGameType,
  parsePieceName,
} from "../../src/hive/pieces.ts";

Deno.test("GameTypeString parses and formats all eight types", () => {
  GAME_TYPES.forEach((t, mask) => {
    assert.equal(parseGameType(t), mask);
    assert.equal(gameTypeString(mask), t);
  });
  assert.equal(parseGameType("base+pml"), 7);
  for (const bad of ["", "Base+", "Base+MM", "Base+X", "Hive", "Base+MLPQ"]) {
    assert.throws(() => parseGameType(bad), (e) => isKibitzError(e, "bad_game_type"), bad);
  }
});

Deno.test("MoveString separators name the six neighbours and the top of a piece", () => {
  const g = new HiveGame("Base");
  g.playString("wS1");
  const a = parsePieceName("wA1"), s1 = g.pieceCell[parsePieceName("wS1")];
  assert.equal(s1, cellAt(0, 0));
  // "\\X" NW, "X/" NE, "X-" E, "X\\" SE, "/X" SW, "-X" W: directions 0..5 from X.
  const forms = ["wA1 \\wS1", "wA1 wS1/", "wA1 wS1-", "wA1 wS1\\", "wA1 /wS1", "wA1 -wS1"];
  forms.forEach((f, d) => assert.equal(g.parseMove(f), makeMove(a, neighbor(s1, d)), f));
  assert.equal(g.parseMove("wA1 wS1"), makeMove(a, s1));
  assert.equal(g.parseMove(" PASS "), PASS);
  assert.equal(g.parseMove("Wa1  -ws1"), makeMove(a, neighbor(s1, 5)), "case and spacing");
  for (const bad of ["", "wA4", "xA1", "wA1 -", "wA1 -wS1-", "wA1 =wS1", "wA1 wS1 x"]) {
    assert.throws(() => g.parseMove(bad), (e) => isKibitzError(e, "bad_move"), bad);
  }
  assert.throws(() => g.parseMove("wA1 -bQ"), (e) => isKibitzError(e, "invalid_move"));
});

Deno.test("the first move is written bare and lands on the origin", () => {
  const g = new HiveGame("Base+L");
  const m = g.parseMove("wL");
  assert.equal(g.moveString(m), "wL");
  g.play(m, null);
  assert.equal(g.gameString(), "Base+L;InProgress;Black[1];wL");
  const reply = g.validMoves().map((x) => g.moveString(x));
  assert.equal(reply.length, 5 * 6); // bS1 bB1 bG1 bA1 bL (no Queen) x six neighbours
  assert.ok(reply.includes("bL wL-") && reply.includes("bA1 \\wL"));
});

Deno.test("moves played as numbers are formatted in the GameString", () => {
  const g = new HiveGame("Base");
  for (const s of ["wG1", "bG1 wG1-", "wQ -wG1", "bQ bG1-", "wG1 bQ-"]) {
    g.play(g.parseMove(s)); // no text kept: the GameString formats the moves itself
  }
  assert.equal(g.gameString(), "Base;InProgress;Black[3];wG1;bG1 wG1-;wQ -wG1;bQ bG1-;wG1 bQ-");
});
