import { KibitzError } from "../errors.ts";

// Card ids follow the reference Rust solver: id = 4 * rank + suit, rank 0 = deuce .. 12 = ace,
// suit 0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades. So "2c" = 0, "As" = 51.

/** Rank characters indexed by rank (0 = deuce .. 12 = ace). */
export const RANK_CHARS = "23456789TJQKA";
/** Suit characters indexed by suit (0 = clubs .. 3 = spades). */
export const SUIT_CHARS = "cdhs";
/** Number of two-card hands in a 52-card deck. */
export const NUM_COMBOS = 1326;

/** Rank (0..12) of a rank character, case-insensitive, or -1. */
export function rankOfChar(ch: string): number {
  return RANK_CHARS.indexOf(ch.toUpperCase());
}

/** Suit (0..3) of a suit character, case-insensitive, or -1. */
export function suitOfChar(ch: string): number {
  return SUIT_CHARS.indexOf(ch.toLowerCase());
}

/** The two-character name of a card id ("As"). */
export function cardName(card: number): string {
  return RANK_CHARS[card >> 2] + SUIT_CHARS[card & 3];
}

/** Parses one card such as "As", "td" or "QH"; `where` names the input in the error. */
export function parseCard(text: string, where = "card"): number {
  const t = text.trim();
  const r = t.length === 2 ? rankOfChar(t[0]) : -1;
  const s = t.length === 2 ? suitOfChar(t[1]) : -1;
  if (r < 0 || s < 0) {
    throw new KibitzError(
      "bad_card",
      `${where}: invalid card "${t}" (expected a rank of ${RANK_CHARS} and a suit of ${SUIT_CHARS}, e.g. "Qs")`,
    );
  }
  return 4 * r + s;
}

/**
 * Parses a list of cards written with or without spaces or commas ("Qs Jh 2h", "QsJh2h").
 * Invalid and duplicate cards are errors naming the card; `where` names the input.
 */
export function parseCards(text: string, where = "cards"): number[] {
  const compact = text.replace(/[\s,]+/g, "");
  if (compact.length % 2 !== 0) {
    const tail = compact.slice(compact.length - 1);
    throw new KibitzError("bad_card", `${where}: "${text}" has a dangling character "${tail}"`);
  }
  const cards: number[] = [];
  for (let i = 0; i < compact.length; i += 2) {
    const c = parseCard(compact.slice(i, i + 2), where);
    if (cards.includes(c)) {
      throw new KibitzError("bad_card", `${where}: duplicate card ${cardName(c)} in "${text}"`);
    }
    cards.push(c);
  }
  return cards;
}

/** Parses exactly `count` cards (e.g. a flop of 3) with the errors of parseCards. */
export function parseExactCards(text: string, count: number, where: string): number[] {
  const cards = parseCards(text, where);
  if (cards.length !== count) {
    throw new KibitzError(
      "bad_card",
      `${where}: expected ${count} card${count === 1 ? "" : "s"}, got ${cards.length} in "${text}"`,
    );
  }
  return cards;
}

/** Per-card flags (1 = present) indexed by card id, for O(1) card-removal checks. */
export function cardFlags(cards: readonly number[]): Uint8Array {
  const f = new Uint8Array(52);
  for (const c of cards) f[c] = 1;
  return f;
}

/** Index (0..1325) of the hand {a, b}; the same order as the reference solver's ranges. */
export function comboIndex(a: number, b: number): number {
  const lo = a < b ? a : b;
  const hi = a < b ? b : a;
  return (lo * (101 - lo)) / 2 + hi - 1;
}

/** The two cards of every combo index: COMBO_CARDS[2i] < COMBO_CARDS[2i+1]. */
export const COMBO_CARDS: Uint8Array = (() => {
  const out = new Uint8Array(2 * NUM_COMBOS);
  for (let a = 0; a < 52; a++) {
    for (let b = a + 1; b < 52; b++) {
      const i = comboIndex(a, b);
      out[2 * i] = a;
      out[2 * i + 1] = b;
    }
  }
  return out;
})();

/** The name of a hand, higher card first ("AsKh"). */
export function comboName(a: number, b: number): string {
  return a > b ? cardName(a) + cardName(b) : cardName(b) + cardName(a);
}

/** The 13x13 grid cell of a hand: row = 12 - higher rank; suited above the diagonal. */
export function gridCell(a: number, b: number): { row: number; col: number; label: string } {
  const r1 = Math.max(a >> 2, b >> 2);
  const r2 = Math.min(a >> 2, b >> 2);
  const suited = (a & 3) === (b & 3);
  if (r1 === r2) return { row: 12 - r1, col: 12 - r1, label: RANK_CHARS[r1] + RANK_CHARS[r1] };
  if (suited) return { row: 12 - r1, col: 12 - r2, label: RANK_CHARS[r1] + RANK_CHARS[r2] + "s" };
  return { row: 12 - r2, col: 12 - r1, label: RANK_CHARS[r1] + RANK_CHARS[r2] + "o" };
}
