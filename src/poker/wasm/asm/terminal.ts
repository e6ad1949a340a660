// AssemblyScript source of the poker terminal kernels (built by `deno task build-wasm` into
// ../terminal_wasm.ts). Twins of PostflopGame.showdown and foldLike in ../../game.ts: the same f64
// sums in the same order, so the results are bit-identical. All arguments are byte offsets into
// this module's memory, which the JS side lays out (see ../terminal.ts); nothing is allocated here.

// Showdown descriptor (one per river board and player), i32 fields at these byte offsets.
const D_NM = 0; // own live hands
const D_NT = 4; // opponent live hands
const D_MINE = 8; // i32[nM] own hands in strength order
const D_THEIRS = 12; // i32[nT]
const D_MC1 = 16; // u8[nM]
const D_MC2 = 20;
const D_TC1 = 24; // u8[nT]
const D_TC2 = 28;
const D_UP1 = 32; // u16[nT]
const D_UP2 = 36;
const D_DOWN1 = 40;
const D_DOWN2 = 44;
const D_WC = 48; // u16[nM]
const D_LC = 52;
const D_W1 = 56;
const D_W2 = 60;
const D_L1 = 64;
const D_L2 = 68;
const D_DEAD = 72; // i32[nDead]
const D_NDEAD = 76;

/**
 * Showdown values of the descriptor's player against opponent reach `opp` (f32 by hand) into
 * `out` (f32 by hand). `same` (i32 by own hand): the same combo's opponent index or -1. Scratch:
 * `cs` f64[52], `sr` f64[nT], `up`/`down` f64[nT + 1], `upCard`/`downCard` f64[1 + 2 nT],
 * `compat` f64[nM].
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
  sr: usize,
  up: usize,
  down: usize,
  upCard: usize,
  downCard: usize,
  compat: usize,
): void {
  const nM = load<i32>(d + D_NM), nT = load<i32>(d + D_NT);
  const mine = <usize> load<i32>(d + D_MINE), theirs = <usize> load<i32>(d + D_THEIRS);
  const mc1 = <usize> load<i32>(d + D_MC1), mc2 = <usize> load<i32>(d + D_MC2);
  const tc1 = <usize> load<i32>(d + D_TC1), tc2 = <usize> load<i32>(d + D_TC2);
  const up1 = <usize> load<i32>(d + D_UP1), up2 = <usize> load<i32>(d + D_UP2);
  const down1 = <usize> load<i32>(d + D_DOWN1), down2 = <usize> load<i32>(d + D_DOWN2);
  clear52(cs);
  let sum: f64 = 0;
  for (let k = 0; k < nT; k++) {
    const r = <f64> load<f32>(opp + (<usize> load<i32>(theirs + (<usize> k << 2)) << 2));
    store<f64>(sr + (<usize> k << 3), r);
    sum += r;
    store<f64>(up + (<usize> (k + 1) << 3), sum);
    const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
    const x = load<f64>(a) + r;
    store<f64>(a, x);
    store<f64>(upCard + (<usize> load<u16>(up1 + (<usize> k << 1)) << 3), x);
    const y = load<f64>(b) + r;
    store<f64>(b, y);
    store<f64>(upCard + (<usize> load<u16>(up2 + (<usize> k << 1)) << 3), y);
  }
  const withTies = payTie != 0;
  if (withTies) {
    clear52(cs);
    let total: f64 = 0;
    for (let k = 0; k < nT; k++) {
      const r = load<f64>(sr + (<usize> k << 3));
      total += r;
      const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
      store<f64>(a, load<f64>(a) + r);
      store<f64>(b, load<f64>(b) + r);
    }
    for (let i = 0; i < nM; i++) {
      const j = load<i32>(same + (<usize> load<i32>(mine + (<usize> i << 2)) << 2));
      const s = j >= 0 ? <f64> load<f32>(opp + (<usize> j << 2)) : 0;
      const v = total - load<f64>(cs + (<usize> load<u8>(mc1 + i) << 3)) -
        load<f64>(cs + (<usize> load<u8>(mc2 + i) << 3)) + s;
      store<f64>(compat + (<usize> i << 3), v);
    }
  }
  clear52(cs);
  sum = 0;
  for (let k = nT - 1, j = 1; k >= 0; k--, j++) {
    const r = load<f64>(sr + (<usize> k << 3));
    sum += r;
    store<f64>(down + (<usize> j << 3), sum);
    const a = cs + (<usize> load<u8>(tc1 + k) << 3), b = cs + (<usize> load<u8>(tc2 + k) << 3);
    const x = load<f64>(a) + r;
    store<f64>(a, x);
    store<f64>(downCard + (<usize> load<u16>(down1 + (<usize> k << 1)) << 3), x);
    const y = load<f64>(b) + r;
    store<f64>(b, y);
    store<f64>(downCard + (<usize> load<u16>(down2 + (<usize> k << 1)) << 3), y);
  }
  const wc = <usize> load<i32>(d + D_WC), lc = <usize> load<i32>(d + D_LC);
  const w1 = <usize> load<i32>(d + D_W1), w2 = <usize> load<i32>(d + D_W2);
  const l1 = <usize> load<i32>(d + D_L1), l2 = <usize> load<i32>(d + D_L2);
  store<f64>(upCard, 0);
  store<f64>(downCard, 0);
  store<f64>(up, 0);
  store<f64>(down, 0);
  for (let i = 0; i < nM; i++) {
    const i2 = <usize> i << 1;
    const win = load<f64>(up + (<usize> load<u16>(wc + i2) << 3)) -
      load<f64>(upCard + (<usize> load<u16>(w1 + i2) << 3)) -
      load<f64>(upCard + (<usize> load<u16>(w2 + i2) << 3));
    const lose = load<f64>(down + (<usize> load<u16>(lc + i2) << 3)) -
      load<f64>(downCard + (<usize> load<u16>(l1 + i2) << 3)) -
      load<f64>(downCard + (<usize> load<u16>(l2 + i2) << 3));
    let v = payWin * win + payLose * lose;
    if (withTies) v += payTie * (load<f64>(compat + (<usize> i << 3)) - win - lose);
    store<f32>(out + (<usize> load<i32>(mine + (<usize> i << 2)) << 2), <f32> v);
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
