// The arena: a candidate network against the best one, half the games with each colour, evaluation
// search (no noise). Games open with a few temperature-1 moves so that 400 games are not 2 games
// replayed; after that both sides play their most visited move.
import type { Evaluator } from "../mcts/evaluator.ts";
import type { GameSpec } from "../mcts/game.ts";
import { defaultSearchConfig, Search, type SearchConfig } from "../mcts/search.ts";
import { gameSeed } from "./selfplay.ts";

/** Arena settings (seed 003: 400 games, 400 playouts, promotion at 55 %). */
export interface ArenaConfig {
  games: number;
  playouts: number;
  /** Opening plies chosen with temperature 1 (variety); then temperature 0. */
  openingMoves: number;
  concurrency: number;
  /** A game reaching this many plies is a draw (0: no limit). */
  maxPlies: number;
  search: SearchConfig;
}

/** Seed 003's arena numbers. */
export function defaultArenaConfig(over: Partial<ArenaConfig> = {}): ArenaConfig {
  return {
    games: 400,
    playouts: 400,
    openingMoves: 2,
    concurrency: 64,
    maxPlies: 0,
    search: defaultSearchConfig({ noise: false }),
    ...over,
  };
}

/** One arena game: which colour the candidate had, the moves, the candidate's score (1, 0.5, 0). */
export interface ArenaGame {
  index: number;
  candidateFirst: boolean;
  moves: string[];
  /** First player's result: 1, 0 or -1. */
  result: number;
  score: number;
}

/** Totals of an arena run. */
export interface ArenaResult {
  games: number;
  wins: number;
  draws: number;
  losses: number;
  /** (wins + draws / 2) / games. */
  score: number;
}

/** Plays arena game `index` (even: the candidate moves first). */
export async function playArenaGame<M>(
  spec: GameSpec<M>,
  candidate: Evaluator<M>,
  best: Evaluator<M>,
  cfg: ArenaConfig,
  index: number,
  seed: number,
): Promise<ArenaGame> {
  const candidateFirst = index % 2 === 0;
  const s = gameSeed(seed ^ 0x5bd1e995, index);
  const start = spec.create();
  const players = candidateFirst
    ? [new Search(start, candidate, cfg.search, s), new Search(start, best, cfg.search, s + 1)]
    : [new Search(start, best, cfg.search, s), new Search(start, candidate, cfg.search, s + 1)];
  const moves: string[] = [];
  let result = 0;
  for (;;) {
    const g = players[0].position();
    const r = g.result();
    if (r !== null) {
      result = g.toMove() === 0 ? r : -r;
      break;
    }
    if (cfg.maxPlies > 0 && g.ply() >= cfg.maxPlies) break;
    const mover = players[g.toMove()];
    await mover.run(cfg.playouts);
    const move = mover.pickMove(g.ply() < cfg.openingMoves ? 1 : 0);
    moves.push(g.moveText(move));
    for (const p of players) p.advance(move);
  }
  const forCandidate = candidateFirst ? result : -result;
  return { index, candidateFirst, moves, result, score: (forCandidate + 1) / 2 };
}

/** Sums arena games into wins, draws, losses and the candidate's score. */
export function arenaTotals(games: ArenaGame[]): ArenaResult {
  const wins = games.filter((g) => g.score === 1).length;
  const losses = games.filter((g) => g.score === 0).length;
  const draws = games.length - wins - losses;
  return {
    games: games.length,
    wins,
    draws,
    losses,
    score: games.length ? (wins + draws / 2) / games.length : 0,
  };
}

/** Plays the arena games numbered in `indices` concurrently, calling `onGame` as each finishes. */
export async function runArena<M>(
  spec: GameSpec<M>,
  candidate: Evaluator<M>,
  best: Evaluator<M>,
  cfg: ArenaConfig,
  indices: number[],
  seed: number,
  onGame: (g: ArenaGame) => Promise<void> | void,
  stop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < indices.length && !stop()) {
      const index = indices[next++];
      await onGame(await playArenaGame(spec, candidate, best, cfg, index, seed));
    }
  };
  const n = Math.max(1, Math.min(cfg.concurrency, indices.length));
  await Promise.all(Array.from({ length: n }, worker));
}
