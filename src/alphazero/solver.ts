// An exact solver for small games on the search's interface (negamax, memoized by hash), and the
// check the loop reports for solved games: the network player against every perfect line.
import type { Evaluator } from "../mcts/evaluator.ts";
import type { Game, GameSpec } from "../mcts/game.ts";
import { defaultSearchConfig, Search } from "../mcts/search.ts";

/** Exact values by position hash (1 win, 0 draw, -1 loss for the side to move). */
export class ExactSolver<M> {
  private readonly memo = new Map<number, number>();

  /** Exact value of `g` for its side to move (full-width negamax; small games only). */
  value(g: Game<M>): number {
    const r = g.result();
    if (r !== null) return r;
    const key = g.hash();
    const hit = this.memo.get(key);
    if (hit !== undefined) return hit;
    let best = -1;
    for (const m of g.legalMoves()) {
      g.play(m);
      const v = 0 - this.value(g);
      g.undo();
      if (v > best) best = v;
      if (best === 1) break;
    }
    this.memo.set(key, best);
    return best;
  }

  /** The legal moves of best exact value. */
  bestMoves(g: Game<M>): M[] {
    const vals = g.legalMoves().map((m) => {
      g.play(m);
      const v = 0 - this.value(g);
      g.undo();
      return { m, v };
    });
    const best = Math.max(...vals.map((x) => x.v));
    return vals.filter((x) => x.v === best).map((x) => x.m);
  }
}

/** Outcome counts of the network player against every perfect line of play. */
export interface PerfectCheck {
  /** Distinct games played (the perfect side branches over all its optimal moves). */
  games: number;
  losses: number;
  draws: number;
  wins: number;
  /** True when no line loses and the result from the start equals the solved value. */
  perfect: boolean;
}

/**
 * Plays the network + `playouts` search (no noise, most visited move) against a perfect opponent
 * that tries every optimal move, with the network as each colour. The network player is
 * deterministic, so this covers every game a perfect player can produce against it.
 */
export async function checkAgainstPerfect<M>(
  spec: GameSpec<M>,
  evaluator: Evaluator<M>,
  playouts: number,
  solver = new ExactSolver<M>(),
): Promise<PerfectCheck> {
  const out = { games: 0, losses: 0, draws: 0, wins: 0 };
  const startValue = solver.value(spec.create());
  const walk = async (g: Game<M>, netSide: number): Promise<void> => {
    const r = g.result();
    if (r !== null) {
      const forNet = g.toMove() === netSide ? r : -r;
      out.games++;
      if (forNet > 0) out.wins++;
      else if (forNet < 0) out.losses++;
      else out.draws++;
      return;
    }
    if (g.toMove() === netSide) {
      const s = new Search(g, evaluator, defaultSearchConfig({ noise: false }), 1);
      await s.run(playouts);
      const m = s.pickMove(0);
      g.play(m);
      await walk(g, netSide);
      g.undo();
      return;
    }
    for (const m of solver.bestMoves(g)) {
      g.play(m);
      await walk(g, netSide);
      g.undo();
    }
  };
  for (const side of [0, 1]) await walk(spec.create(), side);
  // From the start the perfect result for a drawn game is a draw on every line.
  const perfect = out.losses === 0 && (startValue !== 0 || out.wins === 0);
  return { ...out, perfect };
}
