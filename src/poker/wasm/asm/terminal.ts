// AssemblyScript source of the poker terminal kernels (built by `deno task build-wasm` into
// ../terminal_wasm.ts). Twins of PostflopGame.showdown and foldLike in ../../game.ts: the same f64
// sums in the same order, so the results are bit-identical. All arguments are byte offsets into
// this module's memory, which the JS side lays out (see ../terminal.ts); nothing is allocated here.

// Showdown descriptor (one per river board and player), i32 fields at these byte offsets.
const D_NM = 0; // own live hands
const D_NT = 4; // opponent live hands
const D_MREC = 8; // u32[nM] own records in ascending strength: strength | c1 << 16 | c2 << 24
const D_MIDX = 12; // i32[nM] own hand index of each record
const D_TREC = 16; // u32[nT] opponent records (the same layout)
const D_TIDX = 20; // i32[nT]
const D_DEAD = 24; // i32[nDead] own hands holding a board card
const D_NDEAD = 28;

/**
 * Showdown values of the descriptor's player against opponent reach `opp` (f32 by hand) into
 * `out` (f32 by hand); `same` (i32 by own hand): the same combo's opponent index or -1. Scratch:
 * `cs` and `all` f64[52], `win` f64[nM], `crec` u32[nT + 2] from one slot before `crec` (a
 * sentinel goes there), `cr` f64[nT].
 *
 * The TypeScript twin reads precomputed sweep slots; this merges the two strength orders instead
 * (the reference solver's way): the running sums it reads for hand i are the same f64 values the
 * twin's slots hold (the sum after the opponent hands strictly weaker, per card the sum after that
 * card's last such hand), combined in the same order, so the values are bit-identical with a
 * third of the memory traffic and 8 bytes of tables per hand instead of 28. The opponent hands of
 * nonzero reach are first compacted, branch-free, into packed records (adding +0 leaves an f64 sum
 * unchanged, so skipping them is bit-identical too): deep in the tree most reaches are 0, and the
 * merges then run over the rest only, stopped by sentinel strengths (0 before, 0xffff after; real
 * strengths are 1..7462) instead of bounds checks. Measured 1.6x faster than the plain merge.
 */
export function showdown(
  d: usize,
  opp: usize,
  out: usize,
  same: usize,
  payWin: f64,
  payLose: f64,
  payTie: f64,
  cs: usize,
  all: usize,
  win: usize,
  crec: usize,
  cr: usize,
): void {
  const nM = <usize> load<i32>(d + D_NM), nT = <usize> load<i32>(d + D_NT);
  const mrec = <usize> load<i32>(d + D_MREC), midx = <usize> load<i32>(d + D_MIDX);
  const trec = <usize> load<i32>(d + D_TREC), tidx = <usize> load<i32>(d + D_TIDX);
  // Compaction: every record is written, the count moves on only for nonzero reach. The runs of
  // zero reach at both ends are found first by reads alone (deep in the tree the reaches come in
  // runs, and often no opponent hand has reach at all) and left out; they add nothing.
  store<u32>(crec - 4, 0);
  let n: usize = 0;
  let k0: usize = 0;
  while (k0 < nT && load<f32>(opp + (<usize> load<i32>(tidx + (k0 << 2)) << 2)) == 0) k0++;
  if (k0 < nT) {
    let k1 = nT; // the record after the last nonzero one (k0 is nonzero: the scan stops there)
    while (load<f32>(opp + (<usize> load<i32>(tidx + ((k1 - 1) << 2)) << 2)) == 0) k1--;
    for (let k = k0; k < k1; k++) {
      const r = load<f32>(opp + (<usize> load<i32>(tidx + (k << 2)) << 2));
      store<u32>(crec + (n << 2), load<u32>(trec + (k << 2)));
      store<f64>(cr + (n << 3), <f64> r);
      n += <usize> (r != 0);
    }
  }
  store<u32>(crec + (n << 2), 0xffff);
  const dead = <usize> load<i32>(d + D_DEAD), nDead = load<i32>(d + D_NDEAD);
  if (n == 0) {
    // No opponent reach: every sum below stays +0 (win, lose, and compat - win - lose, since an
    // own combo's reach in the opponent's range is then +0 or -0), so every live hand gets the
    // value of those +0 sums, computed once with the same operations.
    let v = payWin * 0 + payLose * 0;
    if (payTie != 0) v += payTie * 0;
    const z = <f32> v;
    for (let i: usize = 0; i < nM; i++) {
      store<f32>(out + (<usize> load<i32>(midx + (i << 2)) << 2), z);
    }
    for (let i = 0; i < nDead; i++) {
      store<f32>(out + (<usize> load<i32>(dead + (<usize> i << 2)) << 2), 0);
    }
    return;
  }
  // Ascending: wins against the opponent hands strictly weaker.
  clear52(cs);
  let sum: f64 = 0;
  let k: usize = 0;
  // t: the next opponent record, held across own hands (read again only when k moves).
  let t = load<u32>(crec);
  for (let i: usize = 0; i < nM; i++) {
    const m = load<u32>(mrec + (i << 2));
    const s = m & 0xffff;
    while ((t & 0xffff) < s) {
      const r = load<f64>(cr + (k << 3));
      sum += r;
      addCard(cs, t, r);
      k++;
      t = load<u32>(crec + (k << 2));
    }
    store<f64>(win + (i << 3), minusCards(sum, cs, m));
  }
  const withTies = payTie != 0;
  let total: f64 = 0;
  if (withTies) {
    // The rest of the opponent hands: totals over all of them (the fold formula's sums).
    for (; k < n; k++) {
      const r = load<f64>(cr + (k << 3));
      sum += r;
      addCard(cs, load<u32>(crec + (k << 2)), r);
    }
    total = sum;
    memory.copy(all, cs, 52 * 8);
  }
  // Descending: losses against the opponent hands strictly stronger; then the value.
  clear52(cs);
  sum = 0;
  let j: isize = <isize> n - 1;
  t = load<u32>(crec + (<usize> j << 2));
  for (let i: isize = <isize> nM - 1; i >= 0; i--) {
    const m = load<u32>(mrec + (<usize> i << 2));
    const s = m & 0xffff;
    while ((t & 0xffff) > s) {
      const r = load<f64>(cr + (<usize> j << 3));
      sum += r;
      addCard(cs, t, r);
      j--;
      t = load<u32>(crec + (<usize> j << 2));
    }
    const w = load<f64>(win + (<usize> i << 3));
    const lose = minusCards(sum, cs, m);
    let v = payWin * w + payLose * lose;
    const h = <usize> load<i32>(midx + (<usize> i << 2));
    if (withTies) {
      const jj = load<i32>(same + (h << 2));
      const sj = jj >= 0 ? <f64> load<f32>(opp + (<usize> jj << 2)) : 0;
      const compat = minusCards(total, all, m) + sj;
      v += payTie * (compat - w - lose);
    }
    store<f32>(out + (h << 2), <f32> v);
  }
  for (let i = 0; i < nDead; i++) {
    store<f32>(out + (<usize> load<i32>(dead + (<usize> i << 2)) << 2), 0);
  }
}

