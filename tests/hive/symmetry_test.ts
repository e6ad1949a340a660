import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { cellAt, NEIGHBOR, NUM_CELLS, ORIGIN } from "../../src/hive/grid.ts";
import { perft } from "../../src/hive/perft.ts";
import {
  HEX_SYMMETRIES,
  inverseSymmetry,
  transformCell,
  transformGame,
  transformMove,
} from "../../src/hive/symmetry.ts";
import { playEngineGame } from "../../src/hiveplayer/engine_games.ts";

Deno.test("symmetry: every symmetry is a bijection of the torus that keeps neighbours", () => {
  for (let s = 0; s < HEX_SYMMETRIES; s++) {
    const seen = new Set<number>();
    for (let c = 0; c < NUM_CELLS; c++) {
      const t = transformCell(c, s);
      seen.add(t);
      equal(transformCell(t, inverseSymmetry(s)), c, `inverse of ${s} at ${c}`);
      const around = new Set(Array.from({ length: 6 }, (_, d) => NEIGHBOR[t * 6 + d]));
      for (let d = 0; d < 6; d++) ok(around.has(transformCell(NEIGHBOR[c * 6 + d], s)));
    }
    equal(seen.size, NUM_CELLS);
    equal(transformCell(ORIGIN, s), ORIGIN);
  }
  // The 12 are distinct: they send one generic cell to 12 different cells.
  const c = cellAt(2, 1);
  equal(new Set(Array.from({ length: 12 }, (_, s) => transformCell(c, s))).size, 12);
});

Deno.test("symmetry: legal moves map to legal moves; perft and results are invariant", () => {
  const played = playEngineGame(7, {
    gameType: "Base+MLP",
    randomPlies: 12,
    depth: 1,
    timeMs: 0,
    maxPlies: 24,
    otherDepth: 0,
  });
  const g = new HiveGame("Base+MLP");
  for (const m of played.moves) g.playString(m);
  const base = g.validMoves();
  const p2 = perft(g, 2);
  for (let s = 0; s < HEX_SYMMETRIES; s++) {
    const t = transformGame(g, s);
    equal(t.state, g.state);
    equal(t.turn, g.turn);
    deepEqual(
      new Set(t.validMoves()),
      new Set(base.map((m) => transformMove(m, s))),
      `symmetry ${s}`,
    );
    equal(perft(t, 2), p2, `perft 2 under symmetry ${s}`);
    if (s > 0) notEqual(t.hashKey(), g.hashKey());
  }
});
