// SGD with momentum and weight decay (PyTorch form): v = mu v + g + wd p; p -= lr v.
// sumsq: SUMSQ_GROUPS workgroups sum p^2 into partials out[slot * groups ..] (the reported loss's L2 term).
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
fn sumsq(
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  // Every workgroup sums a strided share (four independent loads in flight per thread) and writes
  // its partial to out[slot * groups + wid]: the reader adds the partials.
  let t = lid.x;
  let stride = 256u * nwg.x;
  let last = max(p.n, 1u) - 1u;
  var s = vec4<f32>(0.0);
  for (var i = wid.x * 256u + t; i < p.n; i += 4u * stride) {
    let ii = vec4<u32>(i, i + stride, i + 2u * stride, i + 3u * stride);
    let ok = ii < vec4<u32>(p.n);
    let v = select(
      vec4<f32>(0.0),
      vec4<f32>(param[min(ii.x, last)], param[min(ii.y, last)], param[min(ii.z, last)], param[min(ii.w, last)]),
      ok,
    );
    s += v * v;
  }
  red[t] = (s.x + s.y) + (s.z + s.w);
  workgroupBarrier();
  for (var k = 128u; k > 0u; k >>= 1u) {
    if (t < k) { red[t] += red[t + k]; }
    workgroupBarrier();
  }
  if (t == 0u) { out[p.slot * nwg.x + wid.x] = red[0]; }
}
