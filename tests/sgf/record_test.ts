import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { RecordBoard } from "../../src/sgf/board.ts";
import { boardspaceDate, boardspaceGameType, outcomeFromText } from "../../src/sgf/headers.ts";
import { parsePgn } from "../../src/sgf/pgn.ts";
import { parseSgf } from "../../src/sgf/reader.ts";
import { convertBoardspaceRecord, RecordError } from "../../src/sgf/record.ts";

const FIX = new URL("../fixtures/sgf/", import.meta.url);

/** Builds a one-record boardspace file from action lines such as `P0[1 pick W 4 wS1]`. */
function record(lines: string[], head = 'GM[27]SU[hive]P0[id "alice"]P1[id "bob"]'): string {
  return `(;${head}\n${lines.map((l) => `; ${l}`).join("\n")}\n)`;
}

function convert(text: string) {
  return convertBoardspaceRecord(parseSgf(text, "t.sgf")[0]);
}

function recordError(text: string): RecordError {
  try {
    convert(text);
  } catch (e) {
    if (e instanceof RecordError) return e;
    throw e;
  }
  throw new Error("no RecordError");
}

/** (piece, destination) pairs of a UHP move list, destinations in the frame of its first move. */
function destinations(moves: string[]): string[] {
  const b = new RecordBoard();
  return moves.map((m, i) => {
    if (m === "pass") return "pass";
    const r = b.resolveMove(m);
    if (!r) throw new Error(`move ${i + 1} "${m}" does not resolve`);
    b.play(r.piece, r.to);
    return `${r.piece}@${r.to}`;
  });
}

Deno.test("record: every real record converts to the moves of its PGN twin", () => {
  let files = 0;
  for (const e of Deno.readDirSync(new URL("records/", FIX))) {
    const text = Deno.readTextFileSync(new URL(`records/${e.name}`, FIX));
    const pgn = parsePgn(
      Deno.readTextFileSync(new URL(`pgn/${e.name.replace(/\.sgf$/, ".pgn")}`, FIX)),
    );
    const rec = convertBoardspaceRecord(parseSgf(text, e.name)[0]);
    const mine = rec.plies.map((p) => p.uhp);
    deepEqual(destinations(mine), destinations(pgn.moves), e.name);
    // The record's own reference pieces are kept, so even the strings agree.
    deepEqual(mine, pgn.moves, e.name);
    equal(rec.gameType, pgn.tags.GameType, e.name);
    equal(rec.white, pgn.tags.White, e.name);
    equal(rec.black, pgn.tags.Black, e.name);
    equal(rec.date, pgn.tags.Date, e.name);
    files++;
  }
  equal(files, 9);
});

Deno.test("record: a file's second record (with a popped duplicate Start) gives the same game", () => {
  const text = Deno.readTextFileSync(
    new URL("records/HV-aaronheit-jdokakill-2019-06-22-1750.sgf", FIX),
  );
  const [a, b] = parseSgf(text).map(convertBoardspaceRecord);
  deepEqual(b.plies.map((p) => p.uhp), a.plies.map((p) => p.uhp));
  equal(a.plies.length, 58);
});

