// Inference fusion: batch norm folded into the preceding convolution, and the epilogue (bias,
// residual add, ReLU) of a split-K convolution applied while its partial sums are added.
//
// fold: s = gamma / sqrt(var + EPS); Wf[co, j] = W[co, j] s[co]; bf[co] = beta[co] - mean[co] s[co],
// so BN(conv(x, W)) = conv(x, Wf) + bf with the running statistics (inference-mode batch norm).
// sum_epilogue: y[i] = act(sum_s part[s, i] + bias[c] + res[i]), c = (i / hw) % co.
struct Params { n: u32, per: u32, co: u32, hw: u32 }
struct Fuse { relu: u32, res: u32, _a: u32, _b: u32 }

const EPS = 1e-5;

@group(0) @binding(0) var<storage, read> w: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read> rmean: array<f32>;
@group(0) @binding(4) var<storage, read> rvar: array<f32>;
@group(0) @binding(5) var<storage, read_write> wf: array<f32>;
@group(0) @binding(6) var<storage, read_write> bf: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

@group(0) @binding(8) var<storage, read> part: array<f32>;
@group(0) @binding(9) var<storage, read> bias: array<f32>;
@group(0) @binding(10) var<storage, read> res: array<f32>;
@group(0) @binding(11) var<storage, read_write> out: array<f32>;
@group(0) @binding(12) var<uniform> fz: Fuse;

// p.n = numel(W), p.per = Ci K K, p.co = Co.
@compute @workgroup_size(64)
fn fold(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  let co = i / p.per;
  let s = gamma[co] * inverseSqrt(rvar[co] + EPS);
  wf[i] = w[i] * s;
  if (i - co * p.per == 0u) { bf[co] = beta[co] - rmean[co] * s; }
}

// p.n = numel(Y), p.per = split count, p.co = Co, p.hw = H W.
@compute @workgroup_size(64)
fn sum_epilogue(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= p.n) { return; }
  var s = 0.0;
  for (var r = 0u; r < p.per; r++) { s += part[r * p.n + i]; }
  s += bias[(i / p.hw) % p.co];
  if (fz.res != 0u) { s += res[i]; }
  if (fz.relu != 0u) { s = max(s, 0.0); }
  out[i] = s;
}
