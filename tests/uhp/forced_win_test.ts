import { deepEqual, equal, notEqual, ok } from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { forcedWin, type ProofBudget } from "../../src/uhp/forced_win.ts";
import {
  MCTS_PLAYER_DEFAULTS,
  MctsPlayer,
  uniformHiveEvaluator,
} from "../../src/uhp/mcts_player.ts";

// Games the MCTS player lost to alpha-beta (bench hive-strength record=FILE): number, colour, moves.
const LOST = Deno.readTextFileSync(
  new URL("../fixtures/hive/mcts_lost_games.tsv", import.meta.url),
).split("\n").filter((l) => l && !l.startsWith("#")).map((l) => {
  const [game, color, gs] = l.split("\t");
  const parts = gs.split(";");
  return { game: Number(game), color, gameType: parts[0], moves: parts.slice(3) };
});

/** The position of lost game `game` after `plies` plies. */
function position(game: number, plies: number): HiveGame {
  const rec = LOST.find((r) => r.game === game)!;
  const g = new HiveGame(rec.gameType);
  for (const m of rec.moves.slice(0, plies)) g.playString(m);
  return g;
}

const unlimited = (): ProofBudget => ({ nodes: 1e9, deadline: Infinity });

// Exhaustive: can the side to move force a win within 3 plies (every move, every reply)?
function bruteWin3(g: HiveGame): boolean {
  for (const x of g.validMoves()) {
    g.play(x);
    let won = g.outcomeForSideToMove() === -1;
    if (!won && g.outcomeForSideToMove() === null) {
      won = g.validMoves().every((y) => {
        g.play(y);
        const r = g.outcomeForSideToMove();
        const lost = r === null
          ? g.validMoves().some((z) => {
            g.play(z);
            const w = g.outcomeForSideToMove() === -1;
            g.undo();
            return w;
          })
          : r === 1;
        g.undo();
        return lost;
      });
    }
    g.undo();
    if (won) return true;
  }
  return false;
}

Deno.test("forced win: within 3 plies it finds exactly the exhaustive search's wins", () => {
  let positions = 0, wins = 0;
  for (const rec of LOST) {
    const g = new HiveGame(rec.gameType);
    for (const [ply, m] of rec.moves.entries()) {
      if (ply >= 20 && !g.isOver()) {
        const before = g.gameString();
        const fast = forcedWin(g, 3, unlimited());
        equal(g.gameString(), before, "the position is restored");
        equal(fast, bruteWin3(g), `game ${rec.game} after ${ply} plies`);
        positions++;
        if (fast) wins++;
      }
      g.playString(m);
    }
  }
  ok(positions > 100 && wins >= 5, `${positions} positions, ${wins} wins in 3`);
});

Deno.test("forced win: the 5-ply wins that decided a lost game, within the budget", () => {
  // After ply 40 of game 4 (the MCTS player's move bG1 bP-) alpha-beta forces a win in 5 plies
  // (an exhaustive search, out/ scratch, took 23 s to confirm it); after ply 38 it cannot.
  const g = position(4, 40);
  const b: ProofBudget = { nodes: 3000, deadline: Infinity };
  ok(forcedWin(g, 5, b));
  ok(b.nodes >= 0 && b.nodes < 3000);
  ok(!forcedWin(position(4, 38), 5, unlimited()));
  // An exhausted budget finds nothing (and so never claims a win it has not proven).
  ok(!forcedWin(g, 5, { nodes: 20, deadline: Infinity }));
  ok(!forcedWin(g, 5, { nodes: 1e9, deadline: performance.now() - 1 }));
  // Within 3 plies there is no win there yet.
  ok(!forcedWin(g, 3, unlimited()));
});

Deno.test("MCTS loss check: a root move that loses by force is replaced by one that does not", () => {
  // Game 4 after 35 plies, Black (the MCTS player) to move: the unchecked search's choice lets
  // White force a win within 5 plies.
  const g = position(4, 35);
  const plain = new MctsPlayer(uniformHiveEvaluator, { ...MCTS_PLAYER_DEFAULTS }).search(g, 100);
  g.play(plain.move);
  ok(forcedWin(g, 5, unlimited()), "the unchecked choice loses by force");
  g.undo();
  const checked = new MctsPlayer(uniformHiveEvaluator, { ...MCTS_PLAYER_DEFAULTS, lossCheck: 5 });
  const r = checked.search(g, 100);
  notEqual(r.move, plain.move);
  ok(r.lossesFound! >= 1);
  equal(r.proven, undefined);
  g.play(r.move);
  ok(!forcedWin(g, 5, unlimited()), "the checked choice does not");
  g.undo();
  // The same search without the check is unchanged by it (same playouts, same move).
  const again = new MctsPlayer(uniformHiveEvaluator, { ...MCTS_PLAYER_DEFAULTS }).search(g, 100);
  deepEqual([again.move, again.playouts], [plain.move, plain.playouts]);
  equal(again.lossesFound, undefined);
});
