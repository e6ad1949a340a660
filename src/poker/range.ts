import { KibitzError } from "../errors.ts";
import { comboIndex, NUM_COMBOS, rankOfChar, suitOfChar } from "./cards.ts";

// Range grammar of the reference Rust solver (and PioSOLVER): comma-separated groups, each an
// optional `:weight` in [0, 1] after one of
//   singleton   AA, AK (suited + offsuit), AKs, AKo, AhKh (one exact hand)
//   plus range  TT+ (TT..AA), T9s+ (connectors up to AKs), ATo+ (AT..AK, same top card)
//   dash range  QQ-88, KQo-JTo (same gap), A9s-A6s (same top card), AhAs-QhQs (same suits)
// Whitespace around tokens, commas, colons and dashes is ignored; a trailing comma is allowed.
// When groups overlap, the earlier group's weight wins (the reference solver applies groups in
// reverse order); a group all of whose hands were given earlier ("AA,AA:0.5") is an error.

/** A range: one weight in [0, 1] per two-card hand, indexed by comboIndex. */
export type RangeWeights = Float32Array;

type Suitedness =
  | { kind: "all" }
  | { kind: "suited" }
  | { kind: "offsuit" }
  | { kind: "specific"; s1: number; s2: number };

interface Combo {
  r1: number;
  r2: number;
  suit: Suitedness;
}

class TokenError extends Error {}

function parseCombo(text: string): Combo {
  if (text.length === 4) {
    const r1 = rankOfChar(text[0]), s1 = suitOfChar(text[1]);
    const r2 = rankOfChar(text[2]), s2 = suitOfChar(text[3]);
    if (r1 < 0 || r2 < 0 || s1 < 0 || s2 < 0) {
      throw new TokenError(`"${text}" is not two cards such as AhKh`);
    }
    if (r1 < r2) throw new TokenError(`the first rank must not be lower than the second`);
    if (r1 === r2 && s1 === s2) throw new TokenError(`duplicate card in "${text}"`);
    return { r1, r2, suit: { kind: "specific", s1, s2 } };
  }
  if (text.length !== 2 && text.length !== 3) {
    throw new TokenError(`"${text}" is not a hand class (AA, AKs, AKo, AK) or two cards (AhKh)`);
  }
  const r1 = rankOfChar(text[0]), r2 = rankOfChar(text[1]);
  if (r1 < 0 || r2 < 0) throw new TokenError(`"${text}" has an invalid rank (use 23456789TJQKA)`);
  if (r1 < r2) throw new TokenError(`the first rank must not be lower than the second`);
  let suit: Suitedness = { kind: "all" };
  if (text.length === 3) {
    const s = text[2].toLowerCase();
    if (s === "s") suit = { kind: "suited" };
    else if (s === "o") suit = { kind: "offsuit" };
    else throw new TokenError(`invalid suitedness "${text[2]}" (use s or o)`);
    if (r1 === r2) throw new TokenError(`a pair cannot be suited or offsuit`);
  }
  return { r1, r2, suit };
}

function sameSuit(a: Suitedness, b: Suitedness): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "specific" && b.kind === "specific") return a.s1 === b.s1 && a.s2 === b.s2;
  return true;
}

function setCombo(w: Float32Array, r1: number, r2: number, suit: Suitedness, weight: number) {
  if (suit.kind === "specific") {
    w[comboIndex(4 * r1 + suit.s1, 4 * r2 + suit.s2)] = weight;
    return;
  }
  for (let s1 = 0; s1 < 4; s1++) {
    for (let s2 = 0; s2 < 4; s2++) {
      if (r1 === r2 && s2 <= s1) continue;
      if (suit.kind === "suited" && s1 !== s2) continue;
      if (suit.kind === "offsuit" && s1 === s2) continue;
      w[comboIndex(4 * r1 + s1, 4 * r2 + s2)] = weight;
    }
  }
}

function applyGroup(w: Float32Array, body: string, weight: number): void {
  if (body.endsWith("+")) {
    const c = parseCombo(body.slice(0, -1));
    const gap = c.r1 - c.r2;
    if (gap <= 1) { for (let r = c.r1; r < 13; r++) setCombo(w, r, r - gap, c.suit, weight); }
    else for (let r = c.r2; r < c.r1; r++) setCombo(w, c.r1, r, c.suit, weight);
    return;
  }
  const dash = body.indexOf("-");
  if (dash >= 0) {
    const hi = parseCombo(body.slice(0, dash));
    const lo = parseCombo(body.slice(dash + 1));
    if (!sameSuit(hi.suit, lo.suit)) throw new TokenError(`both ends must have the same suits`);
    const gap = hi.r1 - hi.r2;
    if (gap === lo.r1 - lo.r2 && hi.r1 !== lo.r1) {
      if (hi.r1 < lo.r1) throw new TokenError(`a dash range must go from high to low`);
      for (let r = lo.r1; r <= hi.r1; r++) setCombo(w, r, r - gap, hi.suit, weight);
      return;
    }
    if (hi.r1 === lo.r1 && gap !== lo.r1 - lo.r2) {
      if (hi.r2 < lo.r2) throw new TokenError(`a dash range must go from high to low`);
      for (let r = lo.r2; r <= hi.r2; r++) setCombo(w, hi.r1, r, hi.suit, weight);
      return;
    }
    throw new TokenError(
      `the ends must share the top card (A9s-A6s) or the gap (QQ-88, KQo-JTo) and differ`,
    );
  }
  const c = parseCombo(body);
  setCombo(w, c.r1, c.r2, c.suit, weight);
}

