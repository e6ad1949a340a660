import { KibitzError } from "../errors.ts";
import { HiveGame } from "../hive/mod.ts";
import type { GameOutcome } from "./headers.ts";
import { readGameStore, type StoredGame } from "./store.ts";

/** One training sample: a position of a stored game, the move played there, and the final result. */
export interface GamePosition {
  gameId: string;
  gameType: string;
  /** Plies played before this position (0 = empty board). */
  ply: number;
  /**
   * The position before `move`. It is one live game per stored game, advanced after the consumer
   * takes the sample: read (or encode, or clone) it before asking for the next position.
   */
  game: HiveGame;
  /** The UHP move string played here. */
  move: string;
  /** The same move packed for the engine (see src/hive/move.ts). */
  moveCode: number;
  result: GameOutcome;
  /** The result for the side to move: +1 it wins, -1 it loses, 0 draw or unfinished. */
  value: number;
}

/** Which games the stream yields. */
export interface PositionFilter {
  /** Only these UHP game types. */
  gameTypes?: string[];
  /** Skip games whose result is Unfinished. */
  finishedOnly?: boolean;
}

/** The value of `result` for the side to move at `ply` (White moves at even plies). */
export function valueForPly(result: GameOutcome, ply: number): number {
  if (result === "WhiteWins") return ply % 2 === 0 ? 1 : -1;
  if (result === "BlackWins") return ply % 2 === 0 ? -1 : 1;
  return 0;
}

/** Replays one stored game, yielding each position before its move. Throws `bad_store` on an illegal move. */
export function* gamePositions(g: StoredGame): Generator<GamePosition> {
  const game = new HiveGame(g.gameType);
  for (let ply = 0; ply < g.moves.length; ply++) {
    const move = g.moves[ply];
    let code: number;
    try {
      code = game.parseMove(move);
      if (!game.isValid(code)) throw new KibitzError("invalid_move", "not legal here");
    } catch (e) {
      throw new KibitzError(
        "bad_store",
        `game ${g.id} ply ${ply + 1}: "${move}" cannot be replayed (${(e as Error).message})`,
      );
    }
    yield {
      gameId: g.id,
      gameType: g.gameType,
      ply,
      game,
      move,
      moveCode: code,
      result: g.result,
      value: valueForPly(g.result, ply),
    };
    game.play(code, move);
  }
}

/**
 * Streams a game store (JSON lines written by `deno task ingest`) as training positions, one game
 * at a time, never loading the whole store.
 */
export async function* streamGamePositions(
  storePath: string,
  filter: PositionFilter = {},
): AsyncGenerator<GamePosition> {
  const types = filter.gameTypes ? new Set(filter.gameTypes) : null;
  for await (const g of readGameStore(storePath)) {
    if (types && !types.has(g.gameType)) continue;
    if (filter.finishedOnly && g.result === "Unfinished") continue;
    yield* gamePositions(g);
  }
}
