// Table-based hand evaluator. A hand's strength is an integer in 1..7462 (higher is better):
// the index of its best five-card equivalence class. Non-flush hands are looked up by the sum of
// per-rank keys, chosen by a greedy search so that every multiset of 7 ranks (each at most 4
// times) has a distinct sum (the same construction as the public SKPokerEval evaluator; the keys
// were recomputed here and a test re-checks the uniqueness). Flushes are looked up by the 13-bit
// rank mask of the flush suit.

/** Per-rank keys whose sums identify a 7-card rank multiset. */
export const RANK_KEYS: Int32Array = Int32Array.from([
  0,
  1,
  5,
  22,
  98,
  453,
  2031,
  8698,
  22854,
  83661,
  262349,
  636345,
  1479181,
]);

/** Hand categories, weakest first. */
export const CATEGORY_NAMES = [
  "high card",
  "one pair",
  "two pair",
  "three of a kind",
  "straight",
  "flush",
  "full house",
  "four of a kind",
  "straight flush",
] as const;

const POW13 = [1, 13, 169, 2197, 28561, 371293];

function raw(category: number, kickers: number[]): number {
  let v = category * POW13[5];
  for (let i = 0; i < 5; i++) v += (kickers[i] ?? 0) * POW13[4 - i];
  return v;
}

/** Top card of the best straight in a 13-bit rank mask (3 = five-high wheel), or -1. */
export function straightHigh(mask: number): number {
  for (let hi = 12; hi >= 4; hi--) {
    const need = 0x1f << (hi - 4);
    if ((mask & need) === need) return hi;
  }
  return (mask & 0x100f) === 0x100f ? 3 : -1; // A-2-3-4-5
}

/** Raw comparable value of the best non-flush five-card hand from rank counts (5..7 cards). */
export function rawFromCounts(counts: ArrayLike<number>): number {
  let mask = 0;
  const quads: number[] = [], trips: number[] = [], pairs: number[] = [], singles: number[] = [];
  for (let r = 12; r >= 0; r--) {
    const c = counts[r];
    if (c > 0) mask |= 1 << r;
    if (c === 4) quads.push(r);
    else if (c === 3) trips.push(r);
    else if (c === 2) pairs.push(r);
    else if (c === 1) singles.push(r);
  }
  const desc = (xs: number[]) => xs.sort((a, b) => b - a);
  if (quads.length) {
    const kick = desc([...trips, ...pairs, ...singles, ...quads.slice(1)])[0];
    return raw(7, [quads[0], kick]);
  }
  if (trips.length && trips.length + pairs.length >= 2) {
    const pair = desc([...trips.slice(1), ...pairs])[0];
    return raw(6, [trips[0], pair]);
  }
  const sh = straightHigh(mask);
  if (sh >= 0) return raw(4, [sh]);
  if (trips.length) return raw(3, [trips[0], ...desc([...pairs, ...singles]).slice(0, 2)]);
  if (pairs.length >= 2) {
    return raw(2, [pairs[0], pairs[1], desc([...pairs.slice(2), ...singles])[0]]);
  }
  if (pairs.length) return raw(1, [pairs[0], ...singles.slice(0, 3)]);
  return raw(0, singles.slice(0, 5));
}

/** Raw comparable value of the best flush or straight flush in a rank mask of 5+ ranks. */
export function rawFromFlushMask(mask: number): number {
  const sh = straightHigh(mask);
  if (sh >= 0) return raw(8, [sh]);
  const top: number[] = [];
  for (let r = 12; r >= 0 && top.length < 5; r--) if (mask & (1 << r)) top.push(r);
  return raw(5, top);
}

/** Lookup tables of the evaluator, built once (about 16 MB). */
export interface EvalTables {
  /** Strength (1..7462) by rank-key sum of exactly 7 cards. */
  rank7: Uint16Array;
  /** Strength (1..7462) of the best flush by 13-bit rank mask (0 where fewer than 5 bits). */
  flush: Uint16Array;
  /** Strength by raw value, for 5- and 6-card hands. */
  rawToStrength: Map<number, number>;
  /** First strength of each category (index 0..8), plus 7463 at index 9. */
  categoryStart: Int32Array;
}

let tables: EvalTables | null = null;
/** The tables less rank7 (13.6 MB), kept when releaseEvalTables drops that (evaluate7's slow path). */
let small: Omit<EvalTables, "rank7"> | null = null;

function forEachMultiset(size: number, fn: (counts: Uint8Array) => void): void {
  const counts = new Uint8Array(13);
  const rec = (r: number, left: number) => {
    if (r === 13) {
      if (left === 0) fn(counts);
      return;
    }
    for (let c = 0; c <= 4 && c <= left; c++) {
      counts[r] = c;
      rec(r + 1, left - c);
    }
    counts[r] = 0;
  };
  rec(0, size);
}

