// UHP engine transcripts: every command and error path, replies always ending in "ok".
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { parseUhpTime, UhpEngine, type UhpPlayer } from "../../src/uhp/engine.ts";
import { randomGame } from "../../src/hive/playout.ts";

/** Runs a transcript of [command, expected reply without the final ok] pairs. */
function transcript(e: UhpEngine, steps: [string, string | RegExp][]): void {
  for (const [cmd, want] of steps) {
    const reply = e.handle(cmd);
    assert.ok(reply.endsWith("ok"), `${cmd}: ${reply}`);
    const body = reply === "ok" ? "" : reply.slice(0, -3);
    if (typeof want === "string") assert.equal(body, want, cmd);
    else assert.match(body, want, cmd);
  }
}

Deno.test("uhp: info, newgame, play, pass errors, validmoves, undo", () => {
  const e = new UhpEngine();
  transcript(e, [
    ["info", "id Kibitz 0.1.0\nMosquito;Ladybug;Pillbug"],
    ["validmoves", "err No game in progress. Try 'newgame' to start a new game."],
    ["play wS1", "err No game in progress. Try 'newgame' to start a new game."],
    ["newgame", "Base;NotStarted;White[1]"],
    ["newgame Base+MLP", "Base+MLP;NotStarted;White[1]"],
    ["validmoves", "wS1;wB1;wG1;wA1;wM;wL;wP"],
    ["play wQ", "invalidmove You can't play your Queen Bee on your first turn."],
    ["pass", "invalidmove You can't pass when you have valid moves."],
    ["play wS1", "Base+MLP;InProgress;Black[1];wS1"],
    ["play bM wS1-", "Base+MLP;InProgress;White[2];wS1;bM wS1-"],
    ["play wA2 -wS1", /^invalidmove When there are multiple pieces/],
    ["play bA1 -wS1", "invalidmove It's not that player's turn."],
    ["play wA1 -bQ", "invalidmove The reference piece bQ is not in play."],
    ["play wA1 -wS1", "Base+MLP;InProgress;Black[2];wS1;bM wS1-;wA1 -wS1"],
    ["undo", "Base+MLP;InProgress;White[2];wS1;bM wS1-"],
    ["undo 3", "err Unable to undo 3 moves; only 2 played."],
    ["undo x", 'err Invalid undo count "x"; expected a positive integer.'],
    ["undo 2", "Base+MLP;NotStarted;White[1]"],
    ["play", "err play needs a MoveString, e.g. play wA1 -bQ"],
    ["play wX9 ~", /^err "wX9 ~" is not a UHP MoveString/],
    ["frobnicate", "err Invalid command. Try 'help' to see a list of valid commands."],
    ["", ""],
  ]);
});

Deno.test("uhp: newgame with a GameString, bad game strings, perft extension", () => {
  const e = new UhpEngine();
  const gs = "Base+M;InProgress;White[2];wS1;bM wS1-";
  transcript(e, [
    [`newgame ${gs}`, gs],
    ["perft 2", String(countPerft(gs))],
    ["perft 99", 'err Invalid perft depth "99"; expected 0..6.'],
    ["newgame Base+Q", /^err "Base\+Q" is not a game type/],
    [
      "newgame Base;InProgress;White[2];wQ",
      /^err move 1 "wQ" of the GameString: You can't play your Queen/,
    ],
    ["newgame Base;Sideways;White[1]", 'err "Sideways" is not a GameState'],
  ]);
  // A failed newgame keeps the previous game.
  assert.equal(e.game?.gameString(), gs);
});

/** Depth-2 leaf count by plain enumeration (no bulk counting). */
function countPerft(gs: string): number {
  const g = HiveGame.fromGameString(gs);
  let n = 0;
  for (const m of g.validMoves()) {
    g.play(m);
    n += g.validMoves().length;
    g.undo();
  }
  return n;
}

Deno.test("uhp: options get/set and errors", () => {
  const e = new UhpEngine();
  transcript(e, [
    [
      "options",
      "BestMoveDepth;int;2;2;1;12\nBestMoveMaxTime;int;10;10;1;3600\nPerftMaxTime;int;10;10;1;3600",
    ],
    ["options get BestMoveDepth", "BestMoveDepth;int;2;2;1;12"],
    ["options set BestMoveDepth 3", "BestMoveDepth;int;3;2;1;12"],
    ["options set BestMoveDepth 99", 'err Invalid value "99" for BestMoveDepth; expected 1..12.'],
    ["options get Nope", /^err Unknown option "Nope"/],
    ["options fly", /^err Invalid options command/],
  ]);
});

