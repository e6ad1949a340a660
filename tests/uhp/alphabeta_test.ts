// The built-in player: alpha-beta must agree with plain negamax, respect time, and leave no trace.
import assert from "node:assert/strict";
import type { HiveGame } from "../../src/hive/game.ts";
import { DRAW } from "../../src/hive/state.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { evaluate, searchBestMove } from "../../src/uhp/alphabeta.ts";

const WIN = 1_000_000;

/** Plain negamax without pruning, with the same leaf and terminal scores. */
function negamax(g: HiveGame, depth: number, ply: number, buf: Int32Array): number {
  if (g.isOver()) return g.state === DRAW ? 0 : -(WIN - ply);
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