function popcount13(m: number): number {
  let n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

/** Builds (once) and returns the evaluator tables. */
export function evalTables(): EvalTables {
  if (tables) return tables;
  // The 7462 classes: every 5-rank multiset (non-flush) plus every 5-bit mask (flush).
  const raws: number[] = [];
  forEachMultiset(5, (c) => raws.push(rawFromCounts(c)));
  for (let m = 0; m < 8192; m++) if (popcount13(m) === 5) raws.push(rawFromFlushMask(m));
  raws.sort((a, b) => a - b);
  const rawToStrength = new Map<number, number>();
  for (const r of raws) if (!rawToStrength.has(r)) rawToStrength.set(r, rawToStrength.size + 1);
  const categoryStart = new Int32Array(10).fill(7463);
  for (const [r, s] of rawToStrength) {
    const cat = Math.floor(r / POW13[5]);
    if (s < categoryStart[cat]) categoryStart[cat] = s;
  }
  const rank7 = new Uint16Array(4 * RANK_KEYS[12] + 3 * RANK_KEYS[11] + 1);
  forEachMultiset(7, (c) => {
    let key = 0;
    for (let r = 0; r < 13; r++) key += c[r] * RANK_KEYS[r];
    rank7[key] = rawToStrength.get(rawFromCounts(c))!;
  });
  const flush = new Uint16Array(8192);
  for (let m = 0; m < 8192; m++) {
    if (popcount13(m) >= 5) flush[m] = rawToStrength.get(rawFromFlushMask(m))!;
  }
  tables = { rank7, flush, rawToStrength, categoryStart };
  small = tables;
  return tables;
}

/**
 * Drops the 7-card table (13.6 MB) until evalTables() builds it again: a solve needs it only while
 * its tree is expanded (the showdown tables hold each board's strengths afterwards). Later
 * evaluations (the results' equity over runouts the tree merged by suit isomorphism) take the slow
 * path, from the rank counts, with the same strengths.
 */
export function releaseEvalTables(): void {
  tables = null;
}

/** Category (0 = high card .. 8 = straight flush) of a strength 1..7462. */
export function categoryOf(strength: number): number {
  const start = evalTables().categoryStart;
  let cat = 8;
  while (cat > 0 && strength < start[cat]) cat--;
  return cat;
}

/** Strength (1..7462, higher wins) of exactly seven distinct cards, by table lookup. */
export function evaluate7(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  c4: number,
  c5: number,
  c6: number,
): number {
  const t = tables ?? small ?? evalTables();
  // Suit counts live in 3-bit fields of one integer; a field >= 5 means a flush.
  const suits = (1 << 3 * (c0 & 3)) + (1 << 3 * (c1 & 3)) + (1 << 3 * (c2 & 3)) +
    (1 << 3 * (c3 & 3)) + (1 << 3 * (c4 & 3)) + (1 << 3 * (c5 & 3)) + (1 << 3 * (c6 & 3));
  for (let s = 0; s < 4; s++) {
    if (((suits >> 3 * s) & 7) >= 5) {
      let mask = 0;
      if ((c0 & 3) === s) mask |= 1 << (c0 >> 2);
      if ((c1 & 3) === s) mask |= 1 << (c1 >> 2);
      if ((c2 & 3) === s) mask |= 1 << (c2 >> 2);
      if ((c3 & 3) === s) mask |= 1 << (c3 >> 2);
      if ((c4 & 3) === s) mask |= 1 << (c4 >> 2);
      if ((c5 & 3) === s) mask |= 1 << (c5 >> 2);
      if ((c6 & 3) === s) mask |= 1 << (c6 >> 2);
      return t.flush[mask];
    }
  }
  if (!tables) {
    const counts = new Uint8Array(13);
    counts[c0 >> 2]++, counts[c1 >> 2]++, counts[c2 >> 2]++, counts[c3 >> 2]++;
    counts[c4 >> 2]++, counts[c5 >> 2]++, counts[c6 >> 2]++;
    return t.rawToStrength.get(rawFromCounts(counts))!;
  }
  const k = RANK_KEYS;
  return tables.rank7[
    k[c0 >> 2] + k[c1 >> 2] + k[c2 >> 2] + k[c3 >> 2] + k[c4 >> 2] + k[c5 >> 2] + k[c6 >> 2]
  ];
}

/** Strength (1..7462) of 5, 6 or 7 distinct cards (the table for 7, direct rules otherwise). */
export function evaluateCards(cards: readonly number[]): number {
  if (cards.length === 7) {
    return evaluate7(cards[0], cards[1], cards[2], cards[3], cards[4], cards[5], cards[6]);
  }
  if (cards.length < 5 || cards.length > 7) {
    throw new RangeError(`evaluateCards needs 5 to 7 cards, got ${cards.length}`);
  }
  const t = evalTables();
  const counts = new Uint8Array(13);
  const suitMask = [0, 0, 0, 0];
  for (const c of cards) {
    counts[c >> 2]++;
    suitMask[c & 3] |= 1 << (c >> 2);
  }
  let best = t.rawToStrength.get(rawFromCounts(counts))!;
  for (const m of suitMask) {
    if (popcount13(m) >= 5) best = Math.max(best, t.flush[m]);
  }
  return best;
}
