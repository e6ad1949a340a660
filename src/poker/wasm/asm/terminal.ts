// AssemblyScript source of the poker terminal kernels (built by `deno task build-wasm` into
// ../terminal_wasm.ts). Twins of PostflopGame.showdown and foldLike in ../../game.ts: the same f64
// sums in the same order, so the results are bit-identical. All arguments are byte offsets into
// this module's memory, which the JS side lays out (see ../terminal.ts); nothing is allocated here.

// Showdown descriptor (one per river board and player), i32 fields at these byte offsets.
const D_NM = 0; // own live hands
const D_NT = 4; // opponent live hands
const D_MINE = 8; // i32[nM] own hands in strength order
const D_THEIRS = 12; // i32[nT]
const D_MS = 16; // u16[nM] own strengths (ascending)
const D_TS = 20; // u16[nT]
const D_MC1 = 24; // u8[nM] cards of own hands in strength order
const D_MC2 = 28;
const D_TC1 = 32; // u8[nT]
const D_TC2 = 36;
const D_DEAD = 40; // i32[nDead]
const D_NDEAD = 44;

/**
 * Showdown values of the descriptor's player against opponent reach `opp` (f32 by hand) into
 * `out` (f32 by hand); `same` (i32 by own hand): the same combo's opponent index or -1. Scratch:
 * `cs` and `all` f64[52], `win` f64[nM].
 *
 * The TypeScript twin reads precomputed sweep slots; this merges the two strength orders instead
 * (the reference solver's way): the running sums it reads for hand i are the same f64 values the
 * twin's slots hold (the sum after the opponent hands strictly weaker, per card the sum after that
 * card's last such hand), combined in the same order, so the values are bit-identical with a
 * third of the memory traffic and 8 bytes of tables per hand instead of 28. Opponent hands of
 * reach 0 are skipped (adding +0 leaves an f64 sum unchanged, so this too is bit-identical): deep
 * in the tree most reaches are 0, and the skip breaks the store-to-load chains through `cs`.
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
): void {
  const nM = load<i32>(d + D_NM), nT = load<i32>(d + D_NT);
  const mine = <usize> load<i32>(d + D_MINE), theirs = <usize> load<i32>(d + D_THEIRS);
  const ms = <usize> load<i32>(d + D_MS), ts = <usize> load<i32>(d + D_TS);
  const mc1 = <usize> load<i32>(d + D_MC1), mc2 = <usize> load<i32>(d + D_MC2);
  const tc1 = <usize> load<i32>(d + D_TC1), tc2 = <usize> load<i32>(d + D_TC2);
  // Ascending: wins against the opponent hands strictly weaker.
  clear52(cs);
  let sum: f64 = 0;
  let k = 0;
  for (let i = 0; i < nM; i++) {
    const s = load<u16>(ms + (<usize> i << 1));
    while (k < nT && load<u16>(ts + (<usize> k << 1)) < s) {
      const r = <f64> load<f32>(opp + (<usize> load<i32>(theirs + (<usize> k << 2)) << 2));
      if (r != 0) {
        sum += r;
        const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
        store<f64>(a, load<f64>(a) + r);
        store<f64>(b, load<f64>(b) + r);
      }
      k++;
    }
    store<f64>(
      win + (<usize> i << 3),
      sum - load<f64>(cs + (<usize> load<u8>(mc1 + i) << 3)) -
        load<f64>(cs + (<usize> load<u8>(mc2 + i) << 3)),
    );
  }
  const withTies = payTie != 0;
  let total: f64 = 0;
  if (withTies) {
    // The rest of the opponent hands: totals over all of them (the fold formula's sums).
    for (; k < nT; k++) {
      const r = <f64> load<f32>(opp + (<usize> load<i32>(theirs + (<usize> k << 2)) << 2));
      if (r != 0) {
        sum += r;
        const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
        store<f64>(a, load<f64>(a) + r);
        store<f64>(b, load<f64>(b) + r);
      }
    }
    total = sum;
    memory.copy(all, cs, 52 * 8);
  }
  // Descending: losses against the opponent hands strictly stronger; then the value.
  clear52(cs);
  sum = 0;
  k = nT - 1;
  for (let i = nM - 1; i >= 0; i--) {
    const s = load<u16>(ms + (<usize> i << 1));
    while (k >= 0 && load<u16>(ts + (<usize> k << 1)) > s) {
      const r = <f64> load<f32>(opp + (<usize> load<i32>(theirs + (<usize> k << 2)) << 2));
      if (r != 0) {
        sum += r;
        const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
        store<f64>(a, load<f64>(a) + r);
        store<f64>(b, load<f64>(b) + r);
      }
      k--;
    }
    const c1 = <usize> load<u8>(mc1 + i) << 3, c2 = <usize> load<u8>(mc2 + i) << 3;
    const w = load<f64>(win + (<usize> i << 3));
    const lose = sum - load<f64>(cs + c1) - load<f64>(cs + c2);
    let v = payWin * w + payLose * lose;
    const h = <usize> load<i32>(mine + (<usize> i << 2));
    if (withTies) {
      const j = load<i32>(same + (h << 2));
      const sj = j >= 0 ? <f64> load<f32>(opp + (<usize> j << 2)) : 0;
      const compat = total - load<f64>(all + c1) - load<f64>(all + c2) + sj;
      v += payTie * (compat - w - lose);
    }
    store<f32>(out + (h << 2), <f32> v);
  }
  const dead = <usize> load<i32>(d + D_DEAD), nDead = load<i32>(d + D_NDEAD);
  for (let i = 0; i < nDead; i++) {
    store<f32>(out + (<usize> load<i32>(dead + (<usize> i << 2)) << 2), 0);
  }
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
  for (let i = 0; i < nO; i++) {
    const r = <f64> load<f32>(opp + (<usize> i << 2));
    if (r == 0) continue;
    total += r;
    const a = cs + (<usize> load<u8>(oc + (<usize> i << 1)) << 3);
    const b = cs + (<usize> load<u8>(oc + (<usize> i << 1) + 1) << 3);
    store<f64>(a, load<f64>(a) + r);
    store<f64>(b, load<f64>(b) + r);
  }
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
