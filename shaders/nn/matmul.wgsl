// Tiled matrix multiply with arbitrary strides: C[m, n] = sum_k A(m, k) B(k, n) (+ bias[n]),
// A(m, k) = a[m * a_sm + k * a_sk], B(k, n) = b[k * b_sk + n * b_sn], C row-major [M, N].
// Strides express every transpose the fully connected layer needs (forward, dX, dW).
struct Params { m: u32, n: u32, k: u32, a_sm: u32, a_sk: u32, b_sk: u32, b_sn: u32, bias: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> bias: array<f32>;

const BM = 64u;
const BN = 64u;
const BK = 16u;
var<workgroup> As: array<f32, 1024>;
var<workgroup> Bs: array<f32, 1024>;

fn tile(lid: vec3<u32>, wid: vec3<u32>) -> array<array<f32, 4>, 4> {
  let t = lid.y * 16u + lid.x;
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  var acc: array<array<f32, 4>, 4>;
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    for (var r = 0u; r < 4u; r++) {
      let idx = t + 256u * r;
      // A: 64 rows x 16 k; B: 16 k x 64 cols.
      let ml = idx / BK;
      let kl = idx % BK;
      var av = 0.0;
      if (m0 + ml < p.m && k0 + kl < p.k) { av = a[(m0 + ml) * p.a_sm + (k0 + kl) * p.a_sk]; }
      As[kl * BM + ml] = av;
      let kb = idx / BN;
      let nl = idx % BN;
      var bv = 0.0;
      if (k0 + kb < p.k && n0 + nl < p.n) { bv = b[(k0 + kb) * p.b_sk + (n0 + nl) * p.b_sn]; }
      Bs[kb * BN + nl] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      var ar: array<f32, 4>;
      var br: array<f32, 4>;
      for (var i = 0u; i < 4u; i++) {
        ar[i] = As[kk * BM + lid.y + 16u * i];
        br[i] = Bs[kk * BN + lid.x + 16u * i];
      }
      for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) { acc[i][j] = fma(ar[i], br[j], acc[i][j]); }
      }
    }
    workgroupBarrier();
  }
  return acc;
}

// C = A B (bias ignored).
@compute @workgroup_size(16, 16)
fn plain(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let acc = tile(lid, wid);
  for (var i = 0u; i < 4u; i++) {
    let m = wid.y * BM + lid.y + 16u * i;
    for (var j = 0u; j < 4u; j++) {
      let n = wid.x * BN + lid.x + 16u * j;
      if (m < p.m && n < p.n) { c[m * p.n + n] = acc[i][j]; }
    }
  }
}

// C = A B + bias[n].
@compute @workgroup_size(16, 16)
fn with_bias(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let acc = tile(lid, wid);
  for (var i = 0u; i < 4u; i++) {
    let m = wid.y * BM + lid.y + 16u * i;
    for (var j = 0u; j < 4u; j++) {
      let n = wid.x * BN + lid.x + 16u * j;
      if (m < p.m && n < p.n) { c[m * p.n + n] = acc[i][j] + bias[n]; }
    }
  }
}

// Untiled form for thin products (few rows or a short K, e.g. batch-1 inference or the weight
// gradient of a small batch): one invocation per output, no barriers.
fn thin(gid: vec3<u32>, nwg: vec3<u32>) -> vec3<u32> {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.m * p.n) { return vec3<u32>(0u, 0u, 0u); }
  return vec3<u32>(i / p.n, i % p.n, 1u);
}

@compute @workgroup_size(64)
fn thin_plain(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let mn = thin(gid, nwg);
  if (mn.z == 0u) { return; }
  var s = 0.0;
  for (var k = 0u; k < p.k; k++) { s = fma(a[mn.x * p.a_sm + k * p.a_sk], b[k * p.b_sk + mn.y * p.b_sn], s); }
  c[mn.x * p.n + mn.y] = s;
}

@compute @workgroup_size(64)
fn thin_bias(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let mn = thin(gid, nwg);
  if (mn.z == 0u) { return; }
  var s = 0.0;
  for (var k = 0u; k < p.k; k++) { s = fma(a[mn.x * p.a_sm + k * p.a_sk], b[k * p.b_sk + mn.y * p.b_sn], s); }
  c[mn.x * p.n + mn.y] = s + bias[mn.y];
}