Deno.test("record: verbs in every casing, pick/drop collapsing and undone picks", () => {
  const rec = convert(record([
    "P0[0 Start P0]",
    "P0[1 Pick W 4 wS1]",
    "P0[2 Dropb wS1 N 13 .]",
    "P0[3 Done]",
    "P1[4 PICK B 2 bG1]",
    "P1[5 DROPB bG1 M 12 /wS1]",
    "P1[6 DONE]",
    "P0[7 movedone W wQ O 13 wS1-]",
    // Picked and put back where it was, a rack pick dropped back, then the real move.
    "P1[8 pickb M 12 bG1]",
    "P1[9 dropb bG1 M 12 .]",
    "P1[10 pick B 0 bQ]",
    "P1[11 drop B 0 bQ]",
    "P1[12 Pick B 0 bQ]",
    "P1[13 pDropB bQ L 11 /bG1]",
    "P1[14 Done]",
    // A piece dropped, picked up again and dropped elsewhere is one move.
    "P0[15 pickb O 13 wQ]",
    "P0[16 dropb wQ O 12 .]",
    "P0[17 PickB O 12 wQ]",
    "P0[18 dropb wQ N 12 .]",
    "P0[19 done]",
    // A rack pick after a drop takes the drop back.
    "P1[20 Pick B 3 bB1]",
    "P1[21 Dropb bB1 K 10 bQ/]",
    "P1[22 Pick B 1 bA1]",
    "P1[23 Drop bA1 K 10 bQ/]",
    "P1[24 done]",
    "P0[25 PMoveDone B bA1 L 10 .]",
  ]));
  deepEqual(rec.plies.map((p) => p.uhp), [
    "wS1",
    "bG1 /wS1",
    "wQ wS1-",
    "bQ /bG1",
    "wQ bG1-",
    "bA1 /bQ",
    "bA1 bQ\\",
  ]);
  deepEqual([rec.white, rec.black, rec.gameType], ["alice", "bob", "Base"]);
  equal(rec.ending, null);
});

