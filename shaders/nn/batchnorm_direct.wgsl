// Barrier-free batch-norm reductions for software adapters (one invocation per channel), with the
// bindings and math of batchnorm.wgsl; llvmpipe compiles these in milliseconds.
struct Params { n: u32, c: u32, hw: u32, flags: u32 }

const EPS = 1e-5;
const MOMENTUM = 0.1;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> rmean: array<f32>;
@group(0) @binding(6) var<storage, read_write> rvar: array<f32>;
@group(0) @binding(8) var<storage, read_write> dgamma: array<f32>;
@group(0) @binding(9) var<storage, read_write> dbeta: array<f32>;
@group(0) @binding(10) var<uniform> p: Params;
@group(0) @binding(11) var<storage, read> res: array<f32>;
@group(0) @binding(12) var<storage, read> dy2: array<f32>;
@group(0) @binding(13) var<storage, read_write> coef: array<f32>;

@compute @workgroup_size(64)
fn batch_stats(@builtin(global_invocation_id) gid: vec3<u32>) {
  let ch = gid.x;
  if (ch >= p.c) { return; }
  let m = p.n * p.hw;
  var s = 0.0;
  for (var b = 0u; b < p.n; b++) {
    let o = (b * p.c + ch) * p.hw;
    for (var i = 0u; i < p.hw; i++) { s += x[o + i]; }
  }
  let mean = s / f32(m);
  var v = 0.0;
  for (var b = 0u; b < p.n; b++) {
    let o = (b * p.c + ch) * p.hw;
    for (var i = 0u; i < p.hw; i++) {
      let d = x[o + i] - mean;
      v += d * d;
    }
  }
  let variance = v / f32(m);
  stats[ch] = mean;
  stats[p.c + ch] = inverseSqrt(variance + EPS);
  var unbiased = variance;
  if (m > 1u) { unbiased = v / f32(m - 1u); }
  rmean[ch] = (1.0 - MOMENTUM) * rmean[ch] + MOMENTUM * mean;
  rvar[ch] = (1.0 - MOMENTUM) * rvar[ch] + MOMENTUM * unbiased;
}

@compute @workgroup_size(64)
fn backward_reduce(@builtin(global_invocation_id) gid: vec3<u32>) {
  let ch = gid.x;
  if (ch >= p.c) { return; }
  let mean = stats[ch];
  let inv = stats[p.c + ch];
  var s = 0.0;
  var sx = 0.0;
  for (var b = 0u; b < p.n; b++) {
    let o = (b * p.c + ch) * p.hw;
    for (var i = 0u; i < p.hw; i++) {
      s += dy[o + i];
      sx += dy[o + i] * (x[o + i] - mean) * inv;
    }
  }
  dbeta[ch] = s;
  dgamma[ch] = sx;
}

// The fused op's backward reduce (batchnorm.wgsl relu_backward_reduce): dz = (dy + dy2) where
// y (bound at res) > 0, formed on the fly; also writes coef = [mean, invStd, dbeta, dgamma].
@compute @workgroup_size(64)
fn relu_backward_reduce(@builtin(global_invocation_id) gid: vec3<u32>) {
  let ch = gid.x;
  if (ch >= p.c) { return; }
  let mean = stats[ch];
  let inv = stats[p.c + ch];
  let two = (p.flags & 1u) != 0u;
  var s = 0.0;
  var sx = 0.0;
  for (var b = 0u; b < p.n; b++) {
    let o = (b * p.c + ch) * p.hw;
    for (var i = 0u; i < p.hw; i++) {
      var d = dy[o + i];
      if (two) { d = d + dy2[o + i]; }
      d = select(0.0, d, res[o + i] > 0.0);
      s += d;
      sx += d * (x[o + i] - mean) * inv;
    }
  }
  dbeta[ch] = s;
  dgamma[ch] = sx;
  coef[ch] = mean;
  coef[p.c + ch] = inv;
  coef[2u * p.c + ch] = s;
  coef[3u * p.c + ch] = sx;
}
