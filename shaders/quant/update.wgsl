// Fused update of a quantized store (twin of src/quant/update.ts), in two passes per update:
//   reduce: one workgroup per block decodes, updates in f32 and takes the block's new max -> new scale;
//   encode: one thread per payload word recomputes its elements' updates and re-encodes them, so each
//           thread owns whole words and no atomics are needed.
// OP: 0 set (x = input), 1 DCFR, 2 CFR+/DCFR+, 3 cumulative strategy. Prepended: codec.wgsl.

override OP: u32 = 0u;
const WG: u32 = 64u;
const ZERO_BLOCK: f32 = 7.888609052210118e-31;

struct Params {
  seed: u32,
  iteration: u32,
  a: f32,
  c: f32,
  zero: u32,
  blocks: u32,
  n: u32,
  stochastic: u32,
  words: u32,
}

@group(0) @binding(0) var<storage, read> offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> payload: array<u32>;
@group(0) @binding(2) var<storage, read> scales: array<f32>;
@group(0) @binding(3) var<storage, read_write> next_scales: array<f32>;
@group(0) @binding(4) var<storage, read_write> next_inv: array<f32>;
@group(0) @binding(5) var<storage, read> input: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;
@group(0) @binding(7) var<storage, read_write> flags: array<atomic<u32>>;

fn updated(old: f32, x: f32) -> f32 {
  let z = params.zero;
  switch OP {
    case 1u: { return nofuse(old * select(params.c, params.a, old > 0.0), z) + x; }
    case 2u: {
      let r = nofuse(old * params.a, z) + x;
      return select(r, 0.0, r < 0.0);
    }
    case 3u: { return nofuse(old * params.a, z) + nofuse(x * params.c, z); }
    default: { return x; }
  }
}

fn old_value(e: u32, scale_factor: f32) -> f32 {
  if (FMT == 0u) { return bitcast<f32>(payload[e]); }
  let per = fmt_per_word();
  // nofuse also stops a driver from reassociating (level * d) * a into level * (d * a).
  return nofuse(f32(level_of(payload[e / per], e % per)) * scale_factor, params.zero);
}

var<workgroup> wg_max: array<f32, WG>;
var<workgroup> wg_bad: array<u32, WG>;

@compute @workgroup_size(WG)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
  let b = wid.x + wid.y * nwg.x;
  // Uniform per workgroup: every invocation takes the same branch before the barriers.
  let live = b < params.blocks;
  var m = 0.0;
  var bad = 0u;
  if (live) {
    let start = offsets[b];
    let end = offsets[b + 1u];
    let d = decode_factor(scales[b], params.zero);
    for (var e = start + lid; e < end; e += WG) {
      let v = updated(old_value(e, d), input[e]);
      if (!is_finite(v)) { bad = 1u; } else { m = max(m, abs(v)); }
    }
  }
  wg_max[lid] = m;
  wg_bad[lid] = bad;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      wg_max[lid] = max(wg_max[lid], wg_max[lid + s]);
      wg_bad[lid] = wg_bad[lid] | wg_bad[lid + s];
    }
    workgroupBarrier();
  }
  if (live && lid == 0u) {
    var mx = wg_max[0];
    if (mx < ZERO_BLOCK) { mx = 0.0; }
    next_scales[b] = mx;
    next_inv[b] = select(0.0, div_rn(fmt_levels(), mx), mx > 0.0);
    if (wg_bad[0] != 0u) {
      atomicAdd(&flags[0], 1u);
      atomicMax(&flags[1], b + 1u);
    }
  }
}

fn block_of(e: u32) -> u32 {
  // Largest b with offsets[b] <= e (and a non-empty block): binary search over blocks+1 offsets.
  var lo = 0u;
  var hi = params.blocks;
  while (hi - lo > 1u) {
    let mid = (lo + hi) / 2u;
    if (offsets[mid] <= e) { lo = mid; } else { hi = mid; }
  }
  return lo;
}

@compute @workgroup_size(WG)
fn encode(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let w = gid.x + gid.y * nwg.x * WG;
  if (w >= params.words) { return; }
  if (FMT == 0u) {
    let v = updated(bitcast<f32>(payload[w]), input[w]);
    if (!is_finite(v)) { atomicAdd(&flags[0], 1u); }
    payload[w] = bitcast<u32>(v);
    return;
  }
  let per = fmt_per_word();
  let first = w * per;
  let last = min(first + per, params.n);
  var b = block_of(first);
  var word = payload[w];
  let old_word = word;
  for (var e = first; e < last; e++) {
    while (offsets[b + 1u] <= e) { b++; }
    let k = e - first;
    let old = nofuse(f32(level_of(old_word, k)) * decode_factor(scales[b], params.zero), params.zero);
    let v = updated(old, input[e]);
    let inv = next_inv[b];
    var q = 0;
    if (inv > 0.0) {
      let u = rounding_uniform(params.seed, params.iteration, b, e - offsets[b]);
      q = encode_level(v, inv, u, params.stochastic != 0u, params.zero);
    }
    word = put_level(word, k, q);
  }
  payload[w] = word;
}
