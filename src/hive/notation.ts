// UHP strings: MoveString parse/format (reference piece chosen as Mzinga does) and GameString.
import { KibitzError } from "../errors.ts";
import type { HiveBoard } from "./board.ts";
import { MAX_STACK, NEIGHBOR, ORIGIN } from "./grid.ts";
import { makeMove, movePiece, moveTo, PASS } from "./move.ts";
import { gameTypeString, parsePieceName, pieceName } from "./pieces.ts";
import { STATE_NAMES } from "./state.ts";

/** A parsed MoveString: the packed move, the stack level it names, and its normalized text. */
export interface ParsedMove {
  move: number;
  toLevel: number;
  normalized: string;
}

const MOVE_RE = /^([wb][a-z][1-3]?)(?:\s+([-/\\]?)([wb][a-z][1-3]?)([-/\\]?))?$/i;

// Direction from the reference piece X to the destination: "-X" W, "/X" SW, "\X" NW (separator
// before X); "X-" E, "X/" NE, "X\" SE (separator after X).
const BEFORE_DIR: Record<string, number> = { "-": 5, "/": 4, "\\": 0 };
const AFTER_DIR: Record<string, number> = { "-": 2, "/": 1, "\\": 3 };

/** Parses a UHP MoveString in the position of `g` (the reference piece must be on the board). */
export function parseMoveString(g: HiveBoard, s: string): ParsedMove {
  const text = s.trim();
  if (/^pass$/i.test(text)) return { move: PASS, toLevel: -1, normalized: "pass" };
  const m = MOVE_RE.exec(text);
  if (!m) throw new KibitzError("bad_move", `"${s}" is not a UHP MoveString`);
  const [, pieceText, before, refText, after] = m;
  const piece = parsePieceName(pieceText);
  if (piece < 0) throw new KibitzError("bad_move", `"${pieceText}" is not a piece name`);
  const name = pieceName(piece);
  if (refText === undefined) return { move: makeMove(piece, ORIGIN), toLevel: 0, normalized: name };
  if (before && after) {
    throw new KibitzError("bad_move", `"${s}" has a separator on both sides of ${refText}`);
  }
  const ref = parsePieceName(refText);
  if (ref < 0) throw new KibitzError("bad_move", `"${refText}" is not a piece name`);
  const refName = pieceName(ref);
  const rc = g.pieceCell[ref];
  if (rc < 0) {
    throw new KibitzError("invalid_move", `The reference piece ${refName} is not in play.`);
  }
  if (!before && !after) {
    return {
      move: makeMove(piece, rc),
      toLevel: g.pieceLevel[ref] + 1,
      normalized: `${name} ${refName}`,
    };
  }
  const to = NEIGHBOR[rc * 6 + (before ? BEFORE_DIR[before] : AFTER_DIR[after])];
  const normalized = before ? `${name} ${before}${refName}` : `${name} ${refName}${after}`;
  return { move: makeMove(piece, to), toLevel: 0, normalized };
}

/** Formats a packed move as Mzinga would: bare first move, piece below when climbing, else the first neighbour in direction order. */
export function formatMove(g: HiveBoard, move: number): string {
  if (move === PASS) return "pass";
  const p = movePiece(move), to = moveTo(move);
  const name = pieceName(p);
  if (g.turn === 0 && to === ORIGIN) return name;
  const H = g.height;
  const from = g.pieceCell[p];
  const lifted = from >= 0 && g.isOnTop(p);
  if (lifted) H[from]--;
  try {
    if (H[to] > 0) return `${name} ${pieceName(g.stack[to * MAX_STACK + H[to] - 1])}`;
    for (let d = 0; d < 6; d++) {
      const n = NEIGHBOR[to * 6 + d];
      if (H[n] === 0) continue;
      const ref = pieceName(g.stack[n * MAX_STACK + H[n] - 1]);
      switch (d) {
        case 0:
          return `${name} ${ref}\\`;
        case 1:
          return `${name} /${ref}`;
        case 2:
          return `${name} -${ref}`;
        case 3:
          return `${name} \\${ref}`;
        case 4:
          return `${name} ${ref}/`;
        default:
          return `${name} ${ref}-`;
      }
    }
  } finally {
    if (lifted) H[from]++;
  }
  throw new KibitzError("bad_move", `move of ${name} has no neighbour to name it by`);
}

const TURN_RE = /^(White|Black)\[(\d+)\]$/;

/**
 * Parses a UHP GameString (`Base+M;InProgress;White[3];wS1;bM -wS1;...`) by replaying its moves
 * with full validation; a bare GameTypeString gives a new game. The state and turn parts must be
 * well formed but, as in Mzinga, the replayed moves decide the actual state and turn.
 */
export function parseGameString<G extends { playString(move: string): number }>(
  s: string,
  create: (gameType: string) => G,
): G {
  const parts = s.trim().split(";");
  const g = create(parts[0].trim());
  if (parts.length === 1) return g;
  if (parts.length < 3) {
    throw new KibitzError(
      "bad_game_string",
      `"${s}" is not a GameString: expected GameType;GameState;Color[Turn];moves...`,
    );
  }
  const state = parts[1].trim(), turn = parts[2].trim();
  if (!STATE_NAMES.includes(state)) {
    throw new KibitzError("bad_game_string", `"${state}" is not a GameState`);
  }
  if (!TURN_RE.test(turn)) {
    throw new KibitzError("bad_game_string", `"${turn}" is not a TurnString like White[1]`);
  }
  for (let i = 3; i < parts.length; i++) {
    const m = parts[i].trim();
    if (m === "") continue;
    try {
      g.playString(m);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      throw new KibitzError("bad_game_string", `move ${i - 2} "${m}" of the GameString: ${why}`);
    }
  }
  return g;
}

/** Builds the GameString of `g`, formatting moves played without text by replaying them on a fresh game. */
export function gameStringOf(
  g: HiveBoard,
  moves: Int32Array,
  texts: (string | null)[],
  fresh: () => { moveString(move: number): string; play(move: number, text: string): void },
): string {
  const head = `${gameTypeString(g.gameType)};${STATE_NAMES[g.state]};${
    g.turn & 1 ? "Black" : "White"
  }[${g.playerTurn}]`;
  if (moves.length === 0) return head;
  const out: string[] = [];
  const replay = texts.some((t) => t === null) ? fresh() : null;
  for (let i = 0; i < moves.length; i++) {
    const t = texts[i] ?? replay!.moveString(moves[i]);
    out.push(t);
    replay?.play(moves[i], t);
  }
  return `${head};${out.join(";")}`;
}
