import { COMBO_CARDS, comboIndex } from "./cards.ts";
import { rangeSuitSymmetric, type RangeWeights } from "./range.ts";

// Suit isomorphism of chance cards. Swapping two suits s1 < s2 maps the game onto itself when the
// board holds the same ranks in both suits and both ranges are symmetric in them; then dealing
// card c of suit s2 is the same as dealing its swapped twin of suit s1, with every hand h replaced
// by its swapped hand. Only such fully symmetric pairs are merged: a suit that is merely absent
// from the board is not interchangeable with one that is present (three-suited boards have
// nothing to merge on the turn, the case a popular C++ solver got wrong).

/** How the cards that can be dealt next merge under suit swaps. */
export interface ChanceIsomorphism {
  /** Per card: the representative card it merges into (itself when canonical, -1 if dealt). */
  representative: Int8Array;
  /** Per card: the suit it swaps with to reach its representative (-1 when canonical). */
  swapWith: Int8Array;
  /** Number of distinct outcomes after merging. */
  outcomes: number;
}

/** Swaps suits s1 and s2 in a card id. */
export function swapSuit(card: number, s1: number, s2: number): number {
  const s = card & 3;
  return s === s1 ? (card & ~3) | s2 : s === s2 ? (card & ~3) | s1 : card;
}

function rankMask(board: readonly number[], suit: number): number {
  let m = 0;
  for (const c of board) if ((c & 3) === suit) m |= 1 << (c >> 2);
  return m;
}

/** Which suit pairs both ranges are symmetric in: entry 4 * s1 + s2 (s1 < s2). */
export function symmetricSuitPairs(ranges: readonly [RangeWeights, RangeWeights]): Uint8Array {
  const out = new Uint8Array(16);
  for (let s2 = 1; s2 < 4; s2++) {
    for (let s1 = 0; s1 < s2; s1++) {
      const sym = rangeSuitSymmetric(ranges[0], s1, s2) && rangeSuitSymmetric(ranges[1], s1, s2);
      out[4 * s1 + s2] = sym ? 1 : 0;
    }
  }
  return out;
}

/**
 * The isomorphism of the next card dealt on `board` (in deal order; the first `startCards` are
 * the starting board): suit s2 merges into the lowest suit s1 with the same board ranks on the
 * starting board and after every card dealt since, when both ranges are symmetric in (s1, s2)
 * (`ranges`: the ranges themselves or symmetricSuitPairs of them).
 */
export function chanceIsomorphism(
  board: readonly number[],
  ranges: readonly [RangeWeights, RangeWeights] | Uint8Array,
  startCards = board.length,
): ChanceIsomorphism {
  const sym = ranges instanceof Uint8Array ? ranges : symmetricSuitPairs(ranges);
  // The exchange must map every earlier board of the path onto itself too (the reach arriving
  // here was shaped on those boards): equal rank sets on each prefix from the starting board on.
  const same = (s1: number, s2: number) => {
    for (let n = startCards; n <= board.length; n++) {
      const prefix = board.slice(0, n);
      if (rankMask(prefix, s1) !== rankMask(prefix, s2)) return false;
    }
    return true;
  };
  const partner = [0, 1, 2, 3];
  for (let s2 = 1; s2 < 4; s2++) {
    for (let s1 = 0; s1 < s2; s1++) {
      if (partner[s1] !== s1) continue;
      if (!sym[4 * s1 + s2] || !same(s1, s2)) continue;
      partner[s2] = s1;
      break;
    }
  }
  const representative = new Int8Array(52).fill(-1);
  const swapWith = new Int8Array(52).fill(-1);
  let outcomes = 0;
  for (let c = 0; c < 52; c++) {
    if (board.includes(c)) continue;
    const s = c & 3, to = partner[s];
    if (to === s) {
      representative[c] = c;
      outcomes++;
    } else {
      representative[c] = (c & ~3) | to;
      swapWith[c] = to;
    }
  }
  return { representative, swapWith, outcomes };
}

/**
 * Permutation of a hand list under swapping suits s1 and s2: perm[h] = index of the swapped hand
 * (-1 when the swapped hand is not in the list, which a symmetric range never produces).
 */
export function swapPermutation(combos: readonly number[], s1: number, s2: number): Int32Array {
  const pos = new Map<number, number>();
  combos.forEach((c, i) => pos.set(c, i));
  return Int32Array.from(combos, (c) => {
    const a = swapSuit(COMBO_CARDS[2 * c], s1, s2), b = swapSuit(COMBO_CARDS[2 * c + 1], s1, s2);
    return pos.get(comboIndex(a, b)) ?? -1;
  });
}