Deno.test("uhp: bestmove by depth and time returns a legal move; errors on bad limits", () => {
  const e = new UhpEngine();
  e.handle("newgame Base");
  for (const cmd of ["bestmove", "bestmove depth 1", "bestmove time 00:00:01"]) {
    const reply = e.handle(cmd).split("\n");
    assert.equal(reply.length, 2);
    assert.equal(reply[1], "ok");
    assert.ok(e.game!.isValid(e.game!.parseMove(reply[0])), `${cmd}: ${reply[0]}`);
  }
  transcript(e, [
    ["bestmove depth 0", 'err Invalid depth "0"; expected 1..64.'],
    ["bestmove time 1:99:00", 'err Invalid time "1:99:00"; expected hh:mm:ss.'],
    ["bestmove sideways", /^err Invalid bestmove arguments/],
  ]);
  assert.equal(parseUhpTime("01:02:03"), 3723000);
});

Deno.test("uhp: bestmove finds the winning move and refuses a finished game", () => {
  // The position before the last move of a real game that White won.
  const text = Deno.readTextFileSync(
    new URL("../fixtures/hive/pgn/HV-Abbo69-WeakBot-2018-10-28-2007.pgn", import.meta.url),
  );
  const moves = [...text.matchAll(/^\d+\. (.+)$/gm)].map((m) => m[1].trim());
  const g = new HiveGame("Base+MLP");
  for (const m of moves.slice(0, -1)) g.playString(m);
  const e = new UhpEngine();
  assert.match(e.handle(`newgame ${g.gameString()}`), /;InProgress;White\[/);
  const [move] = e.handle("bestmove depth 1").split("\n");
  assert.match(e.handle(`play ${move}`), /^Base\+MLP;WhiteWins;/);
  assert.equal(e.handle("bestmove"), "err The game is over.\nok");
  assert.equal(e.handle("validmoves"), "ok");
  assert.equal(e.handle("play wG3 -bQ"), "invalidmove You can't play, the game is over.\nok");
  assert.equal(e.handle("pass"), "invalidmove You can't pass, the game is over.\nok");
});

Deno.test("uhp: every bestmove form is capped by BestMoveMaxTime (the default too)", () => {
  const seen: { depth?: number; timeMs?: number }[] = [];
  const spy: UhpPlayer = {
    bestMove: (g, limits) => {
      seen.push(limits);
      return g.validMoves()[0];
    },
  };
  const e = new UhpEngine(spy);
  e.handle("newgame Base");
  e.handle("bestmove depth 50");
  e.handle("bestmove");
  e.handle("options set BestMoveMaxTime 3");
  e.handle("bestmove depth 64");
  e.handle("bestmove time 00:00:02");
  assert.deepEqual(seen, [
    { depth: 50, timeMs: 10_000 },
    { depth: 2, timeMs: 10_000 },
    { depth: 64, timeMs: 3_000 },
    { timeMs: 2_000 },
  ]);
});

Deno.test("uhp: bestmove depth 50 answers within BestMoveMaxTime with the deepest finished ply", () => {
  const e = new UhpEngine();
  const g = randomGame("Base+MLP", 36, 7);
  e.handle(`newgame ${g.gameString()}`);
  e.handle("options set BestMoveMaxTime 1");
  const t0 = performance.now();
  const reply = e.handle("bestmove depth 50").split("\n");
  const ms = performance.now() - t0;
  assert.equal(reply[1], "ok");
  assert.ok(g.isValid(g.parseMove(reply[0])), reply[0]);
  // One second of search; the slack is for a loaded machine, not for a search that ignores time.
  assert.ok(ms < 4000, `answered after ${ms.toFixed(0)} ms`);
  assert.equal(e.game!.gameString(), g.gameString(), "the search leaves the game as it was");
  assert.match(e.handle("info"), /^id Kibitz/, "and the engine answers the next command");
});

Deno.test("uhp: perft stops at PerftMaxTime with an error and leaves the game as it was", () => {
  const e = new UhpEngine();
  const g = randomGame("Base+MLP", 30, 3);
  const before = g.gameString();
  e.handle(`newgame ${before}`);
  e.handle("options set PerftMaxTime 1");
  const t0 = performance.now();
  const reply = e.handle("perft 6");
  const ms = performance.now() - t0;
  assert.equal(reply, "err perft 6 stopped after 1 s (PerftMaxTime); try a smaller depth.\nok");
  assert.ok(ms < 4000, `answered after ${ms.toFixed(0)} ms`);
  assert.equal(e.game!.gameString(), before);
  assert.equal(e.handle("perft 2"), `${countPerft(before)}\nok`);
});
