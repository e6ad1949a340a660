import { type ErrorCode, KibitzError } from "../errors.ts";
import { type BoardspaceAction, boardspaceActions } from "./actions.ts";
import { parseLoosePiece, parseReference, RecordBoard, type Reference, uhpPiece } from "./board.ts";
import {
  boardspaceDate,
  boardspaceGameType,
  type GameOutcome,
  outcomeFromText,
} from "./headers.ts";
import { boardspaceHex, formatBoardspaceHex } from "./hex.ts";
import { type SgfTree, sgfValue } from "./reader.ts";

/** Rack index of each bug in boardspace `Pick` actions. */
const RACK_BUG: Record<string, string> = {
  "0": "Q",
  "1": "A",
  "2": "G",
  "3": "B",
  "4": "S",
  "5": "M",
  "6": "L",
  "8": "P",
};

/** Every verb the boardspace Hive grammar uses (lower case). */
export const BOARDSPACE_VERBS: readonly string[] = [
  "start",
  "pick",
  "pickb",
  "drop",
  "dropb",
  "pdropb",
  "move",
  "pmove",
  "movedone",
  "pmovedone",
  "done",
  "pass",
  "passdone",
  "resign",
  "offerdraw",
  "acceptdraw",
  "declinedraw",
  "swap",
  "playwhite",
  "playblack",
];

/** One ply of a converted record: the piece and its destination hex, or a pass. */
export interface RecordPly {
  /** UHP piece name (`wA1`, `bQ`) or `pass`. */
  piece: string;
  /** Destination hex key in boardspace's frame (see hex.ts); -1 for a pass. */
  to: number;
  /** The UHP move string (reference piece from the record when it is consistent). */
  uhp: string;
  /** The record action that put the piece down (or ended a passing turn), for error messages. */
  raw: string;
  line: number;
}

/** How a record ended by an action rather than by the position. */
export type RecordEnding = "resign-white" | "resign-black" | "draw-agreed" | null;

/** A boardspace Hive record converted to plies, with its headers. */
export interface BoardspaceRecord {
  /** UHP GameType such as `Base+MLP`. */
  gameType: string;
  /** The `SU` value as written. */
  variant: string;
  white: string;
  black: string;
  /** `YYYY.MM.DD` or "" when `DT` is not recognised. */
  date: string;
  dateRaw: string;
  gameName: string;
  resultText: string;
  plies: RecordPly[];
  ending: RecordEnding;
  /** The outcome `RE` states (second source after the final position). */
  textOutcome: GameOutcome;
}

/** Why one record was not converted: a reason code plus where (ply, raw action, line). */
export class RecordError extends KibitzError {
  readonly ply: number;
  readonly raw: string;
  readonly line: number;

  constructor(reason: ErrorCode, message: string, ply = 0, raw = "", line = 0) {
    super(reason, message);
    this.name = "RecordError";
    this.ply = ply;
    this.raw = raw;
    this.line = line;
  }
}

interface PendingMove {
  piece: string;
  from: number;
  to: number;
  ref: Reference | null | "top";
  /** The action that put the piece down (reported as the raw move). */
  action: BoardspaceAction;
}

/** Reads the reference a boardspace drop writes after the coordinate (`wS1/`, `\\wQ`, `.`). */
function boardspaceReference(text: string | undefined): Reference | null | "top" {
  if (!text) return null;
  if (text === ".") return "top";
  const m = /^([-/\\]?)([A-Za-z]+\d?)([-/\\]?)$/.exec(text);
  if (!m) return null;
  const lp = parseLoosePiece(m[2]);
  if (!lp || lp.color === "") return null;
  return parseReference(`${m[1]}${uhpPiece(lp.color, lp.bug, lp.n)}${m[3]}`);
}

/**
 * Converts one boardspace Hive game tree into plies: picks and drops collapse into single moves
 * (a piece picked and put back is no move), a turn with only `Done` is a pass, a turn that only
 * negotiates a draw is no ply, and `Resign`/`AcceptDraw` end the record.
 * Throws RecordError (codes `not_hive`, `unknown_variant`, `unknown_verb`, `bad_move`, `empty_game`,
 * and `illegal_move` for a destination that touches no piece).
 */
