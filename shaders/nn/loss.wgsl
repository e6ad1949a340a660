// Policy: masked softmax (illegal moves excluded) and cross-entropy against a target distribution,
// one workgroup per row. Value: tanh and squared error, one thread per row.
// Gradients are of the batch-mean loss: dlogits = (p * sum_legal t - t) / B, dz = 2 (v - t)(1 - v^2) / B.
struct Params { rows: u32, cols: u32, _p0: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read> logits: array<f32>;
// The legal moves, one bit a move, each row in whole words (src/nn/mask_bits.ts).
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read> tgt: array<f32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> loss: array<f32>;
@group(0) @binding(5) var<storage, read_write> grad: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

// Whether move i of row r is legal.
fn legal(r: u32, i: u32) -> bool {
  return ((mask[r * ((p.cols + 31u) / 32u) + (i >> 5u)] >> (i & 31u)) & 1u) != 0u;
}

var<workgroup> red: array<f32, 256>;
var<workgroup> red2: array<f32, 256>;

fn reduce_max(t: u32) {
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] = max(red[t], red[t + s]); }
    workgroupBarrier();
  }
}

fn reduce_sum(t: u32) {
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (t < s) {
      red[t] += red[t + s];
      red2[t] += red2[t + s];
    }
    workgroupBarrier();
  }
}

// Writes probs for row `r` and returns (log-sum-exp shift, whether any move is legal) via red.
fn softmax_row(r: u32, t: u32) -> vec2<f32> {
  let o = r * p.cols;
  var mx = -3.0e38;
  for (var i = t; i < p.cols; i += 256u) {
    if (legal(r, i)) { mx = max(mx, logits[o + i]); }
  }
  red[t] = mx;
  workgroupBarrier();
  reduce_max(t);
  mx = red[0];
  workgroupBarrier();
  var s = 0.0;
  for (var i = t; i < p.cols; i += 256u) {
    if (legal(r, i)) { s += exp(logits[o + i] - mx); }
  }
  red[t] = s;
  red2[t] = 0.0;
  workgroupBarrier();
  reduce_sum(t);
  let total = red[0];
  workgroupBarrier();
  let shift = mx + log(max(total, 1e-30));
  for (var i = t; i < p.cols; i += 256u) {
    var v = 0.0;
    if (legal(r, i)) { v = exp(logits[o + i] - shift); }
    probs[o + i] = v;
  }
  return vec2<f32>(shift, select(0.0, 1.0, total > 0.0));
}

@compute @workgroup_size(256)
fn softmax(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  softmax_row(wid.x, lid.x);
}

@compute @workgroup_size(256)
fn policy(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let r = wid.x;
  let t = lid.x;
  let o = r * p.cols;
  let sm = softmax_row(r, t);
  var l = 0.0;
  var mass = 0.0;
  for (var i = t; i < p.cols; i += 256u) {
    if (legal(r, i)) {
      l -= tgt[o + i] * (logits[o + i] - sm.x);
      mass += tgt[o + i];
    }
  }
  red[t] = l;
  red2[t] = mass;
  workgroupBarrier();
  reduce_sum(t);
  let tl = red[0];
  let tm = red2[0];
  let inv_b = 1.0 / f32(p.rows);
  for (var i = t; i < p.cols; i += 256u) {
    var g = 0.0;
    if (legal(r, i)) { g = (probs[o + i] * tm - tgt[o + i]) * inv_b; }
    grad[o + i] = g;
  }
  if (t == 0u) { loss[r] = select(0.0, tl, sm.y > 0.0); }
}

@compute @workgroup_size(64)
fn value_only(@builtin(global_invocation_id) gid: vec3<u32>) {
  let r = gid.x;
  if (r >= p.rows) { return; }
  probs[r] = tanh(logits[r]);
}

@compute @workgroup_size(64)
fn value(@builtin(global_invocation_id) gid: vec3<u32>) {
  let r = gid.x;
  if (r >= p.rows) { return; }
  let v = tanh(logits[r]);
  probs[r] = v;
  let e = v - tgt[r];
  loss[r] = e * e;
  grad[r] = 2.0 * e * (1.0 - v * v) / f32(p.rows);
}
