// Direct 2-D convolution (stride 1, same padding, NCHW): one invocation per output value, no
// workgroup memory or barriers, for software adapters, where these compile in milliseconds;
// hardware adapters run the tiled implicit GEMMs that src/nn/gpu/conv_gemm.ts generates. Both
// families take the input gradient as a forward conv with the weight flipped by `flip` below:
// Wt[ci, co, K-1-ky, K-1-kx] = W[co, ci, ky, kx], so dX = forward(dY, Wt).
struct Params { n: u32, ci: u32, co: u32, h: u32, w: u32, k: u32, pad: u32, kchunk: u32 }

@group(0) @binding(0) var<storage, read> in0: array<f32>;
@group(0) @binding(1) var<storage, read> in1: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// in0 = X [N, Ci, H, W], in1 = W [Co, Ci, K, K], out = Y [N, Co, H, W].
@compute @workgroup_size(64)
fn forward(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  let hw = p.h * p.w;
  if (i >= p.n * p.co * hw) { return; }
  let img = i / (p.co * hw);
  let rem = i - img * p.co * hw;
  let o = rem / hw;
  let px = rem - o * hw;
  let y = i32(px / p.w);
  let x = i32(px % p.w);
  let kk = p.k * p.k;
  var s = 0.0;
  for (var c = 0u; c < p.ci; c++) {
    let xo = (img * p.ci + c) * hw;
    let wo = (o * p.ci + c) * kk;
    for (var ky = 0u; ky < p.k; ky++) {
      let iy = y + i32(ky) - i32(p.pad);
      if (iy < 0 || iy >= i32(p.h)) { continue; }
      for (var kx = 0u; kx < p.k; kx++) {
        let ix = x + i32(kx) - i32(p.pad);
        if (ix < 0 || ix >= i32(p.w)) { continue; }
        s = fma(in1[wo + ky * p.k + kx], in0[xo + u32(iy) * p.w + u32(ix)], s);
      }
    }
  }
  out[i] = s;
}

// in0 = X [N, Ci, H, W], in1 = dY [N, Co, H, W], out = dW [Co, Ci, K, K].
@compute @workgroup_size(64)
fn wgrad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  let kk = p.k * p.k;
  if (i >= p.co * p.ci * kk) { return; }
  let o = i / (p.ci * kk);
  let rem = i - o * p.ci * kk;
  let c = rem / kk;
  let r = rem - c * kk;
  let ky = i32(r / p.k);
  let kx = i32(r % p.k);
  let hw = p.h * p.w;
  var s = 0.0;
  for (var img = 0u; img < p.n; img++) {
    let go = (img * p.co + o) * hw;
    let xo = (img * p.ci + c) * hw;
    for (var y = 0; y < i32(p.h); y++) {
      let iy = y + ky - i32(p.pad);
      if (iy < 0 || iy >= i32(p.h)) { continue; }
      for (var x = 0; x < i32(p.w); x++) {
        let ix = x + kx - i32(p.pad);
        if (ix < 0 || ix >= i32(p.w)) { continue; }
        s = fma(in1[go + u32(y) * p.w + u32(x)], in0[xo + u32(iy) * p.w + u32(ix)], s);
      }
    }
  }
  out[i] = s;
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

// Inference fusion (see fused.wgsl): y = act(conv(x, W) + bias[co] + res), res and ReLU by flag.
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }
@group(0) @binding(4) var<storage, read> bias: array<f32>;
@group(0) @binding(5) var<storage, read> res: array<f32>;
@group(0) @binding(6) var<uniform> fz: Fuse;

@compute @workgroup_size(64)
fn forward_fused(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  let hw = p.h * p.w;
  if (i >= p.n * p.co * hw) { return; }
  let img = i / (p.co * hw);
  let rem = i - img * p.co * hw;
  let o = rem / hw;
  let px = rem - o * hw;
  let y = i32(px / p.w);
  let x = i32(px % p.w);
  let kk = p.k * p.k;
  var s = 0.0;
  for (var c = 0u; c < p.ci; c++) {
    let xo = (img * p.ci + c) * hw;
    let wo = (o * p.ci + c) * kk;
    for (var ky = 0u; ky < p.k; ky++) {
      let iy = y + i32(ky) - i32(p.pad);
      if (iy < 0 || iy >= i32(p.h)) { continue; }
      for (var kx = 0u; kx < p.k; kx++) {
        let ix = x + i32(kx) - i32(p.pad);
        if (ix < 0 || ix >= i32(p.w)) { continue; }
        s = fma(in1[wo + ky * p.k + kx], in0[xo + u32(iy) * p.w + u32(ix)], s);
      }
    }
  }
  s += bias[o];
  if (fz.res != 0u) { s += res[i]; }
  if (fz.relu != 0u) { s = max(s, 0.0); }
  out[i] = s;
}
