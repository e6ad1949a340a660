// Elementwise ops over flat arrays: ReLU, its backward, add, column sums (a bias gradient) and the
// sum of split-K partial results.
struct Params { n: u32, rows: u32, cols: u32, _p: u32 }

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * 64u;
}

@compute @workgroup_size(64)
fn relu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  out[i] = max(in0[i], 0.0);
}

// in0 = ReLU output y, in1 = dy.
@compute @workgroup_size(64)
fn relu_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  out[i] = select(0.0, in1[i], in0[i] > 0.0);
}

@compute @workgroup_size(64)
fn add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  out[i] = in0[i] + in1[i];
}

// out[c] = sum_r in0[r * cols + c].
@compute @workgroup_size(64)
fn colsum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let c = index(gid, nwg);
  if (c >= p.cols) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.rows; r++) { s += in0[r * p.cols + c]; }
  out[c] = s;
}

// out[i] = sum_s in0[s * n + i] for s < rows (the partial weight gradients of a split-K wgrad).
@compute @workgroup_size(64)
fn sum_splits(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.rows; r++) { s += in0[r * p.n + i]; }
  out[i] = s;
}
