import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { HIVE_IN_PROGRESS } from "../../src/hive/mod.ts";
import { ingestBoardspace } from "../../src/sgf/ingest.ts";
import { type GamePosition, streamGamePositions, valueForPly } from "../../src/sgf/positions.ts";
import { hiveGameOutcome } from "../../src/sgf/replay.ts";
import { readGameStore, type StoredGame } from "../../src/sgf/store.ts";

const RECORDS = new URL("../fixtures/sgf/records", import.meta.url).pathname;

Deno.test("positions: a game store streams back as (position, move, result) samples", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/games.jsonl`;
    const summary = await ingestBoardspace([RECORDS], { out });
    const games = new Map<string, StoredGame>();
    for await (const g of readGameStore(out)) games.set(g.id, g);

    let count = 0;
    let last: GamePosition | null = null;
    const finish = (p: GamePosition) => {
      // After the last move, the live game shows the final position of the stored game.
      const g: StoredGame = games.get(p.gameId)!;
      p.game.play(p.moveCode, p.move);
      if (g.termination === "position") equal(hiveGameOutcome(p.game), g.result, g.id);
      else equal(p.game.state, HIVE_IN_PROGRESS, g.id);
    };
    for await (const p of streamGamePositions(out)) {
      if (last && last.gameId !== p.gameId) finish(last);
      const g: StoredGame = games.get(p.gameId)!;
      equal(p.game.turn, p.ply);
      equal(p.move, g.moves[p.ply]);
      ok(p.game.isValid(p.moveCode), `${p.gameId} ply ${p.ply}`);
      equal(p.result, g.result);
      equal(p.value, valueForPly(g.result, p.ply));
      count++;
      last = p;
    }
    finish(last!);
    equal(count, summary.plies);

    let finished = 0;
    for await (const p of streamGamePositions(out, { finishedOnly: true, gameTypes: ["Base"] })) {
      equal(p.gameType, "Base");
      finished++;
    }
    equal(finished, 94);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("positions: values follow the side to move", () => {
  deepEqual([0, 1, 2].map((p) => valueForPly("WhiteWins", p)), [1, -1, 1]);
  deepEqual([0, 1].map((p) => valueForPly("BlackWins", p)), [-1, 1]);
  deepEqual([valueForPly("Draw", 3), valueForPly("Unfinished", 0)], [0, 0]);
});

Deno.test("positions: a corrupted store names the game and ply", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const g: StoredGame = {
      id: "0123456789abcdef",
      source: "x.sgf",
      index: 0,
      gameName: "",
      gameType: "Base",
      variant: "hive",
      white: "a",
      black: "b",
      date: "",
      dateRaw: "",
      result: "Unfinished",
      termination: "none",
      resultText: "",
      moves: ["wS1", "bS1 wS1-", "wQ bS1-"],
    };
    Deno.writeTextFileSync(`${dir}/bad.jsonl`, JSON.stringify(g) + "\n");
    await rejects(async () => {
      for await (const _ of streamGamePositions(`${dir}/bad.jsonl`)) { /* consume */ }
    }, /game 0123456789abcdef ply 3/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
