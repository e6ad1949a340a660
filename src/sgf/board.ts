import { hexKey, hexNeighbor } from "./hex.ts";

/** How many of each bug a side owns (Base + Mosquito, Ladybug, Pillbug). */
export const BUG_COUNT: Readonly<Record<string, number>> = {
  Q: 1,
  A: 3,
  G: 3,
  B: 2,
  S: 2,
  M: 1,
  L: 1,
  P: 1,
};

/** A piece named loosely (as in records): colour, bug letter, number (0 when not written). */
export interface LoosePiece {
  color: "w" | "b" | "";
  bug: string;
  n: number;
}

/**
 * Parses a piece token as written in boardspace records or UHP: `wA1`, `bQ`, `wM1`, `bs2`
 * (colour prefix) or `A1`, `b1`, `Q` (no colour; `b1` is beetle 1). Returns null if malformed.
 */
export function parseLoosePiece(token: string): LoosePiece | null {
  // Backtracking makes `b1` the beetle and `bs2` the black spider.
  const m = /^([wb])?([qagbsmlp])(\d)?$/i.exec(token);
  if (!m) return null;
  return {
    color: (m[1] ?? "").toLowerCase() as LoosePiece["color"],
    bug: m[2].toUpperCase(),
    n: m[3] ? Number(m[3]) : 0,
  };
}

/** The UHP name of a piece: `wQ`, `bM`, `wA2` (numbers only on bugs a side owns several of). */
export function uhpPiece(color: "w" | "b", bug: string, n: number): string {
  return BUG_COUNT[bug] > 1 ? `${color}${bug}${n || 1}` : `${color}${bug}`;
}

/** UHP direction marks for "mover is in direction d of the reference", d in E SE SW W NW NE order. */
function formatRelative(ref: string, dir: number): string {
  switch (dir) {
    case 0:
      return `${ref}-`;
    case 1:
      return `${ref}\\`;
    case 2:
      return `/${ref}`;
    case 3:
      return `-${ref}`;
    case 4:
      return `\\${ref}`;
    default:
      return `${ref}/`;
  }
}

/** A reference written after a piece in a move string: the piece, and the direction or -1 for "on top". */
export interface Reference {
  piece: string;
  dir: number;
}

/** Parses the reference part of a UHP move (`-bQ`, `wS1/`, `bB1`); null when malformed. */
export function parseReference(text: string): Reference | null {
  const m = /^([-/\\]?)([wb][QAGBSMLP]\d?)([-/\\]?)$/.exec(text);
  if (!m || (m[1] && m[3])) return null;
  const pre = m[1], post = m[3];
  const dir = pre === "/"
    ? 2
    : pre === "-"
    ? 3
    : pre === "\\"
    ? 4
    : post === "-"
    ? 0
    : post === "\\"
    ? 1
    : post === "/"
    ? 5
    : -1;
  return { piece: m[2], dir };
}

/**
 * The minimal board a record converter needs: which hex holds which stack of pieces, in order
 * to turn (piece, destination) into a UHP move string and back. It does not check legality;
 * the rules engine does.
 */
export class RecordBoard {
  private readonly stacks = new Map<number, string[]>();
  private readonly where = new Map<string, number>();
  private readonly entered = new Map<string, number>();

  /** Number of pieces on the board. */
  get size(): number {
    return this.where.size;
  }

  /** The hex of `piece`, or undefined when it is not on the board. */
  positionOf(piece: string): number | undefined {
    return this.where.get(piece);
  }

  /** The top piece at `hex`, or undefined when empty. */
  top(hex: number): string | undefined {
    const s = this.stacks.get(hex);
    return s && s.length ? s[s.length - 1] : undefined;
  }

  /** The top piece at `hex` ignoring `without` (as if it had been lifted). */
  topWithout(hex: number, without: string): string | undefined {
    const s = this.stacks.get(hex);
    if (!s || !s.length) return undefined;
    const t = s[s.length - 1];
    if (t !== without) return t;
    return s.length > 1 ? s[s.length - 2] : undefined;
  }

  /** The next piece of a bug to enter from `color`'s reserve (A1 before A2), or null if none left. */
  nextFromReserve(color: "w" | "b", bug: string): string | null {
    const used = this.entered.get(color + bug) ?? 0;
    const count = BUG_COUNT[bug] ?? 0;
    return used < count ? uhpPiece(color, bug, used + 1) : null;
  }

  /** Moves `piece` to `to` (placing it if it is not on the board). */
  play(piece: string, to: number): void {
    const from = this.where.get(piece);
    if (from !== undefined) {
      const s = this.stacks.get(from)!;
      s.pop();
      if (!s.length) this.stacks.delete(from);
    } else {
      const key = piece.slice(0, 2);
      this.entered.set(key, (this.entered.get(key) ?? 0) + 1);
    }
    let s = this.stacks.get(to);
    if (!s) this.stacks.set(to, s = []);
    s.push(piece);
    this.where.set(piece, to);
  }

  /** True when `ref` written relative to the board names exactly hex `to` for mover `piece`. */
  referenceNames(piece: string, ref: Reference, to: number): boolean {
    if (ref.piece === piece) return false;
    const at = this.where.get(ref.piece);
    if (at === undefined) return false;
    if (ref.dir < 0) return at === to && this.topWithout(to, piece) === ref.piece;
    if (this.topWithout(to, piece) !== undefined) return false;
    return hexNeighbor(at, ref.dir) === to;
  }

  /**
   * Formats moving `piece` to `to` as a UHP move string. `preferred` (a reference such as the
   * one a record wrote) is used when it names `to` correctly; otherwise a neighbour is chosen.
   * Returns null when `to` touches no other piece (no reference can name it).
   */
  moveString(piece: string, to: number, preferred?: Reference | null): string | null {
    if (this.where.size === 0 || (this.where.size === 1 && this.where.has(piece))) return piece;
    if (preferred && this.referenceNames(piece, preferred, to)) {
      return `${piece} ${
        preferred.dir < 0 ? preferred.piece : formatRelative(preferred.piece, preferred.dir)
      }`;
    }
    const onTop = this.topWithout(to, piece);
    if (onTop !== undefined) return `${piece} ${onTop}`;
    for (let d = 0; d < 6; d++) {
      const refHex = hexNeighbor(to, (d + 3) % 6);
      const ref = this.topWithout(refHex, piece);
      if (ref !== undefined) return `${piece} ${formatRelative(ref, d)}`;
    }
    return null;
  }

  /** Resolves a UHP move string to (piece, destination); null when it cannot name a hex here. */
  resolveMove(move: string): { piece: string; to: number } | null {
    const parts = move.trim().split(/\s+/);
    const piece = parts[0];
    if (!/^[wb][QAGBSMLP]\d?$/.test(piece)) return null;
    if (parts.length === 1) return this.where.size === 0 ? { piece, to: hexKey(0, 0) } : null;
    if (parts.length !== 2) return null;
    const ref = parseReference(parts[1]);
    if (!ref) return null;
    const at = this.where.get(ref.piece);
    if (at === undefined) return null;
    return { piece, to: ref.dir < 0 ? at : hexNeighbor(at, ref.dir) };
  }

  /** True when `color`'s queen is on the board with all six neighbours occupied. */
  queenSurrounded(color: "w" | "b"): boolean {
    const q = this.where.get(`${color}Q`);
    if (q === undefined) return false;
    for (let d = 0; d < 6; d++) if (!this.stacks.has(hexNeighbor(q, d))) return false;
    return true;
  }
}
