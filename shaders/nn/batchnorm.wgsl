// Batch norm over N, H, W per channel (NCHW). stats = [mean[C], invStd[C]].
// batch_stats: one workgroup per channel, one-pass shifted mean/variance, updates running averages.
// running_stats: stats from the running averages (inference). apply: y = gamma xhat + beta.
// backward_reduce: dbeta = sum dy, dgamma = sum dy xhat. backward_apply: dx.
// The training graph's fused ops (flags: bit 0 = a residual / second gradient is bound, bit 1 =
// write dz): apply_relu: y = max(gamma xhat + beta + res, 0); relu_backward_reduce and
// relu_backward_apply: the backward of that with dz = (dy + dy2) where y > 0 formed on the fly.
struct Params { n: u32, c: u32, hw: u32, flags: u32 }

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
// apply_relu: the residual; the backward kernels: the fused op's output y (ReLU's mask).
@group(0) @binding(11) var<storage, read> res: array<f32>;
@group(0) @binding(12) var<storage, read> dy2: array<f32>;
// [mean, invStd, dbeta, dgamma] per channel: relu_backward_reduce writes it for the apply (which
// reads it instead of stats, dgamma and dbeta: 8 storage buffers a kernel at most).
@group(0) @binding(13) var<storage, read_write> coef: array<f32>;
@group(0) @binding(14) var<storage, read_write> dz: array<f32>;

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

// x at the channel's i-th value (0 past m): the reductions keep four independent loads in flight
// per thread (one workgroup per channel is too few threads to cover DRAM latency with one).
fn xat(ch: u32, i: u32, m: u32) -> f32 {
  return select(0.0, x[at(ch, min(i, m - 1u))], i < m);
}

// One pass over the channel: sums of d = x - k and of d^2, k the channel's first value (a shift
// near the mean: raw sums of squares would cancel in the variance's subtraction), then
// sum (x - mean)^2 = sum d^2 - (sum d)^2 / m. (Two passes read the activation twice.)
@compute @workgroup_size(256)
fn batch_stats(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let ch = wid.x;
  let t = lid.x;
  let m = p.n * p.hw;
  let k = x[at(ch, 0u)];
  var s = vec4<f32>(0.0);
  var q = vec4<f32>(0.0);
  for (var i = t; i < m; i += 1024u) {
    let ii = vec4<u32>(i, i + 256u, i + 512u, i + 768u);
    let v = vec4<f32>(xat(ch, ii.x, m), xat(ch, ii.y, m), xat(ch, ii.z, m), xat(ch, ii.w, m));
    let d = select(vec4<f32>(0.0), v - k, ii < vec4<u32>(m));
    s += d;
    q += d * d;
  }
  red[t] = (s.x + s.y) + (s.z + s.w);
  red2[t] = (q.x + q.y) + (q.z + q.w);
  workgroupBarrier();
  reduce(t);
  if (t == 0u) {
    let ds = red[0] / f32(m);
    let mean = k + ds;
    let ss = max(red2[0] - red[0] * ds, 0.0);
    let variance = ss / f32(m);
    stats[ch] = mean;
    stats[p.c + ch] = inverseSqrt(variance + EPS);
    var unbiased = variance;
    if (m > 1u) { unbiased = ss / f32(m - 1u); }
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
  var s = vec4<f32>(0.0);
  var sx = vec4<f32>(0.0);
  for (var i = t; i < m; i += 1024u) {
    // Four independent (dy, x) pairs in flight per thread; lanes past m contribute 0.
    let ii = vec4<u32>(i, i + 256u, i + 512u, i + 768u);
    let ok = ii < vec4<u32>(m);
    let jj = vec4<u32>(
      at(ch, min(ii.x, m - 1u)),
      at(ch, min(ii.y, m - 1u)),
      at(ch, min(ii.z, m - 1u)),
      at(ch, min(ii.w, m - 1u)),
    );
    let d = select(vec4<f32>(0.0), vec4<f32>(dy[jj.x], dy[jj.y], dy[jj.z], dy[jj.w]), ok);
    let xv = vec4<f32>(x[jj.x], x[jj.y], x[jj.z], x[jj.w]);
    s += d;
    sx += d * (xv - mean) * inv;
  }
  red[t] = (s.x + s.y) + (s.z + s.w);
  red2[t] = (sx.x + sx.y) + (sx.z + sx.w);
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

// y = max(gamma xhat + beta (+ res), 0): bnApply, the residual add and ReLU in one pass.
@compute @workgroup_size(64)
fn apply_relu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n * p.c * p.hw) { return; }
  let ch = (i / p.hw) % p.c;
  var z = (x[i] - stats[ch]) * stats[p.c + ch] * gamma[ch] + beta[ch];
  if ((p.flags & 1u) != 0u) { z = z + res[i]; }
  out[i] = max(z, 0.0);
}

// The gradient into the fused op's BN output at j: (dy + dy2) where y (bound at res) > 0.
fn relu_grad(j: u32) -> f32 {
  var d = dy[j];
  if ((p.flags & 1u) != 0u) { d = d + dy2[j]; }
  return select(0.0, d, res[j] > 0.0);
}

@compute @workgroup_size(256)
fn relu_backward_reduce(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let ch = wid.x;
  let t = lid.x;
  let m = p.n * p.hw;
  let mean = stats[ch];
  let inv = stats[p.c + ch];
  var s = vec4<f32>(0.0);
  var sx = vec4<f32>(0.0);
  for (var i = t; i < m; i += 1024u) {
    let ii = vec4<u32>(i, i + 256u, i + 512u, i + 768u);
    let ok = ii < vec4<u32>(m);
    let jj = vec4<u32>(
      at(ch, min(ii.x, m - 1u)),
      at(ch, min(ii.y, m - 1u)),
      at(ch, min(ii.z, m - 1u)),
      at(ch, min(ii.w, m - 1u)),
    );
    let g = vec4<f32>(relu_grad(jj.x), relu_grad(jj.y), relu_grad(jj.z), relu_grad(jj.w));
    let d = select(vec4<f32>(0.0), g, ok);
    let xv = vec4<f32>(x[jj.x], x[jj.y], x[jj.z], x[jj.w]);
    s += d;
    sx += d * (xv - mean) * inv;
  }
  red[t] = (s.x + s.y) + (s.z + s.w);
  red2[t] = (sx.x + sx.y) + (sx.z + sx.w);
  workgroupBarrier();
  reduce(t);
  if (t == 0u) {
    dbeta[ch] = red[0];
    dgamma[ch] = red2[0];
    coef[ch] = mean;
    coef[p.c + ch] = inv;
    coef[2u * p.c + ch] = red[0];
    coef[3u * p.c + ch] = red2[0];
  }
}

// dx of the batch norm from dz = relu_grad (written to dz too when flags bit 1 is set).
@compute @workgroup_size(64)
fn relu_backward_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n * p.c * p.hw) { return; }
  let ch = (i / p.hw) % p.c;
  let mean = coef[ch];
  let inv = coef[p.c + ch];
  let m = f32(p.n * p.hw);
  let g = relu_grad(i);
  if ((p.flags & 2u) != 0u) { dz[i] = g; }
  let xhat = (x[i] - mean) * inv;
  out[i] = gamma[ch] * inv / m * (m * g - coef[2u * p.c + ch] - xhat * coef[3u * p.c + ch]);
}