export function convertBoardspaceRecord(tree: SgfTree): BoardspaceRecord {
  const root = tree.nodes[0];
  const gm = sgfValue(root, "GM");
  if (gm !== undefined && gm.trim() !== "27") {
    throw new RecordError("not_hive", `GM[${gm}] is not Hive (GM[27])`, 0, `GM[${gm}]`, root.line);
  }
  const variant = sgfValue(root, "SU") ?? "hive";
  const gameType = boardspaceGameType(variant);
  if (!gameType) {
    throw new RecordError("unknown_variant", `unknown variant SU[${variant}]`, 0, `SU[${variant}]`);
  }
  const { actions, players } = boardspaceActions(tree);
  const dateRaw = (sgfValue(root, "DT") ?? "").trim();
  const resultText = (sgfValue(root, "RE") ?? "").trim();
  let whitePlayer = 0;

  const board = new RecordBoard();
  const plies: RecordPly[] = [];
  let ending: RecordEnding = null;

  let turnPlayer = -1;
  let turnActions = 0;
  let picked: string | null = null;
  let pickedFrom = -1;
  let move: PendingMove | null = null;
  let passed = false;
  let drawTalk = false;
  let last: BoardspaceAction | null = null;

  const fail = (reason: ErrorCode, what: string, a: BoardspaceAction): never => {
    const ply = plies.length + 1;
    throw new RecordError(reason, `ply ${ply}: ${what} in "${a.raw}"`, ply, a.raw, a.line);
  };

  /** Closes the current turn; `done` tells whether the player confirmed it (Done, MoveDone...). */
  const endTurn = (done: boolean) => {
    if (turnActions > 0 && last) {
      if (move) {
        const uhp = board.moveString(move.piece, move.to, move.ref === "top" ? null : move.ref);
        if (uhp === null) {
          const where = formatBoardspaceHex(move.to);
          fail("illegal_move", `${move.piece} to ${where} touches no other piece`, move.action);
        }
        board.play(move.piece, move.to);
        const { raw, line } = move.action;
        plies.push({ piece: move.piece, to: move.to, uhp: uhp!, raw, line });
      } else if (passed || (done && !drawTalk)) {
        // A confirmed turn without a move is a pass; an unconfirmed one (the record stops, or
        // the other player acts) made no move and is dropped.
        plies.push({ piece: "pass", to: -1, uhp: "pass", raw: last.raw, line: last.line });
      }
    }
    turnActions = 0;
    picked = null;
    pickedFrom = -1;
    move = null;
    passed = false;
    drawTalk = false;
  };

  const hexArg = (a: BoardspaceAction, col: string | undefined, row: string | undefined) => {
    const hex = col !== undefined && row !== undefined ? boardspaceHex(col, row) : -1;
    if (hex < 0) fail("bad_move", `bad coordinate "${col ?? ""} ${row ?? ""}"`, a);
    return hex;
  };

  const setMove = (
    a: BoardspaceAction,
    piece: string,
    from: number,
    to: number,
    refText?: string,
  ) => {
    if (move && move.piece !== piece) fail("bad_move", `second piece moved in one turn`, a);
    const origin = move ? move.from : from;
    move = origin === to
      ? null
      : { piece, from: origin, to, ref: boardspaceReference(refText), action: a };
  };

  const colorArg = (a: BoardspaceAction, text: string | undefined): "w" | "b" => {
    const c = (text ?? "").toLowerCase();
    if (c !== "w" && c !== "b") fail("bad_move", `bad colour "${text ?? ""}"`, a);
    return c as "w" | "b";
  };

  for (const a of actions) {
    if (a.verb === "start") {
      if (/^p1$/i.test(a.args[0] ?? "")) whitePlayer = 1;
      continue;
    }
    // Colour choice before play (boardspace's PlayWhite/PlayBlack buttons): not a turn.
    if (a.verb === "playwhite" || a.verb === "playblack") {
      whitePlayer = a.verb === "playwhite" ? a.player : 1 - a.player;
      continue;
    }
    if (turnPlayer !== a.player && turnActions > 0) endTurn(false);
    turnPlayer = a.player;
    turnActions++;
    last = a;
    // `drop` returns the picked piece to its rack; with a board coordinate it is a board drop.
    const boardDrop = a.verb === "drop" && a.args.length >= 3 &&
      boardspaceHex(a.args[1], a.args[2]) >= 0;
    switch (boardDrop ? "dropb" : a.verb) {
      case "pick": {
        const color = colorArg(a, a.args[0]);
        const lp = a.args[2] !== undefined ? parseLoosePiece(a.args[2]) : null;
        const bug = lp?.bug ?? RACK_BUG[a.args[1] ?? ""];
        if (!bug) fail("bad_move", `unknown rack piece`, a);
        const piece = board.nextFromReserve((lp?.color || color) as "w" | "b", bug);
        if (!piece) fail("bad_move", `no ${color}${bug} left to place`, a);
        // Like boardspace, a pick from the rack first takes back this turn's drop, if any.
        move = null;
        picked = piece;
        pickedFrom = -1;
        break;
      }
      case "pickb": {
        const hex = hexArg(a, a.args[0], a.args[1]);
        const m = move as PendingMove | null;
        if (m && m.to === hex) {
          picked = m.piece;
          pickedFrom = m.from;
          move = null;
          break;
        }
        const top = board.top(hex);
        if (!top) fail("bad_move", `no piece at ${formatBoardspaceHex(hex)}`, a);
        if (m) fail("bad_move", `second piece picked in one turn`, a);
        picked = top!;
        pickedFrom = hex;
        break;
      }
      case "drop":
        picked = null;
        pickedFrom = -1;
        break;
      case "dropb":
      case "pdropb": {
        if (!picked) fail("bad_move", `drop without a picked piece`, a);
        const to = hexArg(a, a.args[1], a.args[2]);
        setMove(a, picked!, pickedFrom, to, a.args[3]);
        picked = null;
        break;
      }
      case "move":
      case "pmove":
      case "movedone":
      case "pmovedone": {
        const color = colorArg(a, a.args[0]);
        const lp = a.args[1] !== undefined ? parseLoosePiece(a.args[1]) : null;
        if (!lp) fail("bad_move", `bad piece "${a.args[1] ?? ""}"`, a);
        const c = (lp!.color || color) as "w" | "b";
        const to = hexArg(a, a.args[2], a.args[3]);
        const named = uhpPiece(c, lp!.bug, lp!.n);
        const from = board.positionOf(named);
        let piece = named;
        if (from === undefined) {
          const next = board.nextFromReserve(c, lp!.bug);
          if (!next) fail("bad_move", `${named} is neither on the board nor in reserve`, a);
          piece = next!;
        }
        setMove(a, piece, from ?? -1, to, a.args[4]);
        if (a.verb.endsWith("done")) endTurn(true);
        break;
      }
      case "done":
        endTurn(true);
        break;
      case "pass":
        passed = true;
        break;
      case "passdone":
        passed = true;
        endTurn(true);
        break;
      case "offerdraw":
      case "declinedraw":
        drawTalk = true;
        break;
      case "acceptdraw":
        ending = "draw-agreed";
        break;
      case "resign":
        ending = a.player === whitePlayer ? "resign-white" : "resign-black";
        break;
      case "swap":
        whitePlayer = 1 - whitePlayer;
        break;
      default:
        fail("unknown_verb", `unknown verb "${a.verb}"`, a);
    }
    if (ending) {
      turnActions = 0;
      break;
    }
  }
  endTurn(false);
  const white = players.names[whitePlayer], black = players.names[1 - whitePlayer];
  if (plies.length === 0) throw new RecordError("empty_game", "the record has no moves");
  return {
    gameType,
    variant: variant.trim(),
    white,
    black,
    date: boardspaceDate(dateRaw),
    dateRaw,
    gameName: (sgfValue(root, "GN") ?? "").trim(),
    resultText,
    plies,
    ending,
    textOutcome: outcomeFromText(resultText, white, black),
  };
}
