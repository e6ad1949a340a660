// Mean pooling over the board (the pooled value head), forward and backward; x [B, C, H, W] is
// `rows` = B x C rows of `hw` = H x W values each.
// mean_pool: one workgroup per row, each of its 64 invocations summing the row's values t, t + 64,
//   ... in order, then a fixed tree over the 64 partials: a fixed summation order, so the result
//   is the same on every run (deterministic), reads coalesced across the workgroup.
// mean_pool_direct: one invocation per row, eight interleaved partial sums added pairwise (the
//   barrier-free family).
// mean_pool_backward: one invocation per dx element, dx[i] = dy[i / hw] / hw.
struct Params {
  rows: u32,
  hw: u32,
  n: u32,
  _a: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

const WG = 64u;

var<workgroup> red: array<f32, 64>;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(64)
fn mean_pool(
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
) {
  // The row: workgroups fold into y past the per-dimension limit (workgroups1d with size 1).
  let r = wid.x + wid.y * nwg.x;
  let t = lid.x;
  var acc = 0.0;
  if (r < p.rows) {
    let base = r * p.hw;
    for (var j = t; j < p.hw; j += WG) { acc += x[base + j]; }
  }
  red[t] = acc;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) { red[t] += red[t + k]; }
    workgroupBarrier();
  }
  if (t == 0u && r < p.rows) { y[r] = red[0] / f32(p.hw); }
}

@compute @workgroup_size(64)
fn mean_pool_direct(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = index(gid, nwg);
  if (r >= p.rows) { return; }
  let base = r * p.hw;
  // Eight partial sums (values j, j + 8, ...) added pairwise: a fixed order, and a rounding error
  // like the tiled kernel's rather than one running sum's over the whole row.
  var acc: array<f32, 8>;
  for (var k = 0u; k < 8u; k++) { acc[k] = 0.0; }
  for (var j = 0u; j < p.hw; j++) { acc[j % 8u] += x[base + j]; }
  let s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  y[r] = s / f32(p.hw);
}

@compute @workgroup_size(64)
fn mean_pool_backward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  dx[i] = dy[i / p.hw] / f32(p.hw);
}