const WEIGHT = /^(?:[01](?:\.\d*)?|\.\d+)$/;

/**
 * Parses a range string into per-hand weights. Errors name the bad token and its 1-based
 * column; `where` names the input (e.g. "ranges.oop").
 */
export function parseRange(text: string, where = "range"): RangeWeights {
  const weights = new Float32Array(NUM_COMBOS);
  const groups: { body: string; weight: number; token: string; column: number }[] = [];
  let start = 0;
  const parts = text.split(",");
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const lead = part.length - part.trimStart().length;
    const token = part.trim();
    const column = start + lead + 1;
    start += part.length + 1;
    if (token === "") {
      if (i === parts.length - 1) continue; // empty input or trailing comma
      throw new KibitzError("bad_range", `${where}: empty entry at column ${column} in "${text}"`);
    }
    const compact = token.replace(/\s*([-:])\s*/g, "$1");
    const fail = (why: string): never => {
      throw new KibitzError(
        "bad_range",
        `${where}: bad token "${token}" at column ${column}: ${why}`,
      );
    };
    if (/\s/.test(compact)) fail("missing comma between entries");
    const colon = compact.split(":");
    if (colon.length > 2) fail("more than one ':'");
    let weight = 1;
    if (colon.length === 2) {
      if (!WEIGHT.test(colon[1])) fail(`weight "${colon[1]}" is not a number in [0, 1]`);
      weight = Number(colon[1]);
      if (weight > 1) fail(`weight ${colon[1]} is above 1`);
    }
    groups.push({ body: colon[0], weight, token, column });
  }
  // A group whose hands were all given earlier has no effect (the earlier weight wins): that is
  // a mistake ("AA,AA:0.5"), not an override, so say so.
  const firstBy = new Int32Array(NUM_COMBOS).fill(-1);
  const scratch = new Float32Array(NUM_COMBOS);
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    scratch.fill(0);
    try {
      applyGroup(scratch, g.body, 1);
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      throw new KibitzError(
        "bad_range",
        `${where}: bad token "${g.token}" at column ${g.column}: ${e.message}`,
      );
    }
    let any = false, fresh = false, by = -1;
    for (let c = 0; c < NUM_COMBOS; c++) {
      if (scratch[c] === 0) continue;
      any = true;
      if (firstBy[c] < 0) {
        fresh = true;
        firstBy[c] = i;
      } else if (by < 0) by = firstBy[c];
    }
    if (any && !fresh) {
      const e = groups[by];
      throw new KibitzError(
        "bad_range",
        `${where}: "${g.token}" at column ${g.column} gives hands already given by "${e.token}" ` +
          `at column ${e.column} (each hand once; the earlier weight would win)`,
      );
    }
  }
  for (let i = groups.length - 1; i >= 0; i--) {
    const g = groups[i];
    try {
      applyGroup(weights, g.body, g.weight);
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      throw new KibitzError(
        "bad_range",
        `${where}: bad token "${g.token}" at column ${g.column}: ${e.message}`,
      );
    }
  }
  return weights;
}

/** Hands of a range (combo indices, ascending) with positive weight and no card in `dead`. */
export function rangeHands(weights: RangeWeights, dead: readonly number[]): number[] {
  const out: number[] = [];
  for (let a = 0; a < 52; a++) {
    if (dead.includes(a)) continue;
    for (let b = a + 1; b < 52; b++) {
      if (dead.includes(b)) continue;
      const i = comboIndex(a, b);
      if (weights[i] > 0) out.push(i);
    }
  }
  return out;
}

/** True when swapping suits `s1` and `s2` leaves every weight unchanged. */
export function rangeSuitSymmetric(weights: RangeWeights, s1: number, s2: number): boolean {
  const swap = (c: number) => {
    const s = c & 3;
    return s === s1 ? (c & ~3) | s2 : s === s2 ? (c & ~3) | s1 : c;
  };
  for (let a = 0; a < 52; a++) {
    for (let b = a + 1; b < 52; b++) {
      if (weights[comboIndex(a, b)] !== weights[comboIndex(swap(a), swap(b))]) return false;
    }
  }
  return true;
}
