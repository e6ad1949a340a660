// Property-based fuzzing of the UHP engine loop: generated command sessions (valid moves, garbage,
// game strings, options, shallow searches). Every line gets one reply ending in "ok", the engine
// never throws, and a move listed by validmoves is always accepted.
import fc from "fast-check";
import { equal, ok } from "node:assert/strict";
import { UhpEngine } from "../../src/uhp/engine.ts";
import { FUZZ_SEED } from "./settle.ts";

type Op = { kind: "line"; line: string } | { kind: "valid"; pick: number };

const garbage = fc.string({ maxLength: 30 });
const gameType = fc.constantFrom(
  "Base",
  "Base+M",
  "Base+L",
  "Base+P",
  "Base+MLP",
  "base+mlp",
  "Base+X",
  "",
);
const gameString = fc.oneof(
  fc.tuple(gameType, fc.constantFrom("NotStarted", "InProgress", "Draw", "WhiteWins", "Bogus"))
    .map(([t, s]) => `${t};${s};White[1]`),
  fc.constantFrom(
    "Base+MLP;InProgress;White[3];wS1;bG1 -wS1;wA1 wS1/;bG2 /bG1",
    "Base;InProgress;Black[1];wQ",
    "Base;InProgress;White[2];wQ;bQ wQ-;wQ \\bQ",
  ),
  garbage.map((g) => `Base;InProgress;White[2];${g}`),
);
const pieceName = fc.tuple(
  fc.constantFrom("w", "b", "x"),
  fc.constantFrom("Q", "A", "G", "S", "B", "M", "L", "P", "Z"),
  fc.constantFrom("", "1", "2", "3", "9"),
)
  .map((p) => p.join(""));
const moveString = fc.oneof(
  fc.tuple(
    pieceName,
    fc.constantFrom("", "-", "/", "\\"),
    pieceName,
    fc.constantFrom("", "-", "/", "\\"),
  )
    .map(([a, l, b, r]) => `${a} ${l}${b}${r}`),
  pieceName,
  garbage,
);
const line: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "info",
    "help",
    "validmoves",
    "pass",
    "undo",
    "options",
    "newgame",
    "",
    "   ",
    "exit-not",
  ),
  gameType.map((t) => `newgame ${t}`),
  gameString.map((g) => `newgame ${g}`),
  moveString.map((m) => `play ${m}`),
  fc.constantFrom(
    "bestmove depth 1",
    "bestmove depth 2",
    "bestmove depth 0",
    "bestmove depth x",
    "bestmove time 1:2",
    "bestmove sideways",
  ),
  fc.oneof(fc.nat(2).map(String), garbage).map((n) => `perft ${n}`),
  fc.oneof(fc.nat(40).map(String), garbage).map((n) => `undo ${n}`),
  fc.tuple(
    fc.constantFrom("BestMoveDepth", "BestMoveMaxTime", "Nope", "bestmovedepth"),
    fc.oneof(fc.constantFrom("1", "2", "0", "-1", "99999", "1.5"), garbage),
  )
    .map(([o, v]) => `options set ${o} ${v}`),
  fc.constantFrom("BestMoveDepth", "Nope", "").map((o) => `options get ${o}`),
  garbage,
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: line.map((l) => ({ kind: "line" as const, line: l })) },
  { weight: 4, arbitrary: fc.nat().map((pick) => ({ kind: "valid" as const, pick })) },
);
const session = fc.tuple(fc.option(gameType, { nil: undefined }), fc.array(op, { maxLength: 25 }));

function reply(engine: UhpEngine, text: string): string {
  const r = engine.handle(text);
  const lines = r.split("\n");
  equal(lines[lines.length - 1], "ok", `reply to ${JSON.stringify(text)} does not end in ok: ${r}`);
  ok(!lines.slice(0, -1).includes("ok"), `reply to ${JSON.stringify(text)} has two ok lines`);
  return lines.slice(0, -1).join("\n");
}

Deno.test("fuzz: UHP sessions always answer one reply ending in ok; valid moves are accepted", () => {
  let played = 0;
  fc.assert(
    fc.property(session, ([start, ops]) => {
      const engine = new UhpEngine();
      if (start !== undefined) reply(engine, `newgame ${start}`);
      for (const o of ops) {
        if (o.kind === "line") {
          reply(engine, o.line);
          continue;
        }
        const moves = reply(engine, "validmoves");
        if (moves.startsWith("err") || moves === "") continue;
        const list = moves.split(";");
        const move = list[o.pick % list.length];
        const r = reply(engine, `play ${move}`);
        ok(!r.startsWith("err") && !r.startsWith("invalidmove"), `play ${move} (listed): ${r}`);
        played++;
      }
    }),
    { seed: FUZZ_SEED, numRuns: 400 },
  );
  ok(played > 200, `only ${played} listed moves were played`);
});
