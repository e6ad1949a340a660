import { categoryOf, evalTables, RANK_KEYS } from "./hand_eval.ts";

/** Counts of hands per category (index 0 = high card .. 8 = straight flush). */
export type CategoryCounts = Float64Array;

/**
 * Enumerates all C(52,7) = 133,784,560 seven-card hands through the lookup tables and counts
 * them by category. Keys, suit counts and per-suit rank masks are accumulated incrementally
 * down the seven nested loops so the innermost step is two adds and one or two lookups.
 * `onProgress(done, total)` is called once per first-card value.
 */
export function enumerateSevenCardCategories(
  onProgress?: (done: number, total: number) => void,
): CategoryCounts {
  const t = evalTables();
  const byStrength = new Float64Array(7463);
  const flushSuit = new Int8Array(4096).fill(-1);
  for (let v = 0; v < 4096; v++) {
    for (let s = 0; s < 4; s++) if (((v >> 3 * s) & 7) >= 5) flushSuit[v] = s;
  }
  const key = new Int32Array(52), suitInc = new Int32Array(52), bit = new Int32Array(52);
  for (let c = 0; c < 52; c++) {
    key[c] = RANK_KEYS[c >> 2];
    suitInc[c] = 1 << 3 * (c & 3);
    bit[c] = 1 << (c >> 2);
  }
  // masks[level * 4 + suit]: rank mask of that suit among the first `level` cards.
  const masks = new Int32Array(8 * 4);
  const rank7 = t.rank7, flush = t.flush;
  const total = 133784560;
  let done = 0;
  const push = (level: number, c: number) => {
    const o = level * 4, n = o + 4;
    masks[n] = masks[o];
    masks[n + 1] = masks[o + 1];
    masks[n + 2] = masks[o + 2];
    masks[n + 3] = masks[o + 3];
    masks[n + (c & 3)] |= bit[c];
  };
  for (let a = 0; a < 46; a++) {
    push(0, a);
    const ka = key[a], sa = suitInc[a];
    for (let b = a + 1; b < 47; b++) {
      push(1, b);
      const kb = ka + key[b], sb = sa + suitInc[b];
      for (let c = b + 1; c < 48; c++) {
        push(2, c);
        const kc = kb + key[c], sc = sb + suitInc[c];
        for (let d = c + 1; d < 49; d++) {
          push(3, d);
          const kd = kc + key[d], sd = sc + suitInc[d];
          for (let e = d + 1; e < 50; e++) {
            push(4, e);
            const ke = kd + key[e], se = sd + suitInc[e];
            for (let f = e + 1; f < 51; f++) {
              push(5, f);
              const kf = ke + key[f], sf = se + suitInc[f];
              for (let g = f + 1; g < 52; g++) {
                const fs = flushSuit[sf + suitInc[g]];
                if (fs < 0) byStrength[rank7[kf + key[g]]]++;
                else {
                  const m = masks[24 + fs] | ((g & 3) === fs ? bit[g] : 0);
                  byStrength[flush[m]]++;
                }
              }
            }
          }
        }
      }
    }
    done += binom(51 - a, 6);
    onProgress?.(done, total);
  }
  const counts = new Float64Array(9);
  for (let s = 1; s <= 7462; s++) counts[categoryOf(s)] += byStrength[s];
  return counts;
}

function binom(n: number, k: number): number {
  let r = 1;
  for (let i = 0; i < k; i++) r = (r * (n - i)) / (i + 1);
  return Math.round(r);
}
