// SGD with momentum and weight decay (PyTorch form): v = mu v + g + wd p; p -= lr v.
// sumsq: one workgroup sums p^2 into out[slot] (for the L2 term of the reported loss).
struct Params { n: u32, slot: u32, _p0: u32, _p1: u32 }
struct Hyper { lr: f32, momentum: f32, weight_decay: f32, _p: f32 }

@group(0) @binding(0) var<storage, read_write> param: array<f32>;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@group(0) @binding(2) var<storage, read_write> vel: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<uniform> h: Hyper;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(64)
fn step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  let v = h.momentum * vel[i] + grad[i] + h.weight_decay * param[i];
  vel[i] = v;
  param[i] = param[i] - h.lr * v;
}

@compute @workgroup_size(256)
fn sumsq(@builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.x;
  var s = 0.0;
  for (var i = t; i < p.n; i += 256u) { s += param[i] * param[i]; }
  red[t] = s;
  workgroupBarrier();
  for (var k = 128u; k > 0u; k >>= 1u) {
    if (t < k) { red[t] += red[t + k]; }
    workgroupBarrier();
  }
  if (t == 0u) { out[p.slot] = red[0]; }
}
