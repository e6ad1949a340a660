// Games of the network with MCTS against the alpha-beta player, labelled with their result: at
// every position where the side to move chose among several moves, the move played is the policy
// target and the game's final result for that side (a draw or an unfinished game 0) the value
// target. Value targets from the matchup the player has to win (issue 17), where the engine games'
// targets come from alpha-beta against itself and the DAgger labels from a depth-2 score.
// Self-play (selfPlay): the network's MCTS plays both sides, and every position is labelled with
// the search's choice (expert iteration: the search improves on the raw policy) and a value that
// blends the search's root value with the game's result (the AlphaZero targets, as one move each).
import { mulberry32 } from "../mcts/random.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import { type HiveEvaluator, MCTS_PLAYER_DEFAULTS, MctsPlayer } from "../uhp/mcts_player.ts";
import { HiveGame } from "../hive/game.ts";
import { valueForPly } from "../sgf/positions.ts";
import { type LabelledGame, MATCH_LABELLER } from "./dagger.ts";
import { playedGame } from "./engine_games.ts";

/** How match games are played. */
export interface MatchGameOptions {
  gameType: string;
  /** MCTS playouts per move of the network's side. */
  playouts: number;
  /** Alpha-beta depth per move of the other side. */
  depth: number;
  /**
   * Uniformly random plies at the start (not labelled): at least `randomPlies`, up to
   * `randomPlies + extraRandomPlies` by seed, so two deterministic players still vary.
   */
  randomPlies: number;
  extraRandomPlies: number;
  /** Plies after which a game is stopped (Unfinished, value targets 0); MCTS scores it a draw. */
  maxPlies: number;
  /** The network's MCTS plays both sides (self-play) instead of meeting alpha-beta. */
  selfPlay?: boolean;
  /** Self-play value target: this share of the search's root value, the rest the result. */
  searchValue?: number;
  /**
   * Self-play plies after the random opening whose played move is drawn in proportion to the
   * root visits (the label stays the most visited move), so games from one opening differ.
   */
  samplePlies?: number;
}

/** The defaults of `deno task hive-games --match MODEL`. */
export const MATCH_GAME_DEFAULTS: MatchGameOptions = {
  gameType: "Base+MLP",
  playouts: 100,
  depth: 2,
  randomPlies: 2,
  extraRandomPlies: 4,
  maxPlies: 150,
};

export { MATCH_LABELLER };

/** The labeller of self-play games: the search's choice and a blend of its value and the result. */
export const SELFPLAY_LABELLER = "mcts-search";

/** The self-play defaults of `deno task hive-games --match MODEL --selfplay`. */
export const SELFPLAY_DEFAULTS = { playouts: 400, searchValue: 0.5, samplePlies: 12 };

/**
 * Plays one seeded game: MCTS with `net` (White on even seeds) against alpha-beta, each position
 * with a choice labelled with the move played and the final result for its side to move.
 */
export function playMatchGame(
  seed: number,
  net: HiveEvaluator,
  netName: string,
  o: MatchGameOptions,
): LabelledGame {
  if (o.selfPlay) return playSelfPlayGame(seed, net, netName, o);
  const rand = mulberry32(seed * 2654435761 + 31);
  const opening = o.randomPlies + Math.floor(rand() * (o.extraRandomPlies + 1));
  const mctsColor = seed % 2;
  const mcts = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, maxPlies: o.maxPlies });
  const g = new HiveGame(o.gameType);
  const moves: string[] = [], chose: boolean[] = [];
  while (!g.isOver() && g.turn < o.maxPlies) {
    const legal = g.validMoves();
    let m: number;
    if (g.turn < opening) m = legal[Math.floor(rand() * legal.length)];
    else if (g.colorToMove === mctsColor) m = mcts.search(g, o.playouts).move;
    else m = searchBestMove(g, { depth: o.depth }).move;
    const s = g.moveString(m);
    moves.push(s);
    chose.push(g.turn >= opening && legal.length > 1);
    g.play(m, s);
  }
  const mctsName = `kibitz-mcts${o.playouts}-${netName}`;
  const abName = `kibitz-alphabeta-d${o.depth}`;
  const stored = playedGame(g, {
    gameName: `match-${mctsName}-${abName}-seed${seed}`,
    source: `match:${netName}+${abName}`,
    index: seed,
    gameType: o.gameType,
    variant: "match",
    white: mctsColor === 0 ? mctsName : abName,
    black: mctsColor === 1 ? mctsName : abName,
    moves,
    maxPlies: o.maxPlies,
  });
  return {
    ...stored,
    labeller: MATCH_LABELLER,
    labels: moves.map((s, ply) => (chose[ply] ? s : null)),
    labelValues: moves.map((_, ply) => (chose[ply] ? valueForPly(stored.result, ply) : null)),
  };
}

/**
 * One seeded self-play game: MCTS with `net` on both sides (one tree, reused from ply to ply),
 * each position with a choice labelled with the search's most visited move and
 * searchValue x its root value + (1 - searchValue) x the final result for the side to move.
 */
function playSelfPlayGame(
  seed: number,
  net: HiveEvaluator,
  netName: string,
  o: MatchGameOptions,
): LabelledGame {
  const rand = mulberry32(seed * 2654435761 + 47);
  const opening = o.randomPlies + Math.floor(rand() * (o.extraRandomPlies + 1));
  const sampleUntil = opening + (o.samplePlies ?? SELFPLAY_DEFAULTS.samplePlies);
  const lambda = o.searchValue ?? SELFPLAY_DEFAULTS.searchValue;
  const mcts = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, maxPlies: o.maxPlies });
  const g = new HiveGame(o.gameType);
  const moves: string[] = [], labels: (string | null)[] = [], searched: (number | null)[] = [];
  while (!g.isOver() && g.turn < o.maxPlies) {
    const legal = g.validMoves();
    let m = legal[0], label: string | null = null, q: number | null = null;
    if (g.turn < opening) m = legal[Math.floor(rand() * legal.length)];
    else if (legal.length > 1) {
      const r = mcts.search(g, o.playouts);
      label = g.moveString(r.move);
      // The root's value for the side to move (a proven root: its exact result).
      q = r.value;
      m = g.turn < sampleUntil ? sampleByVisits(mcts.rootVisits(), rand) ?? r.move : r.move;
    }
    labels.push(label);
    searched.push(q);
    const s = g.moveString(m);
    moves.push(s);
    g.play(m, s);
  }
  const name = `kibitz-mcts${o.playouts}-${netName}`;
  const stored = playedGame(g, {
    gameName: `selfplay-${name}-seed${seed}`,
    source: `selfplay:${netName}`,
    index: seed,
    gameType: o.gameType,
    variant: "selfplay",
    white: name,
    black: name,
    moves,
    maxPlies: o.maxPlies,
  });
  return {
    ...stored,
    labeller: SELFPLAY_LABELLER,
    labels,
    labelValues: searched.map((q, ply) =>
      q === null ? null : lambda * q + (1 - lambda) * valueForPly(stored.result, ply)
    ),
  };
}

/** A root move drawn in proportion to its visits (null when nothing was visited). */
function sampleByVisits(
  root: { moves: number[]; visits: number[] },
  rand: () => number,
): number | null {
  const total = root.visits.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  let x = rand() * total;
  for (let i = 0; i < root.moves.length; i++) {
    x -= root.visits[i];
    if (x < 0) return root.moves[i];
  }
  return root.moves[root.moves.length - 1];
}
