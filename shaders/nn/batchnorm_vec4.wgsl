// The training graph's elementwise batch-norm passes of batchnorm.wgsl (apply_relu,
// relu_backward_apply) four values a thread, as vec4 loads and stores: for H W divisible by 4, so
// that the four share a channel. One scalar load a thread left too few bytes in flight to keep
// DRAM busy (the H200: 0.92 TB/s for apply_relu against 1.48 for a plain copy). Same bindings and
// flags as batchnorm.wgsl; p.hw is H W, dispatch one thread per vec4.
struct Params { n: u32, c: u32, hw: u32, flags: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read> beta: array<f32>;
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(7) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(10) var<uniform> p: Params;
@group(0) @binding(11) var<storage, read> res: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read> dy2: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read_write> coef: array<f32>;
@group(0) @binding(14) var<storage, read_write> dz: array<vec4<f32>>;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

@compute @workgroup_size(64)
fn apply_relu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n * p.c * p.hw / 4u) { return; }
  let ch = (4u * i / p.hw) % p.c;
  var z = (x[i] - stats[ch]) * stats[p.c + ch] * gamma[ch] + beta[ch];
  if ((p.flags & 1u) != 0u) { z = z + res[i]; }
  out[i] = max(z, vec4<f32>(0.0));
}

@compute @workgroup_size(64)
fn relu_backward_apply(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n * p.c * p.hw / 4u) { return; }
  let ch = (4u * i / p.hw) % p.c;
  let mean = coef[ch];
  let inv = coef[p.c + ch];
  let m = f32(p.n * p.hw);
  var d = dy[i];
  if ((p.flags & 1u) != 0u) { d = d + dy2[i]; }
  let g = select(vec4<f32>(0.0), d, res[i] > vec4<f32>(0.0));
  if ((p.flags & 2u) != 0u) { dz[i] = g; }
  let xhat = (x[i] - mean) * inv;
  out[i] = gamma[ch] * inv / m * (m * g - coef[2u * p.c + ch] - xhat * coef[3u * p.c + ch]);
}
