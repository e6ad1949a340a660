// Real games (boardspace records as Mzinga converts them): every move legal, results, undo, hash.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { PASS } from "../../src/hive/move.ts";
import {
  BLACK_WINS,
  DRAW,
  IN_PROGRESS,
  NOT_STARTED,
  outcomeFor,
  STATE_NAMES,
  WHITE_WINS,
} from "../../src/hive/state.ts";
import { HEX_DIR_DQ, HEX_DIR_DR, hexNeighbor, HIVE_MAX_STACK } from "../../src/hive/mod.ts";

const DIR = new URL("../fixtures/hive/pgn/", import.meta.url);

interface Record {
  name: string;
  gameType: string;
  result: string;
  moves: string[];
}

function records(): Record[] {
  const out: Record[] = [];
  for (const e of Deno.readDirSync(DIR)) {
    const text = Deno.readTextFileSync(new URL(e.name, DIR));
    out.push({
      name: e.name,
      gameType: /\[GameType "([^"]+)"\]/.exec(text)![1],
      result: /\[Result "([^"]+)"\]/.exec(text)![1],
      moves: [...text.matchAll(/^\d+\. (.+)$/gm)].map((m) => m[1].trim()),
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

Deno.test("real games replay legally and end in the recorded result", () => {
  const all = records();
  assert.equal(all.length, 9);
  for (const r of all) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      if (s === "pass") {
        assert.deepEqual(g.validMoves(), [PASS], `${r.name}: pass only when forced`);
      }
      g.playString(s);
    }
    const state = STATE_NAMES[g.state];
    // A draw may be agreed on boardspace with the game still running.
    if (r.result === "Draw") assert.ok(state === "Draw" || state === "InProgress", r.name);
    else assert.equal(state, r.result, r.name);
  }
});

Deno.test("every legal move formats to a string that parses back to it, in every game position", () => {
  for (const r of records()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      const moves = g.validMoves();
      assert.equal(new Set(moves).size, moves.length, "no duplicate (piece, destination)");
      for (const m of moves) {
        const text = g.moveString(m);
        assert.equal(g.parseMove(text), m, `${r.name}: ${text}`);
      }
      g.playString(s);
    }
  }
});

Deno.test("undo restores the exact board, state and hash; the hash depends only on the position", () => {
  for (const r of records()) {
    const g = new HiveGame(r.gameType);
    const trail: [bigint, string, number][] = [];
    for (const s of r.moves) {
      trail.push([g.hash(), g.gameString(), g.state]);
      // Play and undo every legal move: nothing may change.
      const h = g.hash();
      for (const m of g.validMoves()) {
        g.play(m);
        g.undo();
        assert.equal(g.hash(), h);
      }
      g.playString(s);
    }
    const end = g.gameString();
    assert.equal(HiveGame.fromGameString(end).hash(), g.hash(), "replayed game has the same hash");
    assert.equal(g.clone().gameString(), end);
    for (let i = trail.length - 1; i >= 0; i--) {
      assert.ok(g.undo());
      assert.deepEqual([g.hash(), g.gameString(), g.state], trail[i], `${r.name} undo to ${i}`);
    }
    assert.equal(g.undo(), false);
    assert.ok(g.height.every((h) => h === 0));
  }
});

Deno.test("GameString round trip keeps the moves as written", () => {
  for (const r of records()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) g.playString(s);
    const text = g.gameString();
    assert.ok(text.startsWith(`${r.gameType};${STATE_NAMES[g.state]};`));
    assert.equal(text.split(";").length, 3 + r.moves.length);
    assert.equal(HiveGame.fromGameString(text).gameString(), text);
  }
});

Deno.test("pieces() gives hive-consistent coordinates and stack facts", () => {
  for (const r of records()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      g.playString(s);
      const ps = g.pieces();
      const at = new Map(ps.map((p) => [p.cell, p]));
      for (const p of ps) {
        assert.equal(g.stack[p.cell * HIVE_MAX_STACK + p.level], p.piece);
        assert.equal(p.onTop, g.top(p.cell) === p.piece);
        for (let d = 0; d < 6; d++) {
          const n = at.get(hexNeighbor(p.cell, d));
          if (n) assert.deepEqual([n.q - p.q, n.r - p.r], [HEX_DIR_DQ[d], HEX_DIR_DR[d]]);
        }
      }
    }
  }
});

Deno.test("outcomeFor: each finished state read from both sides", () => {
  assert.deepEqual([0, 1].map((c) => outcomeFor(WHITE_WINS, c)), [1, -1]);
  assert.deepEqual([0, 1].map((c) => outcomeFor(BLACK_WINS, c)), [-1, 1]);
  assert.deepEqual([0, 1].map((c) => outcomeFor(DRAW, c)), [0, 0]);
  assert.deepEqual([0, 1].map((c) => outcomeFor(IN_PROGRESS, c)), [null, null]);
  assert.deepEqual([0, 1].map((c) => outcomeFor(NOT_STARTED, c)), [null, null]);
  for (const r of records()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) g.playString(s);
    const o = g.outcomeForSideToMove();
    if (g.state === WHITE_WINS || g.state === BLACK_WINS) {
      // The recorded winner is the side to move exactly when the loser surrounded its own queen.
      assert.equal(o, (g.state === WHITE_WINS ? 0 : 1) === g.colorToMove ? 1 : -1, r.name);
    }
  }
});
