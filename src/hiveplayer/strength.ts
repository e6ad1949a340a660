// The strength ladder: matches between Hive players with colours alternated and seeded random
// openings (each opening played once with each colour), scored with a 95 % confidence interval and
// an Elo difference. Games end by the rules or, at a ply cap, as draws.
import { mulberry32 } from "../mcts/random.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import type { HiveEvaluator } from "../uhp/mcts_player.ts";
import {
  MCTS_PLAYER_DEFAULTS,
  MctsPlayer,
  type MctsPlayerConfig,
  PolicyPlayer,
} from "../uhp/mcts_player.ts";
import { HiveGame } from "../hive/game.ts";
import { BLACK_WINS, WHITE_WINS } from "../hive/state.ts";

/** A ladder player: a name and a move chooser (with its own seeded randomness when it has any). */
export interface LadderPlayer {
  name: string;
  move(g: HiveGame): number;
  /** Search effort so far, for players that search: moves searched and their summed effort. */
  effort?: { unit: string; moves: number; total: number };
}

/** "31 playouts" / "d2.4": a player's mean search effort per move, or "" when it has none. */
export function effortText(p: LadderPlayer): string {
  const e = p.effort;
  if (!e || e.moves === 0) return "";
  const mean = e.total / e.moves;
  return e.unit === "depth" ? `d${mean.toFixed(1)}` : `${mean.toFixed(0)} ${e.unit}`;
}

/** The uniform random player. */
export function randomPlayer(seed: number): LadderPlayer {
  const rand = mulberry32(seed);
  return {
    name: "random",
    move: (g) => {
      const m = g.validMoves();
      return m[Math.floor(rand() * m.length)];
    },
  };
}

/** Alpha-beta at a fixed depth or time per move. */
export function alphaBetaLadderPlayer(limits: { depth?: number; timeMs?: number }): LadderPlayer {
  return {
    name: limits.timeMs !== undefined
      ? `alphabeta-${limits.timeMs}ms`
      : `alphabeta-d${limits.depth}`,
    effort: { unit: "depth", moves: 0, total: 0 },
    move(g) {
      const r = searchBestMove(g, limits);
      this.effort!.moves++;
      this.effort!.total += r.depth;
      return r.move;
    },
  };
}

/**
 * MCTS with the network at fixed playouts or time per move; `config` overrides the player's
 * settings (the ladder passes its ply cap as `maxPlies`, so the search scores capped games as
 * draws).
 */
export function mctsLadderPlayer(
  net: HiveEvaluator,
  limits: { playouts?: number; timeMs?: number },
  config: Partial<MctsPlayerConfig> = {},
): LadderPlayer {
  const p = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, ...config });
  return {
    name: limits.timeMs !== undefined ? `mcts-${limits.timeMs}ms` : `mcts-${limits.playouts}`,
    effort: { unit: "playouts", moves: 0, total: 0 },
    move(g) {
      const r = p.search(g, limits.playouts ?? Infinity, limits.timeMs);
      // Moves proven at once (a single legal move, or a win in one) are not counted.
      if (r.playouts > 1) {
        this.effort!.moves++;
        this.effort!.total += r.playouts;
      }
      return r.move;
    },
  };
}

/**
 * The network's top move without search; with `winCheck`, the tactical variant "policy+win1" that
 * plays a win in one first.
 */
export function policyLadderPlayer(net: HiveEvaluator, winCheck = false): LadderPlayer {
  const p = new PolicyPlayer(net, winCheck);
  return { name: winCheck ? "policy+win1" : "policy", move: (g) => p.bestMove(g) };
}

/** One pairing's result, from player A's view. */
export interface MatchResult {
  a: string;
  b: string;
  games: number;
  winsA: number;
  draws: number;
  winsB: number;
  /** Mean score of A (win 1, draw 0.5). */
  score: number;
  /** 95 % confidence interval of the score (normal approximation on the game scores). */
  low: number;
  high: number;
  /** Elo difference A - B from the score (clamped half a game from 0 and 1). */
  elo: number;
  msPerMoveA: number;
  msPerMoveB: number;
  meanPlies: number;
}

