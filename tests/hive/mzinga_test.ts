// Mzinga's own rule tests: valid moves per bug type and invalid moves with the exact reason.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { movePiece } from "../../src/hive/move.ts";
import { parseMoveString } from "../../src/hive/notation.ts";
import { PIECE_BUG } from "../../src/hive/pieces.ts";

const DIR = new URL("../fixtures/hive/", import.meta.url);

/** Reads a Mzinga test CSV: [comment heading, game string, expected] per data line. */
function readCases(name: string): [string, string, string][] {
  const out: [string, string, string][] = [];
  let heading = "";
  for (const raw of Deno.readTextFileSync(new URL(name, DIR)).split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      heading = line.slice(1).trim();
      continue;
    }
    const [game, expected] = line.split("\t");
    out.push([heading, game, expected]);
  }
  return out;
}

const BUGS: [string, number][] = [
  ["QueenBee", 0],
  ["Spider", 1],
  ["Beetle", 2],
  ["Grasshopper", 3],
  ["SoldierAnt", 4],
  ["Mosquito", 5],
  ["Ladybug", 6],
  ["Pillbug", 7],
];

for (const [bugName, bug] of BUGS) {
  Deno.test(`mzinga: valid moves for ${bugName}`, () => {
    const cases = readCases(`Board_ValidMovesFor${bugName}Test.csv`);
    assert(cases.length > 0);
    for (const [heading, gameString, expected] of cases) {
      const g = HiveGame.fromGameString(gameString);
      const want = expected.split(";").map((s) => parseMoveString(g, s).move).sort((a, b) => a - b);
      // Mzinga lists the moves of the pieces it names (all of that bug type).
      const named = new Set(want.map(movePiece));
      for (const p of named) assert.equal(PIECE_BUG[p], bug);
      const got = g.validMoves().filter((m) => named.has(movePiece(m))).sort((a, b) => a - b);
      // Our formatter picks the same reference piece and side as Mzinga, string for string.
      for (const s of expected.split(";")) assert.equal(g.moveString(g.parseMove(s)), s.trim());
      assert.deepEqual(
        got.map((m) => g.moveString(m)),
        want.map((m) => g.moveString(m)),
        `${heading}: ${gameString}`,
      );
    }
  });
}

Deno.test("mzinga: invalid moves are rejected with the reference engine's reason", () => {
  const cases = readCases("Board_InvalidMovesByRuleTest.csv");
  assert(cases.length >= 20);
  for (const [reason, gameString, move] of cases) {
    const g = HiveGame.fromGameString(gameString);
    const before = g.gameString();
    const hash = g.hash();
    let message = "";
    try {
      g.playString(move);
    } catch (e) {
      message = (e as Error).message;
    }
    assert.deepEqual(message, reason, `${gameString} / ${move}`);
    assert.deepEqual(g.gameString(), before);
    assert.deepEqual(g.hash(), hash);
  }
});
