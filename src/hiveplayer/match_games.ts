// Games of the network with MCTS against the alpha-beta player, labelled with their result: at
// every position where the side to move chose among several moves, the move played is the policy
// target and the game's final result for that side (a draw or an unfinished game 0) the value
// target. Value targets from the matchup the player has to win (issue 17), where the engine games'
// targets come from alpha-beta against itself and the DAgger labels from a depth-2 score.
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