/** Elo difference for a score in (0, 1). */
export function eloFromScore(s: number): number {
  return -400 * Math.log10(1 / s - 1);
}

/** Score, 95 % interval and Elo of a list of game scores (1, 0.5, 0). */
export function scoreStats(
  scores: number[],
): { score: number; low: number; high: number; elo: number } {
  const n = scores.length;
  const mean = scores.reduce((a, s) => a + s, 0) / n;
  const variance = n > 1 ? scores.reduce((a, s) => a + (s - mean) ** 2, 0) / (n - 1) : 0.25;
  const half = 1.96 * Math.sqrt(variance / n);
  const clamped = Math.min(1 - 0.5 / n, Math.max(0.5 / n, mean));
  return {
    score: mean,
    low: Math.max(0, mean - half),
    high: Math.min(1, mean + half),
    elo: eloFromScore(clamped),
  };
}

/** Match settings. */
export interface MatchOptions {
  games: number;
  gameType: string;
  /** Uniformly random plies that open each game (the same opening for both colourings). */
  openingPlies: number;
  /** Plies after which a game is a draw. */
  maxPlies: number;
  seed: number;
  /**
   * Index of the first game (default 0): games first..first+games-1 of the match are played, so
   * one match can be split across processes (disjoint parts with the same seed add up to it).
   */
  first?: number;
  /**
   * performance.now() time after which no new game starts (the match reports the games played,
   * at least one): a wall-time budget on a shared machine.
   */
  deadline?: number;
}

/**
 * Plays `o.games` games between A and B: game 2k has A as White, game 2k+1 the same opening with
 * colours swapped. `onGame` hears each finished game.
 */
export function playMatch(
  a: LadderPlayer,
  b: LadderPlayer,
  o: MatchOptions,
  onGame: (i: number, scoreA: number, plies: number, game: HiveGame) => void = () => {},
): MatchResult {
  const scores: number[] = [];
  let msA = 0, movesA = 0, msB = 0, movesB = 0, plies = 0;
  const first = o.first ?? 0;
  for (let i = first; i < first + o.games; i++) {
    if (i > first && o.deadline !== undefined && performance.now() > o.deadline) break;
    const aWhite = i % 2 === 0;
    const rand = mulberry32(o.seed * 7919 + (i >> 1));
    const g = new HiveGame(o.gameType);
    while (!g.isOver() && g.turn < o.maxPlies) {
      let m: number;
      if (g.turn < o.openingPlies) {
        const legal = g.validMoves();
        m = legal[Math.floor(rand() * legal.length)];
      } else {
        const aToMove = (g.colorToMove === 0) === aWhite;
        const t0 = performance.now();
        m = (aToMove ? a : b).move(g);
        const dt = performance.now() - t0;
        if (aToMove) (msA += dt), movesA++;
        else (msB += dt), movesB++;
      }
      g.play(m);
    }
    const whiteScore = g.state === WHITE_WINS ? 1 : g.state === BLACK_WINS ? 0 : 0.5;
    const s = aWhite ? whiteScore : 1 - whiteScore;
    scores.push(s);
    plies += g.turn;
    onGame(i, s, g.turn, g);
  }
  const st = scoreStats(scores);
  return {
    a: a.name,
    b: b.name,
    games: scores.length,
    winsA: scores.filter((s) => s === 1).length,
    draws: scores.filter((s) => s === 0.5).length,
    winsB: scores.filter((s) => s === 0).length,
    ...st,
    msPerMoveA: movesA ? msA / movesA : 0,
    msPerMoveB: movesB ? msB / movesB : 0,
    meanPlies: plies / scores.length,
  };
}
