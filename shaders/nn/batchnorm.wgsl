// Batch norm over N, H, W per channel (NCHW). stats = [mean[C], invStd[C]].
// batch_stats: one workgroup per channel, two-pass mean/variance, updates running averages.
// running_stats: stats from the running averages (inference). apply: y = gamma xhat + beta.
// backward_reduce: dbeta = sum dy, dgamma = sum dy xhat. backward_apply: dx.
struct Params { n: u32, c: u32, hw: u32, _p: u32 }

const EPS = 1e-5;
const MOMENTUM = 0.1;

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> rmean: array<f32>;
@group(0) @binding(6) var<storage, read_write> rvar: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<f32>;
@group(0) @binding(8) var<storage, read_write> dgamma: array<f32>;
@group(0) @binding(9) var<storage, read_write> dbeta: array<f32>;
@group(0) @binding(10) var<uniform> p: Params;

var<workgroup> red: array<f32, 256>;
var<workgroup> red2: array<f32, 256>;

fn reduce(t: u32) {
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (t < s) {
      red[t] += red[t + s];
      red2[t] += red2[t + s];
    }
    workgroupBarrier();
  }
}

fn at(ch: u32, i: u32) -> u32 {
  let b = i / p.hw;
  return (b * p.c + ch) * p.hw + (i - b * p.hw);
}

@compute @workgroup_size(256)
fn batch_stats(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let ch = wid.x;
  let t = lid.x;
  let m = p.n * p.hw;
  var s = 0.0;
  for (var i = t; i < m; i += 256u) { s += x[at(ch, i)]; }
  red[t] = s;
  red2[t] = 0.0;
  workgroupBarrier();
  reduce(t);
  let mean = red[0] / f32(m);
  workgroupBarrier();
  var v = 0.0;
  for (var i = t; i < m; i += 256u) {
    let d = x[at(ch, i)] - mean;
    v += d * d;
  }
  red[t] = v;
  red2[t] = 0.0;
  workgroupBarrier();
  reduce(t);
  if (t == 0u) {
    let variance = red[0] / f32(m);
    stats[ch] = mean;
    stats[p.c + ch] = inverseSqrt(variance + EPS);
    var unbiased = variance;
    if (m > 1u) { unbiased = red[0] / f32(m - 1u); }
    rmean[ch] = (1.0 - MOMENTUM) * rmean[ch] + MOMENTUM * mean;
    rvar[ch] = (1.0 - MOMENTUM) * rvar[ch] + MOMENTUM * unbiased;
  }
}

@compute @workgroup_size(64)
fn running_stats(@builtin(global_invocation_id) gid: vec3<u32>) {
  let ch = gid.x;
  if (ch >= p.c) { return; }
  stats[ch] = rmean[ch];
  stats[p.c + ch] = inverseSqrt(rvar[ch] + EPS);
}

@compute @workgroup_size(64)
fn apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n * p.c * p.hw) { return; }
  let ch = (i / p.hw) % p.c;
  out[i] = (x[i] - stats[ch]) * stats[p.c + ch] * gamma[ch] + beta[ch];
}

@compute @workgroup_size(256)
fn backward_reduce(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let ch = wid.x;
  let t = lid.x;
  let m = p.n * p.hw;
  let mean = stats[ch];
  let inv = stats[p.c + ch];
  var s = 0.0;
  var sx = 0.0;
  for (var i = t; i < m; i += 256u) {
    let j = at(ch, i);
    s += dy[j];
    sx += dy[j] * (x[j] - mean) * inv;
  }
  red[t] = s;
  red2[t] = sx;
  workgroupBarrier();
  reduce(t);
  if (t == 0u) {
    dbeta[ch] = red[0];
    dgamma[ch] = red2[0];
  }
}

@compute @workgroup_size(64)
fn backward_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n * p.c * p.hw) { return; }
  let ch = (i / p.hw) % p.c;
  let mean = stats[ch];
  let inv = stats[p.c + ch];
  let m = f32(p.n * p.hw);
  let xhat = (x[i] - mean) * inv;
  out[i] = gamma[ch] * inv / m * (m * dy[i] - dbeta[ch] - xhat * dgamma[ch]);
}
