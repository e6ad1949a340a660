// How the network's policy ranks a win in one: over the positions of stored games where the side
// to move can end the game at once, the rank of the best winning move among the legal moves by
// prior, and the prior mass on the winning moves. The diagnosis of why policy-only play draws
// won games (issue 17): engine games always play such a win (alpha-beta scores a win as WIN - ply),
// so the targets hold it, but it is about 1 % of the positions.
import type { HiveEvaluator } from "../uhp/mcts_player.ts";
import { HiveGame } from "../hive/game.ts";
import { winningMove } from "../uhp/forced_win.ts";
import { hiveOutcome } from "../alphazero/hive.ts";

/** The policy's view of the wins in one of some games. */
export interface WinInOneStats {
  positions: number;
  /** Positions where the side to move had a win in one. */
  wins: number;
  /** Of those, how often the game played one (the engine's choice: its training target). */
  played: number;
  /** Rank (1 = top prior) of the best-ranked winning move, per such position. */
  ranks: number[];
  /** Prior mass on the winning moves, per such position. */
  mass: number[];
  /** Legal moves, per such position. */
  legal: number[];
}

/** Replays `games` (move strings) and collects WinInOneStats for the evaluator's policy. */
export function winInOneStats(
  net: HiveEvaluator,
  games: { gameType: string; moves: string[] }[],
): WinInOneStats {
  const s: WinInOneStats = { positions: 0, wins: 0, played: 0, ranks: [], mass: [], legal: [] };
  for (const rec of games) {
    const g = new HiveGame(rec.gameType);
    for (const text of rec.moves) {
      const legal = g.validMoves();
      s.positions++;
      if (winningMove(g, legal) !== null) {
        const win = legal.map((m) => {
          g.play(m);
          const r = hiveOutcome(g);
          g.undo();
          return r === -1;
        });
        const e = net.evaluate(g, legal);
        let best = Infinity, mass = 0;
        for (let i = 0; i < legal.length; i++) {
          if (!win[i]) continue;
          mass += e.priors[i];
          let rank = 1;
          for (let j = 0; j < legal.length; j++) if (e.priors[j] > e.priors[i]) rank++;
          best = Math.min(best, rank);
        }
        s.wins++;
        s.ranks.push(best);
        s.mass.push(mass);
        s.legal.push(legal.length);
        const m = g.parseMove(text);
        if (win[legal.indexOf(m)]) s.played++;
      }
      g.playString(text);
    }
  }
  return s;
}
