// Self-test: out[i] = a[i] * 3 + i (u32, wrapping) and f[i] = sqrt(f32(i)) so integer and float paths are both checked.
struct Params { n: u32 }

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read_write> f: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= params.n) { return; }
  out[i] = a[i] * 3u + i;
  f[i] = sqrt(f32(i));
}
