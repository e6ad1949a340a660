// The built-in player: alpha-beta must agree with plain negamax, respect time, and leave no trace.
import assert from "node:assert/strict";
import type { HiveGame } from "../../src/hive/game.ts";
import { randomGame } from "../../src/hive/playout.ts";
import {
  evaluate,
  fromTable,
  searchBestMove,
  terminalScore,
  toTable,
  TranspositionTable,
} from "../../src/uhp/alphabeta.ts";

const WIN = 1_000_000;

/** Plain negamax without pruning, with the same leaf and terminal scores. */
function negamax(g: HiveGame, depth: number, ply: number, buf: Int32Array): number {
  if (g.isOver()) return terminalScore(g, ply);
  if (depth === 0) return evaluate(g, buf, 2048 * (ply + 1));
  let best = -Infinity;
  for (const m of g.validMoves()) {
    g.play(m);
    best = Math.max(best, -negamax(g, depth - 1, ply + 1, buf));
    g.undo();
  }
  return best;
}

Deno.test("alpha-beta equals plain negamax at depth 2 and its move achieves the score", () => {
  const buf = new Int32Array(2048 * 8);
  for (
    const [type, plies, seed] of [["Base", 14, 3], ["Base+MLP", 20, 5], [
      "Base+MLP",
      31,
      9,
    ]] as const
  ) {
    const g = randomGame(type, plies, seed);
    const hash = g.hash();
    const r = searchBestMove(g, { depth: 2 });
    assert.equal(g.hash(), hash, "search leaves the position unchanged");
    assert.equal(r.depth, 2);
    assert.equal(r.score, negamax(g, 2, 0, buf), `${type} after ${plies}`);
    g.play(r.move);
    assert.equal(-negamax(g, 1, 1, buf), r.score);
    g.undo();
  }
});

Deno.test("alpha-beta respects a time limit and always returns a legal move", () => {
  const g = randomGame("Base+MLP", 40, 11);
  const t0 = performance.now();
  const r = searchBestMove(g, { timeMs: 300 });
  const ms = performance.now() - t0;
  assert.ok(r.depth >= 1 && g.isValid(r.move));
  // Generous slack: this checks that the limit is honoured, not how fast the machine is.
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms for a 300 ms budget`);
});

Deno.test("the transposition table keeps plain alpha-beta's depth-3 scores (wins included) with fewer nodes", () => {
  let plainNodes = 0, ttNodes = 0;
  for (
    const [type, plies, seed] of [
      ["Base", 14, 3],
      ["Base+MLP", 20, 5], // a forced win: scores of WIN - ply pass through the table
      ["Base", 24, 2],
      ["Base+MLP", 40, 11],
    ] as const
  ) {
    const g = randomGame(type, plies, seed);
    const hash = g.hash();
    const plain = searchBestMove(g, { depth: 3, transposition: false });
    const tt = searchBestMove(g, { depth: 3 });
    assert.equal(g.hash(), hash, "search leaves the position unchanged");
    assert.equal(tt.score, plain.score, `${type} after ${plies}`);
    // The chosen move achieves the score (a win is one ply nearer after it).
    g.play(tt.move);
    const reply = g.isOver() ? null : searchBestMove(g, { depth: 2, transposition: false }).score;
    const shift = tt.score > 900_000 ? -1 : tt.score < -900_000 ? 1 : 0;
    if (reply !== null) assert.equal(-reply + shift, tt.score);
    g.undo();
    plainNodes += plain.nodes, ttNodes += tt.nodes;
  }
  assert.ok(ttNodes < 0.8 * plainNodes, `${ttNodes} nodes with the table vs ${plainNodes} without`);
});

Deno.test("transposition table: a win stored at one ply reads back at the distance of another", () => {
  // Winning 3 plies after a node found at ply 4 (WIN - 7) is winning at ply 5 when reached at ply 2.
  assert.equal(fromTable(toTable(WIN - 7, 4), 2), WIN - 5);
  assert.equal(fromTable(toTable(-(WIN - 8), 6), 3), -(WIN - 5));
  assert.equal(fromTable(toTable(123, 6), 3), 123);
  const tt = new TranspositionTable(4);
  tt.store(0x12345, 0x9abc, 3, 1, 77, 42);
  const i = tt.find(0x12345, 0x9abc);
  assert.ok(i >= 0 && tt.entryScore(i) === 77 && tt.entryMove(i) === 42 && tt.entryDepth(i) === 3);
  assert.equal(tt.find(0x12345, 0x9abd), -1, "the high half of the key is checked");
  tt.store(0x12345 + 16, 0x1, 2, 1, 5, 6); // same slot, shallower: keeps the deeper entry
  assert.equal(tt.find(0x12345, 0x9abc), i);
});