/** Adds r to the per-card sums of both cards of packed record t. */
// @ts-ignore: decorator
function addCard(cs: usize, t: u32, r: f64): void {
  const a = cs + (<usize> ((t >> 16) & 0xff) << 3), b = cs + (<usize> (t >> 24) << 3);
  store<f64>(a, load<f64>(a) + r);
  store<f64>(b, load<f64>(b) + r);
}

/** x - cs[c1] - cs[c2] for the cards of packed record m (in that order, as the twin). */
// @ts-ignore: decorator
function minusCards(x: f64, cs: usize, m: u32): f64 {
  return x - load<f64>(cs + (<usize> ((m >> 16) & 0xff) << 3)) -
    load<f64>(cs + (<usize> (m >> 24) << 3));
}

/**
 * Fold-like values: out[h] = scale * (sum of opp over the opponent's hands sharing no card with
 * own hand h), h < nP; cards are u8 pairs by hand, `same` as in showdown, `cs` f64[52] scratch.
 */
export function fold(
  nO: i32,
  nP: i32,
  opp: usize,
  oc: usize,
  pc: usize,
  same: usize,
  out: usize,
  scale: f64,
  cs: usize,
): void {
  clear52(cs);
  let total: f64 = 0;
  // cur: the card whose sum is held in acc (at first card 0's, +0 like its slot: flushing it
  // before any addition leaves the slot as it is).
  let cur: usize = 0, acc: f64 = 0;
  const nO4 = nO & ~3;
  for (let i = 0; i < nO; i++) {
    // Four hands without reach (+0 or -0 bits) at once: deep in the tree the zero reaches come in
    // runs (similar hands, the same pure strategy), and skipping them adds nothing, as below.
    if ((i & 3) == 0 && i < nO4) {
      const bits = v128.and(v128.load(opp + (<usize> i << 2)), i32x4.splat(0x7fffffff));
      if (!v128.any_true(bits)) {
        i += 3;
        continue;
      }
    }
    // Within a chunk with reach, every hand is added: a zero (+0 or -0) leaves the sums (all
    // +0 or above) as they are, and no data-dependent branch is taken per hand.
    const r = <f64> load<f32>(opp + (<usize> i << 2));
    total += r;
    // The first card's sum stays in a register while consecutive hands share it (hands come
    // sorted by first card): no store-to-load chain through memory. Every sum still takes its
    // additions in hand order (no hand of the run holds that card second).
    const a = <usize> load<u8>(oc + (<usize> i << 1));
    if (a != cur) {
      store<f64>(cs + (cur << 3), acc);
      cur = a;
      acc = load<f64>(cs + (a << 3));
    }
    acc += r;
    const b = cs + (<usize> load<u8>(oc + (<usize> i << 1) + 1) << 3);
    store<f64>(b, load<f64>(b) + r);
  }
  store<f64>(cs + (cur << 3), acc);
  if (total == 0) {
    // Nothing reaches (every sum is +0): the values are scale * 0, as the loop below would write.
    const z = <f32> (scale * 0);
    for (let h = 0; h < nP; h++) store<f32>(out + (<usize> h << 2), z);
    return;
  }
  for (let h = 0; h < nP; h++) {
    const j = load<i32>(same + (<usize> h << 2));
    const s = j >= 0 ? <f64> load<f32>(opp + (<usize> j << 2)) : 0;
    const v = total - load<f64>(cs + (<usize> load<u8>(pc + (<usize> h << 1)) << 3)) -
      load<f64>(cs + (<usize> load<u8>(pc + (<usize> h << 1) + 1) << 3)) + s;
    store<f32>(out + (<usize> h << 2), <f32> (scale * v));
  }
}

/** Zeroes 52 f64 with v128 stores (26 of them). */
function clear52(p: usize): void {
  const z = i64x2.splat(0);
  for (let i: usize = 0; i < 52 * 8; i += 16) v128.store(p + i, z);
}
