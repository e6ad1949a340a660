// The fully connected layer's forward GEMM with both operands read along K: C[m, n] =
// sum_k A[m, k] W[n, k] + bias[n] (A [M, K] and W [N, K] row-major, C [M, N]), K a multiple of 4.
// A WX x WY workgroup computes a BM x BN tile (BM = 4 WY rows, BN = 8 WX columns): thread (tx, ty)
// owns rows 4 ty + i and columns 4 tx + j and BN / 2 + 4 tx + j, as eight named vec4 accumulators.
// K slices of BK are staged in workgroup memory as vec4s along m (A) and n (W), so that each k step
// reads three vec4s for 32 FMAs. The FMAs run over k in order from 0, as in matmul.wgsl's tiled
// kernel, with the bias added last: the same bits. TypeScript rewrites WX and WY (fcSource).
struct Params { m: u32, n: u32, k: u32, _p: u32 }

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> bias: array<f32>;

const WX = 16u;
const WY = 16u;
const THREADS = WX * WY;
const BM = 4u * WY;
const BN = 8u * WX;
const BK = 16u;
const A_LOADS = BM * BK / 4u / THREADS;
const W_LOADS = BN * BK / 4u / THREADS;
// The A slice (BK rows of BM / 4 vec4s along m), then the W slice (BK rows of BN / 4 along n).
const W_AT = BK * BM / 4u;
var<workgroup> tiles: array<vec4<f32>, BK * (BM + BN) / 4u>;

// Row `row` (of `rows`) of a K-major operand at k0 + 4 q: a vec4, zero past either end.
fn load_a(row: u32, q: u32, k0: u32) -> vec4<f32> {
  if (row >= p.m || k0 + 4u * q >= p.k) { return vec4<f32>(0.0); }
  return a[(row * p.k + k0) / 4u + q];
}

fn load_w(row: u32, q: u32, k0: u32) -> vec4<f32> {
  if (row >= p.n || k0 + 4u * q >= p.k) { return vec4<f32>(0.0); }
  return w[(row * p.k + k0) / 4u + q];
}

// Stores v (k0 + 4 q .. + 3 of row r of a slice at `base`, `row4` vec4s a k) transposed: element e
// at k 4 q + e, row r.
fn store(base: u32, row4: u32, r: u32, q: u32, v: vec4<f32>) {
  let at = base + 4u * q * row4 + r / 4u;
  tiles[at][r % 4u] = v.x;
  tiles[at + row4][r % 4u] = v.y;
  tiles[at + 2u * row4][r % 4u] = v.z;
  tiles[at + 3u * row4][r % 4u] = v.w;
}

// Writes 4 columns from n of row m: v + the bias of each column.
fn put(m: u32, n: u32, v: vec4<f32>) {
  if (m >= p.m) { return; }
  let o = m * p.n;
  if (n < p.n) { c[o + n] = v.x + bias[n]; }
  if (n + 1u < p.n) { c[o + n + 1u] = v.y + bias[n + 1u]; }
  if (n + 2u < p.n) { c[o + n + 2u] = v.z + bias[n + 2u]; }
  if (n + 3u < p.n) { c[o + n + 3u] = v.w + bias[n + 3u]; }
}

@compute @workgroup_size(WX, WY)
fn fc_nt(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * WX + lid.x;
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  var c00 = vec4<f32>(0.0);
  var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0);
  var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0);
  var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0);
  var c31 = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    // Neighbouring threads read neighbouring vec4s of a row (4 a row of the slice).
    for (var l = 0u; l < A_LOADS; l++) {
      let i = t + THREADS * l;
      store(0u, BM / 4u, i / 4u, i % 4u, load_a(m0 + i / 4u, i % 4u, k0));
    }
    for (var l = 0u; l < W_LOADS; l++) {
      let i = t + THREADS * l;
      store(W_AT, BN / 4u, i / 4u, i % 4u, load_w(n0 + i / 4u, i % 4u, k0));
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let av = tiles[kk * (BM / 4u) + lid.y];
      let w0 = tiles[W_AT + kk * (BN / 4u) + lid.x];
      let w1 = tiles[W_AT + kk * (BN / 4u) + WX + lid.x];
      c00 = fma(vec4<f32>(av.x), w0, c00);
      c01 = fma(vec4<f32>(av.x), w1, c01);
      c10 = fma(vec4<f32>(av.y), w0, c10);
      c11 = fma(vec4<f32>(av.y), w1, c11);
      c20 = fma(vec4<f32>(av.z), w0, c20);
      c21 = fma(vec4<f32>(av.z), w1, c21);
      c30 = fma(vec4<f32>(av.w), w0, c30);
      c31 = fma(vec4<f32>(av.w), w1, c31);
    }
    workgroupBarrier();
  }
  let m = m0 + 4u * lid.y;
  let n = n0 + 4u * lid.x;
  put(m, n, c00);
  put(m, n + BN / 2u, c01);
  put(m + 1u, n, c10);
  put(m + 1u, n + BN / 2u, c11);
  put(m + 2u, n, c20);
  put(m + 2u, n + BN / 2u, c21);
  put(m + 3u, n, c30);
  put(m + 3u, n + BN / 2u, c31);
}
