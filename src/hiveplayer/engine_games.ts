// Games played by the project's alpha-beta player, written as game-store records (the format of
// `deno task ingest`) so that pretraining reads them like human games. Each game opens with a few
// uniformly random plies (seeded) so that a deterministic search still yields varied games.
import { rng } from "../nn/tensor.ts";
import { gameId, type StoredGame } from "../sgf/store.ts";
import type { GameOutcome } from "../sgf/headers.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import { HiveGame } from "../hive/game.ts";
import { BLACK_WINS, DRAW, WHITE_WINS } from "../hive/state.ts";

/** How engine games are played. */
export interface EngineGameOptions {
  /** UHP game type, e.g. `Base+MLP`. */
  gameType: string;
  /** Uniformly random plies at the start (before the engine plays). */
  randomPlies: number;
  /** Alpha-beta depth per move (used when `timeMs` is 0). */
  depth: number;
  /** Milliseconds per move (0: fixed depth). */
  timeMs: number;
  /** Plies after which an unfinished game is stopped (stored as Unfinished). */
  maxPlies: number;
  /**
   * Depth of the other player (0: the same as `depth`): White on odd seeds, Black on even ones.
   * Two equal deterministic searches rarely finish a game; a weaker side makes decisive games.
   */
  otherDepth: number;
  /**
   * The other player moves uniformly at random instead (seeded by the game): games that show the
   * engine closing in on a queen that nobody defends, with many short wins (winner-move data).
   */
  otherRandom?: boolean;
}

/** The defaults of `deno task hive-games`. */
export const ENGINE_GAME_DEFAULTS: EngineGameOptions = {
  gameType: "Base+MLP",
  randomPlies: 4,
  depth: 2,
  timeMs: 0,
  maxPlies: 200,
  otherDepth: 1,
};

/** The player name engine games carry, e.g. `kibitz-alphabeta-d2` or `kibitz-alphabeta-500ms`. */
export function engineName(o: EngineGameOptions): string {
  return `kibitz-alphabeta-${o.timeMs > 0 ? `${o.timeMs}ms` : `d${o.depth}`}`;
}

function otherName(o: EngineGameOptions): string {
  if (o.otherRandom) return "kibitz-random";
  return o.otherDepth > 0 ? `kibitz-alphabeta-d${o.otherDepth}` : engineName(o);
}

/** The outcome of a finished (or stopped) game, from the position itself. */
export function outcomeOf(g: HiveGame): GameOutcome {
  if (g.state === WHITE_WINS) return "WhiteWins";
  if (g.state === BLACK_WINS) return "BlackWins";
  if (g.state === DRAW) return "Draw";
  return "Unfinished";
}

/** Who played a game generated here, and how it is labelled in the store. */
export interface PlayedGameInfo {
  gameName: string;
  source: string;
  index: number;
  gameType: string;
  variant: string;
  white: string;
  black: string;
  moves: string[];
  /** The ply cap that stopped an unfinished game. */
  maxPlies: number;
}

/** A game generated here (engine or DAgger games) as a stored game, its result read from `g`. */
export function playedGame(g: HiveGame, p: PlayedGameInfo): StoredGame {
  const result = outcomeOf(g);
  return {
    id: gameId(p.gameName, p.gameType, p.moves),
    source: p.source,
    index: p.index,
    gameName: p.gameName,
    gameType: p.gameType,
    variant: p.variant,
    white: p.white,
    black: p.black,
    date: "",
    dateRaw: "",
    result,
    termination: result === "Unfinished" ? "none" : "position",
    resultText: result === "Unfinished" ? `stopped at ply ${p.maxPlies}` : result,
    moves: p.moves,
  };
}

/** Plays one seeded engine game and returns it as a stored game labelled as an engine game. */
export function playEngineGame(seed: number, o: EngineGameOptions): StoredGame {
  const next = rng(seed * 2654435761 + 17);
  const g = new HiveGame(o.gameType);
  const moves: string[] = [];
  const otherColor = seed % 2 === 1 ? 0 : 1;
  while (!g.isOver() && g.turn < o.maxPlies) {
    let m: number;
    if (g.turn < o.randomPlies) {
      const legal = g.validMoves();
      m = legal[Math.floor(next() * legal.length)];
    } else {
      const other = (o.otherDepth > 0 || o.otherRandom === true) && g.colorToMove === otherColor;
      if (other && o.otherRandom) {
        const legal = g.validMoves();
        m = legal[Math.floor(next() * legal.length)];
      } else {
        const limits = other
          ? { depth: o.otherDepth }
          : o.timeMs > 0
          ? { timeMs: o.timeMs }
          : { depth: o.depth };
        m = searchBestMove(g, limits).move;
      }
    }
    const s = g.moveString(m);
    moves.push(s);
    g.play(m, s);
  }
  const name = engineName(o);
  return playedGame(g, {
    gameName: `${name}-seed${seed}`,
    source: `engine:${name}`,
    index: seed,
    gameType: o.gameType,
    variant: "engine",
    white: otherColor === 0 ? otherName(o) : name,
    black: otherColor === 1 ? otherName(o) : name,
    moves,
    maxPlies: o.maxPlies,
  });
}
