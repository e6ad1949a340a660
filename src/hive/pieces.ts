// Pieces, bug types, colours and game types of Hive, as small integers for flat arrays.
import { KibitzError } from "../errors.ts";

/** Bug types in the order Mzinga numbers them. */
export const QUEEN = 0,
  SPIDER = 1,
  BEETLE = 2,
  GRASSHOPPER = 3,
  ANT = 4,
  MOSQUITO = 5,
  LADYBUG = 6,
  PILLBUG = 7;

/** Number of piece ids (14 per colour: Q S1 S2 B1 B2 G1 G2 G3 A1 A2 A3 M L P). */
export const NUM_PIECES = 28;
/** Pieces per colour. */
export const PIECES_PER_COLOR = 14;

/** Colours: White moves first. */
export const WHITE = 0, BLACK = 1;

const KIND_BUG = [
  QUEEN,
  SPIDER,
  SPIDER,
  BEETLE,
  BEETLE,
  GRASSHOPPER,
  GRASSHOPPER,
  GRASSHOPPER,
  ANT,
  ANT,
  ANT,
  MOSQUITO,
  LADYBUG,
  PILLBUG,
];
const KIND_NAME = ["Q", "S1", "S2", "B1", "B2", "G1", "G2", "G3", "A1", "A2", "A3", "M", "L", "P"];

/** Bug type of each piece id (flat table for hot loops). */
export const PIECE_BUG: Uint8Array = new Uint8Array(NUM_PIECES);
/** Colour of each piece id. */
export const PIECE_COLOR: Uint8Array = new Uint8Array(NUM_PIECES);
/** The piece that must be in play before this one may be placed (A1 before A2), or -1. */
export const PIECE_PREV: Int8Array = new Int8Array(NUM_PIECES);
for (let p = 0; p < NUM_PIECES; p++) {
  const k = p % PIECES_PER_COLOR;
  PIECE_BUG[p] = KIND_BUG[k];
  PIECE_COLOR[p] = p < PIECES_PER_COLOR ? WHITE : BLACK;
  PIECE_PREV[p] = k > 0 && KIND_BUG[k - 1] === KIND_BUG[k] ? p - 1 : -1;
}

/** The UHP name of a piece id, e.g. `wQ`, `bA2`, `wM`. */
export function pieceName(p: number): string {
  return (p < PIECES_PER_COLOR ? "w" : "b") + KIND_NAME[p % PIECES_PER_COLOR];
}

const NAME_TO_PIECE = new Map<string, number>();
for (let p = 0; p < NUM_PIECES; p++) NAME_TO_PIECE.set(pieceName(p).toLowerCase(), p);

/** Parses a UHP piece name (case-insensitive); returns -1 when it names no piece. */
export function parsePieceName(s: string): number {
  return NAME_TO_PIECE.get(s.toLowerCase()) ?? -1;
}

/** Expansion bits of a game type: Mosquito, Ladybug, Pillbug. */
export const EXP_M = 1, EXP_L = 2, EXP_P = 4;

/** The eight game types, by expansion mask 0..7. */
export const GAME_TYPES: readonly string[] = [
  "Base",
  "Base+M",
  "Base+L",
  "Base+ML",
  "Base+P",
  "Base+MP",
  "Base+LP",
  "Base+MLP",
];

/** Formats an expansion mask as a UHP GameTypeString (`Base+MLP`). */
export function gameTypeString(mask: number): string {
  return GAME_TYPES[mask & 7];
}

/** Parses a UHP GameTypeString (`Base`, `Base+ML`, ...) into an expansion mask; throws on bad input. */
export function parseGameType(s: string): number {
  const m = /^base(?:\+([mlp]{1,3}))?$/i.exec(s.trim());
  if (!m) {
    throw new KibitzError(
      "bad_game_type",
      `"${s}" is not a game type; expected Base or Base+ with M, L, P (e.g. Base+MLP)`,
    );
  }
  let mask = 0;
  for (const c of (m[1] ?? "").toUpperCase()) {
    const bit = c === "M" ? EXP_M : c === "L" ? EXP_L : EXP_P;
    if (mask & bit) throw new KibitzError("bad_game_type", `"${s}" repeats expansion ${c}`);
    mask |= bit;
  }
  return mask;
}

/** True when piece `p` takes part in a game with expansion mask `mask`. */
export function pieceEnabled(p: number, mask: number): boolean {
  const bug = PIECE_BUG[p];
  if (bug === MOSQUITO) return (mask & EXP_M) !== 0;
  if (bug === LADYBUG) return (mask & EXP_L) !== 0;
  if (bug === PILLBUG) return (mask & EXP_P) !== 0;
  return true;
}
