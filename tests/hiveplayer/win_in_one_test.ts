import { equal, ok } from "node:assert/strict";
import { winInOneStats } from "../../src/hiveplayer/win_in_one.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { uniformHiveEvaluator } from "../../src/uhp/mcts_player.ts";
import { winningMove } from "../../src/uhp/forced_win.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";

Deno.test("winInOneStats: finds the engine game's win in one and ranks it by the policy", () => {
  // Count the positions with a win in one by replaying the game directly.
  const g = new HiveGame("Base+MLP");
  let wins = 0;
  for (const m of WON_ENGINE_GAME) {
    if (winningMove(g, g.validMoves()) !== null) wins++;
    g.playString(m);
  }
  ok(wins >= 1);
  const s = winInOneStats(uniformHiveEvaluator, [{ gameType: "Base+MLP", moves: WON_ENGINE_GAME }]);
  equal(s.positions, WON_ENGINE_GAME.length);
  equal(s.wins, wins);
  ok(s.played >= 1, "the last move wins");
  // Uniform priors: every move ties for rank 1, the mass on wins is (winning moves) / legal.
  ok(s.ranks.every((r) => r === 1));
  ok(s.mass.every((m, i) => m >= 1 / s.legal[i] - 1e-6 && m <= 1));
  // A policy that puts nothing on the wins ranks them last among unequal priors.
  const avoid = {
    evaluate: (h: HiveGame, legal: number[]) => {
      const priors = new Float32Array(legal.length);
      legal.forEach((m, i) => {
        h.play(m);
        priors[i] = h.isOver() ? 0 : 1;
        h.undo();
      });
      const sum = priors.reduce((a, x) => a + x, 0);
      return { priors: priors.map((p) => p / sum), value: 0 };
    },
  };
  const bad = winInOneStats(avoid, [{ gameType: "Base+MLP", moves: WON_ENGINE_GAME }]);
  ok(bad.ranks.every((r, i) => r > 1 && r <= bad.legal[i]));
  ok(bad.mass.every((m) => m === 0));
});
