// AssemblyScript source of the CFR engine's regret matching (built by `deno task build-wasm` into
// ../regret_wasm.ts). Twin of CfrSolver.current's f32-storage path: max(r, 0) summed per hand over
// the actions in order in f64, then sigma = max(r, 0) / sum (or 1 / A where no regret is positive)
// in f64 and rounded to f32, so the results are bit-identical. Two hands per f64x2 lane pair, four
// per f32x4 load. Arguments are byte offsets into this module's memory (../regret.ts lays it out).

/**
 * Regret matching of an A x H block (action-major f32 at `reg`) into `sig` (same layout); `sum`
 * and `den` are f64[H] scratch. H is padded by the caller to a multiple of 4 (padding reads and
 * writes are harmless: scratch lanes).
 */
export function regretMatch(reg: usize, sig: usize, A: i32, H: i32, sum: usize, den: usize): void {
  const zero4 = f32x4.splat(0);
  const zero2 = f64x2.splat(0);
  for (let h = 0; h < H; h += 4) {
    store<v128>(sum + (<usize> h << 3), zero2), store<v128>(sum + (<usize> h << 3) + 16, zero2);
  }
  for (let a = 0; a < A; a++) {
    const row = reg + (<usize> (a * H) << 2);
    for (let h = 0; h < H; h += 4) {
      const m = f32x4.max(v128.load(row + (<usize> h << 2)), zero4);
      const lo = f64x2.promote_low_f32x4(m);
      const hi = f64x2.promote_low_f32x4(v128.shuffle<u32>(m, m, 2, 3, 0, 1));
      const s = sum + (<usize> h << 3);
      store<v128>(s, f64x2.add(load<v128>(s), lo));
      store<v128>(s + 16, f64x2.add(load<v128>(s + 16), hi));
    }
  }
  const uniform = f64x2.splat(1 / <f64> A), inf = f64x2.splat(Infinity);
  for (let h = 0; h < H; h += 2) {
    const s = load<v128>(sum + (<usize> h << 3));
    const pos = f64x2.gt(s, zero2);
    store<v128>(den + (<usize> h << 3), v128.bitselect(s, inf, pos));
    store<v128>(sum + (<usize> h << 3), v128.bitselect(zero2, uniform, pos));
  }
  for (let a = 0; a < A; a++) {
    const off = <usize> (a * H) << 2;
    const row = reg + off, out = sig + off;
    for (let h = 0; h < H; h += 4) {
      const m = f32x4.max(v128.load(row + (<usize> h << 2)), zero4);
      const lo = f64x2.promote_low_f32x4(m);
      const hi = f64x2.promote_low_f32x4(v128.shuffle<u32>(m, m, 2, 3, 0, 1));
      const d = den + (<usize> h << 3), u = sum + (<usize> h << 3);
      const x = f32x4.demote_f64x2_zero(f64x2.add(f64x2.div(lo, load<v128>(d)), load<v128>(u)));
      const y = f32x4.demote_f64x2_zero(
        f64x2.add(f64x2.div(hi, load<v128>(d + 16)), load<v128>(u + 16)),
      );
      v128.store(out + (<usize> h << 2), v128.shuffle<u32>(x, y, 0, 1, 4, 5));
    }
  }
}
