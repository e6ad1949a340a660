// Barrier-free masked softmax and policy cross-entropy for software adapters (one invocation per
// row), with the bindings and math of loss.wgsl; llvmpipe compiles these in milliseconds.
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

// Writes row r's probabilities; returns (log-sum-exp shift, 1 when any move is legal).
fn softmax_row(r: u32) -> vec2<f32> {
  let o = r * p.cols;
  var mx = -3.0e38;
  for (var i = 0u; i < p.cols; i++) {
    if (legal(r, i)) { mx = max(mx, logits[o + i]); }
  }
  var total = 0.0;
  for (var i = 0u; i < p.cols; i++) {
    if (legal(r, i)) { total += exp(logits[o + i] - mx); }
  }
  let shift = mx + log(max(total, 1e-30));
  for (var i = 0u; i < p.cols; i++) {
    var v = 0.0;
    if (legal(r, i)) { v = exp(logits[o + i] - shift); }
    probs[o + i] = v;
  }
  return vec2<f32>(shift, select(0.0, 1.0, total > 0.0));
}

@compute @workgroup_size(64)
fn softmax(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= p.rows) { return; }
  softmax_row(gid.x);
}

@compute @workgroup_size(64)
fn policy(@builtin(global_invocation_id) gid: vec3<u32>) {
  let r = gid.x;
  if (r >= p.rows) { return; }
  let o = r * p.cols;
  let sm = softmax_row(r);
  var l = 0.0;
  var mass = 0.0;
  for (var i = 0u; i < p.cols; i++) {
    if (legal(r, i)) {
      l -= tgt[o + i] * (logits[o + i] - sm.x);
      mass += tgt[o + i];
    }
  }
  let inv_b = 1.0 / f32(p.rows);
  for (var i = 0u; i < p.cols; i++) {
    var g = 0.0;
    if (legal(r, i)) { g = (probs[o + i] * mass - tgt[o + i]) * inv_b; }
    grad[o + i] = g;
  }
  loss[r] = select(0.0, l, sm.y > 0.0);
}