Deno.test("record: verbs convert the same in lower, upper and capitalized case", () => {
  const recase = (text: string, f: (verb: string) => string) =>
    text.replace(/(P[01]\[\d+ )([A-Za-z]+)/g, (_, head, verb) => head + f(verb));
  for (
    const name of [
      "HV-Dumbot-Kaur50-2023-01-17-0059.sgf",
      "U!HV-kearf29-Dumbot-2013-04-20-0054.sgf",
    ]
  ) {
    const text = Deno.readTextFileSync(new URL(`records/${name}`, FIX));
    const want = convert(text).plies.map((p) => p.uhp);
    const cases: [(v: string) => string, string][] = [
      [(v) => v.toLowerCase(), " dropb "],
      [(v) => v.toUpperCase(), " DROPB "],
      [(v) => v[0].toUpperCase() + v.slice(1).toLowerCase(), " Dropb "],
    ];
    for (const [f, marker] of cases) {
      const changed = recase(text, f);
      ok(changed.includes(marker), marker);
      deepEqual(convert(changed).plies.map((p) => p.uhp), want, name);
    }
  }
});

Deno.test("record: a Done-only turn and Pass are passes; draw talk is no ply", () => {
  let rec = convert(record([
    "P0[1 move W wS1 N 13 .]",
    "P0[2 done]",
    "P1[3 Done]",
    "P0[4 pass]",
    "P0[5 done]",
    "P1[6 PassDone]",
    "P0[7 offerdraw]",
    "P0[8 done]",
    "P1[9 DeclineDraw]",
    "P1[10 done]",
    "P0[11 Move W wQ O 13 wS1-]",
    "P0[12 done]",
    // An unconfirmed last turn with no move (the record stops) is no ply.
    "P1[13 pick B 0 bQ]",
  ]));
  deepEqual(rec.plies.map((p) => p.uhp), ["wS1", "pass", "pass", "pass", "wQ wS1-"]);
  // A dropped but unconfirmed last move still counts (the record ends on it).
  rec = convert(
    record([
      "P0[1 move W wS1 N 13 .]",
      "P0[2 done]",
      "P1[3 pick B 0 bQ]",
      "P1[4 dropb bQ M 12 /wS1]",
    ]),
  );
  deepEqual(rec.plies.map((p) => p.uhp), ["wS1", "bQ /wS1"]);
});

Deno.test("record: Resign and AcceptDraw end the record; Swap and PlayWhite/PlayBlack set colours", () => {
  let rec = convert(record([
    "P0[1 move W wS1 N 13 .]",
    "P0[2 done]",
    "P1[3 Resign]",
    "P0[4 move W wQ O 13 wS1-]",
  ]));
  equal(rec.ending, "resign-black");
  equal(rec.plies.length, 1);
  rec = convert(
    record(["P0[1 move W wS1 N 13 .]", "P0[2 done]", "P1[3 offerdraw]", "P0[4 AcceptDraw]"]),
  );
  equal(rec.ending, "draw-agreed");
  rec = convert(record(["P1[0 Swap]", "P0[1 move W wS1 N 13 .]", "P0[2 done]", "P0[3 resign]"]));
  deepEqual([rec.white, rec.black, rec.ending], ["bob", "alice", "resign-black"]);
  rec = convert(record(["P1[0 PlayWhite]", "P1[1 move W wS1 N 13 .]", "P1[2 done]"]));
  deepEqual([rec.white, rec.black, rec.plies.length], ["bob", "alice", 1]);
  rec = convert(record(["P1[0 playblack]", "P0[1 move W wS1 N 13 .]", "P0[2 done]"]));
  deepEqual([rec.white, rec.black], ["alice", "bob"]);
});

Deno.test("record: unknown verbs, bad moves and foreign games are rejected with where", () => {
  let e = recordError(record(["P0[1 move W wS1 N 13 .]", "P0[2 done]", "P1[3 teleport bQ A 1]"]));
  deepEqual([e.code, e.ply, e.raw, e.line], ["unknown_verb", 2, "3 teleport bQ A 1", 4]);
  e = recordError(record(["P0[1 move W wS1 N 13 .]", "P0[2 done]", "P1[3 pickb Z 99 bQ]"]));
  deepEqual([e.code, e.ply], ["bad_move", 2]);
  e = recordError(record(["P0[1 dropb wS1 N 13 .]"]));
  equal(e.code, "bad_move");
  e = recordError(record(["P0[1 move W wS1 N 1x .]"]));
  equal(e.code, "bad_move");
  e = recordError(record(["P0[1 move W wS1 N 13 .]"], "GM[1]SU[hive]"));
  equal(e.code, "not_hive");
  e = recordError(record(["P0[1 move W wS1 N 13 .]"], "GM[27]SU[hive-ultimate]"));
  equal(e.code, "unknown_variant");
  e = recordError(record(["P0[0 Start P0]"]));
  equal(e.code, "empty_game");
  throws(() => convert(record(["P0[1 pick W 7 wX1]"])), RecordError);
});

Deno.test("headers: variants, dates and free-text results", () => {
  const su: [string, string | null][] = [
    ["hive", "Base"],
    ["Hive", "Base"],
    ["hive-plm", "Base+MLP"],
    ["Hive-PLM", "Base+MLP"],
    ["hive-plm 2 0 101", "Base+MLP"],
    ["hive-p", "Base+P"],
    ["hive-lm", "Base+ML"],
    ["HIVE-M", "Base+M"],
    ["hive-pp", null],
    ["hive-x", null],
    ["chess", null],
  ];
  for (const [s, t] of su) equal(boardspaceGameType(s), t, s);
  const dates: [string, string][] = [
    ["Fri Apr 19 19:54:39 CDT 2013", "2013.04.19"],
    ["Sat Dec 12 08:47:45 CST 2020", "2020.12.12"],
    ["28 October 2018", "2018.10.28"],
    ["October 2, 2019", "2019.10.02"],
    ["2. Oktober 2019", "2019.10.02"],
    ["12 décembre 2020", "2020.12.12"],
    ["garbage", ""],
  ];
  for (const [d, want] of dates) equal(boardspaceDate(d), want, d);
  equal(outcomeFromText("Game won by Kaur50", "Dumbot", "Kaur50"), "BlackWins");
  equal(outcomeFromText("Partie gagnée par Dumbot", "Dumbot", "Kaur50"), "WhiteWins");
  equal(outcomeFromText("Game won by Dumbot2", "Dumbot", "Dumbot2"), "BlackWins");
  equal(outcomeFromText("The game is a draw", "drawbot", "Ann"), "Draw");
  equal(outcomeFromText("", "Ann", "Bo"), "Unfinished");
  ok(outcomeFromText("Spiel abgebrochen", "Ann", "Bo") === "Unfinished");
});
