// 2-D convolution (stride 1, same padding, NCHW) as a tiled implicit GEMM with workgroup memory.
// forward: Y[co, col] = sum_k W[co, k] * im2col(X)[k, col], col = (n, y, x), k = (ci, ky, kx).
// wgrad:   dW[co, k]  = sum_col dY[co, col] * im2col(X)[k, col].
// flip:    Wt[ci, co, K-1-ky, K-1-kx] = W[co, ci, ky, kx], so dX = forward(dY, Wt).
// A 16 x 16 workgroup computes a BM x BN output tile (BM/16 x BN/16 per thread) over BK-deep K
// slices staged in workgroup memory. The TypeScript side compiles two variants by rewriting the
// tile constants: 64 x 64 x 16 (small layers) and 128 x 128 x 8 (8 x 8 per thread, for wide layers).
// kchunk (wgrad only): reduction columns per workgroup along z (split-K); 0 = all in one.
struct Params { n: u32, ci: u32, co: u32, h: u32, w: u32, k: u32, pad: u32, kchunk: u32 }

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

const BM = 64u;
const BN = 64u;
const BK = 16u;
const TM = BM / 16u;
const TN = BN / 16u;
var<workgroup> As: array<f32, 1024>; // [BK][BM]
var<workgroup> Bs: array<f32, 1024>; // [BK][BN]

// Reads im2col(X)[k, col] from in0 given col's decomposition; zero outside the image.
fn im2col(k: u32, img: u32, y: u32, x: u32, valid: bool) -> f32 {
  let kk = p.k * p.k;
  let ci = k / kk;
  let r = k - ci * kk;
  let ky = r / p.k;
  let kx = r - ky * p.k;
  let iy = i32(y + ky) - i32(p.pad);
  let ix = i32(x + kx) - i32(p.pad);
  if (!valid || ci >= p.ci || iy < 0 || ix < 0 || iy >= i32(p.h) || ix >= i32(p.w)) { return 0.0; }
  return in0[((img * p.ci + ci) * p.h + u32(iy)) * p.w + u32(ix)];
}

// in0 = X [N, Ci, H, W], in1 = W [Co, Ci, K, K], out = Y [N, Co, H, W].
@compute @workgroup_size(16, 16)
fn forward(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * 16u + lid.x;
  let hw = p.h * p.w;
  let cols = p.n * hw;
  let kd = p.ci * p.k * p.k;
  let m0 = wid.y * BM;
  let c0 = wid.x * BN;
  // This thread always loads the same B column: decompose it once.
  let bcl = t % BN;
  let bc = c0 + bcl;
  let bvalid = bc < cols;
  let bimg = bc / hw;
  let bp = bc - bimg * hw;
  let by = bp / p.w;
  let bx = bp - by * p.w;
  var acc: array<array<f32, TN>, TM>;
  for (var k0 = 0u; k0 < kd; k0 += BK) {
    for (var r = 0u; r < BM * BK / 256u; r++) {
      let idx = t + 256u * r;
      let ml = idx / BK;
      let kl = idx % BK;
      let m = m0 + ml;
      let k = k0 + kl;
      var a = 0.0;
      if (m < p.co && k < kd) { a = in1[m * kd + k]; }
      As[kl * BM + ml] = a;
    }
    for (var r = 0u; r < BK * BN / 256u; r++) {
      let kb = t / BN + (256u / BN) * r;
      Bs[kb * BN + bcl] = im2col(k0 + kb, bimg, by, bx, bvalid && (k0 + kb) < kd);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      var av: array<f32, TM>;
      var bv: array<f32, TN>;
      for (var i = 0u; i < TM; i++) { av[i] = As[kk * BM + lid.y + 16u * i]; }
      for (var j = 0u; j < TN; j++) { bv[j] = Bs[kk * BN + lid.x + 16u * j]; }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) { acc[i][j] = fma(av[i], bv[j], acc[i][j]); }
      }
    }
    workgroupBarrier();
  }
  for (var j = 0u; j < TN; j++) {
    let c = c0 + lid.x + 16u * j;
    if (c >= cols) { continue; }
    let img = c / hw;
    let px = c - img * hw;
    for (var i = 0u; i < TM; i++) {
      let m = m0 + lid.y + 16u * i;
      if (m < p.co) { out[(img * p.co + m) * hw + px] = acc[i][j]; }
    }
  }
}

// in0 = X [N, Ci, H, W], in1 = dY [N, Co, H, W], out = dW [Co, Ci, K, K] (x splits along z).
@compute @workgroup_size(16, 16)
fn wgrad(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let t = lid.y * 16u + lid.x;
  let hw = p.h * p.w;
  let cols = p.n * hw;
  let kd = p.ci * p.k * p.k;
  let m0 = wid.y * BM;
  let j0 = wid.x * BN;
  let kl = t % BK;
  var acc: array<array<f32, TN>, TM>;
  // Split-K: workgroup z reduces columns [kbeg, kend) into its own slice of `out`.
  var kbeg = 0u;
  var kend = cols;
  if (p.kchunk > 0u) {
    kbeg = wid.z * p.kchunk;
    kend = min(cols, kbeg + p.kchunk);
  }
  for (var k0 = kbeg; k0 < kend; k0 += BK) {
    // This thread's reduction index (a pixel of the batch) for this slice.
    let kc = k0 + kl;
    let valid = kc < kend;
    let img = kc / hw;
    let px = kc - img * hw;
    let y = px / p.w;
    let x = px - y * p.w;
    for (var r = 0u; r < BM * BK / 256u; r++) {
      let rl = t / BK + (256u / BK) * r;
      let m = m0 + rl;
      var a = 0.0;
      if (valid && m < p.co) { a = in1[(img * p.co + m) * hw + px]; }
      As[kl * BM + rl] = a;
    }
    for (var r = 0u; r < BN * BK / 256u; r++) {
      let rl = t / BK + (256u / BK) * r;
      let j = j0 + rl;
      Bs[kl * BN + rl] = im2col(j, img, y, x, valid && j < kd);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      var av: array<f32, TM>;
      var bv: array<f32, TN>;
      for (var i = 0u; i < TM; i++) { av[i] = As[kk * BM + lid.y + 16u * i]; }
      for (var j = 0u; j < TN; j++) { bv[j] = Bs[kk * BN + lid.x + 16u * j]; }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) { acc[i][j] = fma(av[i], bv[j], acc[i][j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TM; i++) {
    let m = m0 + lid.y + 16u * i;
    if (m >= p.co) { continue; }
    for (var j = 0u; j < TN; j++) {
      let jj = j0 + lid.x + 16u * j;
      if (jj < kd) { out[(wid.z * p.co + m) * kd + jj] = acc[i][j]; }
    }
  }
}

// in0 = W [Co, Ci, K, K], out = Wt [Ci, Co, K, K] flipped in space.
@compute @workgroup_size(64)
fn flip(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  let kk = p.k * p.k;
  if (i >= p.co * p.ci * kk) { return; }
  let o = i / (p.ci * kk);
  let rem = i - o * p.ci * kk;
  let c = rem / kk;
  let r = rem - c * kk;
  out[(c * p.co + o) * kk + (kk - 1u - r)] = in0[i];
}
