// AssemblyScript source of the value head's fully connected kernel (built by `deno task
// build-wasm` into ../dense_wasm.ts): the Wasm twin of fast_infer.ts's dot, row after row, with
// the same f64 arithmetic in the same order (so the same bits): each product of two f32 values
// in f64, four partial sums (lane pairs (0, 1) and (2, 3) of each four inputs), the leftover
// inputs added to the first, then (s0 + s1) + (s2 + s3). All arguments are byte offsets into this
// module's memory, laid out by the JS side; nothing is allocated here.

/**
 * out[o] (f64) = the dot product of row o of w (`rows` rows of `n` f32 values) and x (`n` f32
 * values), summed as dot sums it.
 */
export function denseRows(w: usize, x: usize, n: i32, rows: i32, out: usize): void {
  const n4 = n & ~3;
  for (let o = 0; o < rows; o++) {
    const wo = w + <usize> (o * n) * 4;
    let a01 = f64x2.splat(0), a23 = f64x2.splat(0);
    for (let i = 0; i < n4; i += 4) {
      const wv = v128.load(wo + (<usize> i << 2)), xv = v128.load(x + (<usize> i << 2));
      a01 = f64x2.add(a01, f64x2.mul(f64x2.promote_low_f32x4(wv), f64x2.promote_low_f32x4(xv)));
      const wh = v128.shuffle<f32>(wv, wv, 2, 3, 0, 1), xh = v128.shuffle<f32>(xv, xv, 2, 3, 0, 1);
      a23 = f64x2.add(a23, f64x2.mul(f64x2.promote_low_f32x4(wh), f64x2.promote_low_f32x4(xh)));
    }
    let s0 = f64x2.extract_lane(a01, 0);
    for (let i = n4; i < n; i++) {
      s0 += <f64> load<f32>(wo + (<usize> i << 2)) * <f64> load<f32>(x + (<usize> i << 2));
    }
    const s = (s0 + f64x2.extract_lane(a01, 1)) +
      (f64x2.extract_lane(a23, 0) + f64x2.extract_lane(a23, 1));
    store<f64>(out + (<usize> o << 3), s);
  }
}
