// The legal moves' probabilities of each row in move order, packed to the front of a row of
// `width` values: what an inference call reads back when no row has more than `width` legal
// moves (src/nn/compact_probs.ts), in place of every move's probability. One workgroup a row;
// thread t counts the legal moves of its run of mask words, a scan gives each run its first slot.
struct Params { rows: u32, cols: u32, width: u32, _p: u32 }

@group(0) @binding(0) var<storage, read> probs: array<f32>;
// The legal moves, one bit a move, each row in whole words (src/nn/mask_bits.ts).
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> packed: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> upto: array<u32, 64>;

@compute @workgroup_size(64)
fn compact(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  // Rows past 65,535 go along y (workgroup-uniform, so the early return keeps barriers uniform).
  let r = wid.y * 65535u + wid.x;
  if (r >= p.rows) { return; }
  let t = lid.x;
  let words = (p.cols + 31u) / 32u;
  let per = (words + 63u) / 64u;
  let w0 = min(t * per, words);
  let w1 = min(w0 + per, words);
  var n = 0u;
  for (var w = w0; w < w1; w++) { n += countOneBits(mask[r * words + w]); }
  upto[t] = n;
  workgroupBarrier();
  // Inclusive scan of the counts (Hillis-Steele, 6 steps).
  for (var s = 1u; s < 64u; s <<= 1u) {
    var v = upto[t];
    if (t >= s) { v += upto[t - s]; }
    workgroupBarrier();
    upto[t] = v;
    workgroupBarrier();
  }
  var k = upto[t] - n;
  for (var w = w0; w < w1; w++) {
    var bits = mask[r * words + w];
    while (bits != 0u && k < p.width) {
      let b = countTrailingZeros(bits);
      packed[r * p.width + k] = probs[r * p.cols + w * 32u + b];
      k++;
      bits &= bits - 1u;
    }
  }
}
