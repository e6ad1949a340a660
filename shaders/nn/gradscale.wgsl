// A power-of-two scale for storing a gradient tensor in f16 (f16 training): amax_partial writes
// each workgroup's max |x| over its grid-stride share of x; amax_scale reduces those maxima and
// writes scale = [S, 1/S], S = 2^e with e the largest integer such that S max|x| <= TARGET, built
// from the exponent bits (exp2 need not be exact), and [1, 1] where the max is 0 or not finite.
// TARGET leaves the Winograd sums of S-scaled values far below f16's 65504 and lifts the tensor's
// small values out of f16's subnormals.
struct Params { n: u32, parts: u32, _a: u32, _b: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> part: array<f32>;
@group(0) @binding(2) var<storage, read_write> scale: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

const TARGET = 8.0;
var<workgroup> red: array<f32, 256>;

fn reduce_max(t: u32) {
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] = max(red[t], red[t + s]); }
    workgroupBarrier();
  }
}

// Dispatch (p.parts, 1, 1).
@compute @workgroup_size(256)
fn amax_partial(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let stride = p.parts * 256u;
  var m0 = 0.0;
  var m1 = 0.0;
  // Two independent loads in flight a thread.
  var i = wid.x * 256u + lid.x;
  for (; i + stride < p.n; i += 2u * stride) {
    m0 = max(m0, abs(x[i]));
    m1 = max(m1, abs(x[i + stride]));
  }
  if (i < p.n) { m0 = max(m0, abs(x[i])); }
  red[lid.x] = max(m0, m1);
  reduce_max(lid.x);
  if (lid.x == 0u) { part[wid.x] = red[0]; }
}

fn pow2(e: i32) -> f32 {
  return bitcast<f32>(u32(e + 127) << 23u);
}

// Dispatch (1, 1, 1).
@compute @workgroup_size(256)
fn amax_scale(@builtin(local_invocation_id) lid: vec3<u32>) {
  var m = 0.0;
  for (var i = lid.x; i < p.parts; i += 256u) { m = max(m, part[i]); }
  red[lid.x] = m;
  reduce_max(lid.x);
  if (lid.x == 0u) {
    let a = red[0];
    var e = 0;
    // a > 0 and finite (a NaN fails both tests and keeps e = 0).
    if (a > 0.0 && a <= 3.4e38) {
      e = clamp(i32(floor(log2(TARGET / a))), -100, 100);
      // log2 is approximate: step e so that 2^e a <= TARGET < 2^(e+1) a holds exactly.
      if (a * pow2(e) > TARGET) { e -= 1; }
      if (e < 100 && a * pow2(e + 1) <= TARGET) { e += 1; }
    }
    scale[0] = pow2(e);
    scale[1] = pow2(-e);
  }
}
