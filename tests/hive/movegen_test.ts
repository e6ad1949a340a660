// Move generators hold their own scratch state: games sharing one, or each with its own, agree.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { MoveGenerator } from "../../src/hive/movegen.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { searchBestMove } from "../../src/uhp/alphabeta.ts";

Deno.test("interleaved generation over many games equals generation with a private generator", () => {
  const games = [1, 2, 3, 4, 5, 6].map((s) =>
    randomGame(s % 2 ? "Base+MLP" : "Base+P", 20 + 7 * s, s)
  );
  const own = games.map((g) => {
    const h = new HiveGame(g.gameType, new MoveGenerator());
    for (const m of g.history()) h.play(m);
    return h;
  });
  assert.ok(own.every((h, i) => h.hash() === games[i].hash()));
  const a = new Int32Array(4096), b = new Int32Array(4096);
  // Walk all games forward together, one ply each in turn, comparing every move list.
  for (let step = 0; step < 30; step++) {
    for (let i = 0; i < games.length; i++) {
      const g = games[i], h = own[i];
      const n = g.generate(a, 0);
      // A search on another game in between must not disturb this one's moves.
      if (step % 10 === 0) searchBestMove(games[(i + 1) % games.length], { depth: 1 });
      const k = h.generate(b, 0);
      assert.deepEqual([...b.subarray(0, k)], [...a.subarray(0, n)], `game ${i} step ${step}`);
      if (n > 0) {
        g.play(a[step % n]);
        h.play(a[step % n]);
      }
    }
  }
});

Deno.test("clone keeps the generator; a game given its own generator uses it", () => {
  const gen = new MoveGenerator();
  const g = new HiveGame("Base+MLP", gen);
  g.playString("wS1");
  assert.equal(g.clone().generator, gen);
  assert.notEqual(new HiveGame("Base").generator, gen);
  assert.equal(g.validMoves().length, 7 * 6); // bS1 bB1 bG1 bA1 bM bL bP, six cells each
});
