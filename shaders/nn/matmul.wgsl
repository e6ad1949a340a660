// Tiled matrix multiply with arbitrary strides: C[m, n] = sum_k A(m, k) B(k, n) (+ bias[n]),
// A(m, k) = a[m * a_sm + k * a_sk], B(k, n) = b[k * b_sk + n * b_sn], C row-major [M, N].
// Strides express every transpose the fully connected layer needs (forward, dX, dW).
struct Params { m: u32, n: u32, k: u32, a_sm: u32, a_sk: u32, b_sk: u32, b_sn: u32, bias: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> bias: array<f32>;

// A TW x TW workgroup computes a (4 TW) x (4 TW) tile, 4 x 4 outputs per thread (rows lid.y + TW i,
// columns lid.x + TW j), over K slices of TW. The accumulators are four named vec4 rows: a private
// array indexed in loops was left in slow local memory by an NVIDIA driver. TypeScript rewrites TW
// to 4 for the software-adapter tests (same code, 16 threads).
const TW = 16u;
const BM = 4u * TW;
const BN = 4u * TW;
const BK = TW;
// Rows of the staged slices padded by one float: a slice loaded along k (below) stores BM or BN
// floats apart, which without the pad is one bank for all 16 threads of a k run.
const BMP = BM + 1u;
const BNP = BN + 1u;
var<workgroup> As: array<f32, BK * BMP>;
var<workgroup> Bs: array<f32, BK * BNP>;

struct Acc { r0: vec4<f32>, r1: vec4<f32>, r2: vec4<f32>, r3: vec4<f32> }

fn tile(lid: vec3<u32>, wid: vec3<u32>) -> Acc {
  let t = lid.y * TW + lid.x;
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  var r0 = vec4<f32>(0.0);
  var r1 = vec4<f32>(0.0);
  var r2 = vec4<f32>(0.0);
  var r3 = vec4<f32>(0.0);
  // Neighbouring threads load neighbouring floats: A along k unless only m is contiguous (the
  // weight gradient's dY^T), B along n unless only k is (the forward pass's W^T, which along n
  // read one float from each of 32 rows 1,352 floats apart at the policy layer).
  let aAlongM = p.a_sm == 1u && p.a_sk != 1u;
  let bAlongK = p.b_sk == 1u && p.b_sn != 1u;
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    for (var r = 0u; r < 4u; r++) {
      let idx = t + TW * TW * r;
      // A: BM rows x BK k; B: BK k x BN cols.
      let ml = select(idx / BK, idx % BM, aAlongM);
      let kl = select(idx % BK, idx / BM, aAlongM);
      var av = 0.0;
      if (m0 + ml < p.m && k0 + kl < p.k) { av = a[(m0 + ml) * p.a_sm + (k0 + kl) * p.a_sk]; }
      As[kl * BMP + ml] = av;
      let kb = select(idx / BN, idx % BK, bAlongK);
      let nl = select(idx % BN, idx / BK, bAlongK);
      var bv = 0.0;
      if (k0 + kb < p.k && n0 + nl < p.n) { bv = b[(k0 + kb) * p.b_sk + (n0 + nl) * p.b_sn]; }
      Bs[kb * BNP + nl] = bv;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let ab = kk * BMP + lid.y;
      let bb = kk * BNP + lid.x;
      let bv = vec4<f32>(Bs[bb], Bs[bb + TW], Bs[bb + 2u * TW], Bs[bb + 3u * TW]);
      r0 = fma(vec4<f32>(As[ab]), bv, r0);
      r1 = fma(vec4<f32>(As[ab + TW]), bv, r1);
      r2 = fma(vec4<f32>(As[ab + 2u * TW]), bv, r2);
      r3 = fma(vec4<f32>(As[ab + 3u * TW]), bv, r3);
    }
    workgroupBarrier();
  }
  return Acc(r0, r1, r2, r3);
}

// Writes row m of a thread's outputs (columns n0 + TW j).
fn put_row(m: u32, n0: u32, v: vec4<f32>) {
  if (m >= p.m) { return; }
  if (n0 < p.n) { c[m * p.n + n0] = v.x; }
  if (n0 + TW < p.n) { c[m * p.n + n0 + TW] = v.y; }
  if (n0 + 2u * TW < p.n) { c[m * p.n + n0 + 2u * TW] = v.z; }
  if (n0 + 3u * TW < p.n) { c[m * p.n + n0 + 3u * TW] = v.w; }
}

// Writes a thread's 4 x 4 outputs, `add` added to every row (the bias of its columns, or 0).
fn put(lid: vec3<u32>, wid: vec3<u32>, acc: Acc, add: vec4<f32>) {
  let m = wid.y * BM + lid.y;
  let n = wid.x * BN + lid.x;
  put_row(m, n, acc.r0 + add);
  put_row(m + TW, n, acc.r1 + add);
  put_row(m + 2u * TW, n, acc.r2 + add);
  put_row(m + 3u * TW, n, acc.r3 + add);
}

// C = A B.
@compute @workgroup_size(TW, TW)
fn plain(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  put(lid, wid, tile(lid, wid), vec4<f32>(0.0));
}

// C = A B + bias[n].
@compute @workgroup_size(TW, TW)
fn with_bias(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let n = wid.x * BN + lid.x;
  let last = p.n - 1u;
  let add = vec4<f32>(
    bias[min(n, last)],
    bias[min(n + TW, last)],
    bias[min(n + 2u * TW, last)],
    bias[min(n + 3u * TW, last)],
  );
  put(lid, wid, tile(lid, wid), add);
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

// Thin products whose K runs contiguously in both operands (a_sk = b_sk = 1: a fully connected
// layer's forward at a small batch, B its weight [N, K]): one workgroup per output column, its 64
// threads splitting K so that they read the weight row together (the per-output form above walks
// a whole row per thread, a strided read with one thread per output), then a tree sum per row.
const RT = 64u;
var<workgroup> part: array<f32, RT>;

// The sum over K of A(r, k) B(k, n), known to every thread of the workgroup on return.
fn rows_dot(l: u32, n: u32, r: u32) -> f32 {
  var s = 0.0;
  for (var k = l; k < p.k; k += RT) { s = fma(a[r * p.a_sm + k], b[n * p.b_sn + k], s); }
  part[l] = s;
  workgroupBarrier();
  for (var w = RT / 2u; w > 0u; w >>= 1u) {
    if (l < w) { part[l] += part[l + w]; }
    workgroupBarrier();
  }
  let t = part[0];
  workgroupBarrier();
  return t;
}

// Dispatch: one workgroup per column n (x + y * num_workgroups.x); bias always bound (p.bias
// says whether to add it).
@compute @workgroup_size(64)
fn rows(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = wid.x + wid.y * nwg.x;
  if (n >= p.n) { return; }
  let add = select(0.0, bias[n], p.bias != 0u);
  for (var r = 0u; r < p.m; r++) {
    let s = rows_dot(lid.x, n, r);
    if (lid.x == 0u) { c[r * p.n + n] = s + add; }
  }
}
