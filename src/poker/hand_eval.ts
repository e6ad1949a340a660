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

// Scratch of rawFromCounts: ranks by count, descending (a 7-card hand has at most 7 of a kind).
const QUADS = new Int8Array(8), TRIPS = new Int8Array(8), PAIRS = new Int8Array(8);
const SINGLES = new Int8Array(8);

/**
 * Raw comparable value of the best non-flush five-card hand from rank counts (5..7 cards). Without
 * allocations: the evaluator's tables call it for every 7-card rank multiset at start-up.
 */
export function rawFromCounts(counts: ArrayLike<number>): number {
  let mask = 0, nq = 0, nt = 0, np = 0, ns = 0;
  for (let r = 12; r >= 0; r--) {
    const c = counts[r];
    if (c > 0) mask |= 1 << r;
    if (c === 4) QUADS[nq++] = r;
    else if (c === 3) TRIPS[nt++] = r;
    else if (c === 2) PAIRS[np++] = r;
    else if (c === 1) SINGLES[ns++] = r;
  }
  const P5 = POW13[5], P4 = POW13[4], P3 = POW13[3], P2 = POW13[2], P1 = POW13[1];
  if (nq) {
    // Kicker: the highest other rank held (another quad's, a trip's, a pair's or a single's).
    let kick = 0;
    for (let r = 12; r >= 0; r--) {
      if (r !== QUADS[0] && counts[r] > 0) {
        kick = r;
        break;
      }
    }
    return 7 * P5 + QUADS[0] * P4 + kick * P3;
  }
  if (nt && nt + np >= 2) {
    const pair = Math.max(nt > 1 ? TRIPS[1] : -1, np ? PAIRS[0] : -1);
    return 6 * P5 + TRIPS[0] * P4 + pair * P3;
  }
  const sh = straightHigh(mask);
  if (sh >= 0) return 4 * P5 + sh * P4;
  if (nt) {
    // The two highest of the pairs and singles (nt = 1 and np = 0 here).
    return 3 * P5 + TRIPS[0] * P4 + (ns > 0 ? SINGLES[0] : 0) * P3 + (ns > 1 ? SINGLES[1] : 0) * P2;
  }
  if (np >= 2) {
    const kick = Math.max(np > 2 ? PAIRS[2] : -1, ns ? SINGLES[0] : -1);
    return 2 * P5 + PAIRS[0] * P4 + PAIRS[1] * P3 + (kick < 0 ? 0 : kick) * P2;
  }
  if (np) {
    return P5 + PAIRS[0] * P4 + (ns > 0 ? SINGLES[0] : 0) * P3 + (ns > 1 ? SINGLES[1] : 0) * P2 +
      (ns > 2 ? SINGLES[2] : 0) * P1;
  }
  return SINGLES[0] * P4 + SINGLES[1] * P3 + SINGLES[2] * P2 + SINGLES[3] * P1 + SINGLES[4];
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

/** The classes and the flush table (cheap: 7462 classes, 8192 masks), built once. */
interface ClassTables {
  flush: Uint16Array;
  rawToStrength: Map<number, number>;
  categoryStart: Int32Array;
}

let classes: ClassTables | null = null;

function classTables(): ClassTables {
  if (classes) return classes;
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
  const flush = new Uint16Array(8192);
  for (let m = 0; m < 8192; m++) {
    if (popcount13(m) >= 5) flush[m] = rawToStrength.get(rawFromFlushMask(m))!;
  }
  classes = { flush, rawToStrength, categoryStart };
  return classes;
}

/** Entries of the 7-card rank table: one per rank-key sum. */
const RANK7_SIZE = 4 * RANK_KEYS[12] + 3 * RANK_KEYS[11] + 1;

/**
 * The rank table evaluate7 reads, filled on demand (0: not yet): a solve evaluates a few thousand
 * hands per river board, far fewer than the 49,205 rank multisets that evalTables() fills up
 * front (about 0.1 s of start-up). The same strengths either way.
 */
let lazyRank7: Uint16Array | null = null;
const COUNTS = new Uint8Array(13);

/**
 * A zeroed rank table whose entries of every 7-card rank multiset are written (with 0), so the
 * same pages are resident as with the full table (the memory estimate counts the table, poker/
 * memory.ts handEvaluatorBytes): the keys only, not the hands' values, a few ms.
 */
function residentTable(): Uint16Array {
  const t = new Uint16Array(RANK7_SIZE);
  const keys = RANK_KEYS;
  const rec = (r: number, left: number, key: number) => {
    if (r === 12) {
      if (left <= 4) t[key + left * keys[12]] = 0;
      return;
    }
    for (let c = 0; c <= 4 && c <= left; c++) rec(r + 1, left - c, key + c * keys[r]);
  };
  rec(0, 7, 0);
  return t;
}

/** Strength of the non-flush 7-card rank multiset of these cards, stored in the lazy table. */
function fillRank7(key: number, c: readonly number[]): number {
  for (const x of c) COUNTS[x >> 2]++;
  const v = classTables().rawToStrength.get(rawFromCounts(COUNTS))!;
  COUNTS.fill(0);
  lazyRank7![key] = v;
  return v;
}

/** Builds (once) and returns the evaluator tables (every 7-card rank multiset looked up). */
export function evalTables(): EvalTables {
  if (tables) return tables;
  const { flush, rawToStrength, categoryStart } = classTables();
  const rank7 = new Uint16Array(RANK7_SIZE);
  forEachMultiset(7, (c) => {
    let key = 0;
    for (let r = 0; r < 13; r++) key += c[r] * RANK_KEYS[r];
    rank7[key] = rawToStrength.get(rawFromCounts(c))!;
  });
  tables = { rank7, flush, rawToStrength, categoryStart };
  lazyRank7 = null; // evaluate7 reads the full table from now on
  released = false;
  return tables;
}

/** Set by releaseEvalTables: evaluate7 then takes the slow path instead of a new 7-card table. */
let released = false;

/**
 * Drops the 7-card table (13.6 MB, full or on demand) until evalTables() builds it again: a solve
 * needs it only while its tree is expanded (the showdown tables hold each board's strengths
 * afterwards). Later evaluations (the results' equity over runouts the tree merged by suit
 * isomorphism) take the slow path, from the rank counts, with the same strengths.
 */
export function releaseEvalTables(): void {
  tables = null;
  lazyRank7 = null;
  released = true;
}

/** Lets evaluate7 use a 7-card table again (filled on demand) after releaseEvalTables. */
export function resumeEvalTables(): void {
  released = false;
}

/** Category (0 = high card .. 8 = straight flush) of a strength 1..7462. */
export function categoryOf(strength: number): number {
  const start = classTables().categoryStart;
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
  const t = tables ?? classTables();
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
  const k = RANK_KEYS;
  const key = k[c0 >> 2] + k[c1 >> 2] + k[c2 >> 2] + k[c3 >> 2] + k[c4 >> 2] + k[c5 >> 2] +
    k[c6 >> 2];
  if (tables) return tables.rank7[key];
  if (released) {
    const counts = new Uint8Array(13);
    counts[c0 >> 2]++, counts[c1 >> 2]++, counts[c2 >> 2]++, counts[c3 >> 2]++;
    counts[c4 >> 2]++, counts[c5 >> 2]++, counts[c6 >> 2]++;
    return t.rawToStrength.get(rawFromCounts(counts))!;
  }
  const lazy = lazyRank7 ??= residentTable();
  return lazy[key] || fillRank7(key, [c0, c1, c2, c3, c4, c5, c6]);
}

/** Strength (1..7462) of 5, 6 or 7 distinct cards (the table for 7, direct rules otherwise). */
export function evaluateCards(cards: readonly number[]): number {
  if (cards.length === 7) {
    return evaluate7(cards[0], cards[1], cards[2], cards[3], cards[4], cards[5], cards[6]);
  }
  if (cards.length < 5 || cards.length > 7) {
    throw new RangeError(`evaluateCards needs 5 to 7 cards, got ${cards.length}`);
  }
  const t = classTables();
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
