import { isKibitzError } from "../errors.ts";
import { HIVE_BLACK_WINS, HIVE_DRAW, HIVE_WHITE_WINS, HiveGame } from "../hive/mod.ts";
import type { GameOutcome } from "./headers.ts";
import { type BoardspaceRecord, RecordError } from "./record.ts";
import type { Termination } from "./store.ts";

/** A record replayed through the rules engine: its validated moves and the final position's verdict. */
export interface ReplayedGame {
  moves: string[];
  /** WhiteWins/BlackWins/Draw when the final position decides the game, else Unfinished. */
  positionOutcome: GameOutcome;
  /** The engine game after the last move. */
  game: HiveGame;
  /** Plies the record has after the position already decided the game (ignored). */
  afterEnd: number;
}

/** The outcome a HiveGame's state names (Unfinished while in progress). */
export function hiveGameOutcome(game: HiveGame): GameOutcome {
  switch (game.state) {
    case HIVE_WHITE_WINS:
      return "WhiteWins";
    case HIVE_BLACK_WINS:
      return "BlackWins";
    case HIVE_DRAW:
      return "Draw";
    default:
      return "Unfinished";
  }
}

/**
 * Plays every ply of a converted record through the Hive rules engine. The first illegal or
 * unparseable move throws RecordError `illegal_move` naming the ply, the UHP move, the raw
 * record action and the engine's reason. Plies after the position has decided the game are
 * ignored (counted in `afterEnd`).
 */
export function replayRecord(rec: BoardspaceRecord): ReplayedGame {
  const game = new HiveGame(rec.gameType);
  const moves: string[] = [];
  for (let i = 0; i < rec.plies.length; i++) {
    const ply = rec.plies[i];
    // Some old records go on after the game was decided; the decided game is what counts.
    if (game.isOver()) {
      return {
        moves,
        positionOutcome: hiveGameOutcome(game),
        game,
        afterEnd: rec.plies.length - i,
      };
    }
    try {
      game.playString(ply.uhp);
    } catch (e) {
      if (!isKibitzError(e)) throw e;
      throw new RecordError(
        "illegal_move",
        `ply ${i + 1}: ${ply.uhp} (from "${ply.raw}") is illegal: ${e.message}`,
        i + 1,
        ply.raw,
        ply.line,
      );
    }
    moves.push(ply.uhp);
  }
  return { moves, positionOutcome: hiveGameOutcome(game), game, afterEnd: 0 };
}

/**
 * Decides a game's result: the final position first, then a resignation or an agreed draw in
 * the record, then the `RE` text; Unfinished when none says anything.
 */
export function decideResult(
  rec: BoardspaceRecord,
  positionOutcome: GameOutcome,
): { result: GameOutcome; termination: Termination } {
  if (positionOutcome !== "Unfinished") return { result: positionOutcome, termination: "position" };
  if (rec.ending === "resign-white") return { result: "BlackWins", termination: "resignation" };
  if (rec.ending === "resign-black") return { result: "WhiteWins", termination: "resignation" };
  if (rec.ending === "draw-agreed") return { result: "Draw", termination: "agreement" };
  if (rec.textOutcome !== "Unfinished") return { result: rec.textOutcome, termination: "record" };
  return { result: "Unfinished", termination: "none" };
}
