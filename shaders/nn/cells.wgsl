// The cells policy head: logits gathered from per-cell head planes q [B, planes, H, W] by a move
// table [B, W, 4] of (moveIndex, a, b, slot) stored as f32 (exact integers), and its backward.
//   logits[n, moveIndex] = q[n, a] + q[n, b] + bias[slot], a term absent where its index is -1;
//   an entry with moveIndex -1 is padding; every logit no entry names is 0.
// Indices out of range (moveIndex >= moves, a or b >= the planes of one position, slot >= the
// biases) are ignored like -1, so a bad table cannot write outside its position's rows.
// The ops assume each moveIndex appears at most once per position (distinct legal moves have
// distinct policy indices): two entries for one logit would race in cell_logits.
// zero: out[i] = 0 for i < n (the logits before cell_logits, dq before cell_dq).
// cell_logits: one invocation per table entry.
// cell_dq: one invocation per position, looping over its W entries serially: every write of
//   invocation n lands in position n's planes [n * qper, (n + 1) * qper) and no other invocation
//   writes there, so the read-modify-writes dq[a] += g never race (no atomics needed on f32).
// cell_dbias: one workgroup per slot striding over all B x W entries, then a workgroup tree
//   reduction; cell_dbias_direct: one invocation per slot, serial (the barrier-free family).
struct Params {
  batch: u32,
  width: u32,
  moves: u32,
  qper: u32,
  nbias: u32,
  n: u32,
  _a: u32,
  _b: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> logits: array<f32>;
@group(0) @binding(4) var<storage, read> dlogits: array<f32>;
@group(0) @binding(5) var<storage, read_write> dq: array<f32>;
@group(0) @binding(6) var<storage, read_write> dbias: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;
@group(0) @binding(8) var<storage, read_write> zout: array<f32>;

const WG = 64u;

var<workgroup> red: array<f32, 64>;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

// The entry's move index, or -1 when it is padding or out of range.
fn move_of(e: u32) -> i32 {
  let m = i32(table[e]);
  return select(-1, m, m >= 0 && u32(m) < p.moves);
}

// An a / b term's offset within one position's planes, or -1 for none (or out of range).
fn cell_of(v: f32) -> i32 {
  let c = i32(v);
  return select(-1, c, c >= 0 && u32(c) < p.qper);
}

@compute @workgroup_size(64)
fn zero(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.n) { return; }
  zout[i] = 0.0;
}

@compute @workgroup_size(64)
fn cell_logits(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= p.batch * p.width) { return; }
  let e = i * 4u;
  let m = move_of(e);
  if (m < 0) { return; }
  let n = i / p.width;
  let base = n * p.qper;
  let a = cell_of(table[e + 1u]);
  let b = cell_of(table[e + 2u]);
  let s = i32(table[e + 3u]);
  var v = 0.0;
  if (a >= 0) { v += q[base + u32(a)]; }
  if (b >= 0) { v += q[base + u32(b)]; }
  if (s >= 0 && u32(s) < p.nbias) { v += bias[u32(s)]; }
  logits[n * p.moves + u32(m)] = v;
}

@compute @workgroup_size(64)
fn cell_dq(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = index(gid, nwg);
  if (n >= p.batch) { return; }
  let base = n * p.qper;
  for (var j = 0u; j < p.width; j++) {
    let e = (n * p.width + j) * 4u;
    let m = move_of(e);
    if (m < 0) { continue; }
    let g = dlogits[n * p.moves + u32(m)];
    let a = cell_of(table[e + 1u]);
    let b = cell_of(table[e + 2u]);
    if (a >= 0) { dq[base + u32(a)] += g; }
    if (b >= 0) { dq[base + u32(b)] += g; }
  }
}

// dL/dbias[s] summed over the entries whose slot is s, over entries first .. total step `step`.
fn slot_sum(s: u32, first: u32, step: u32) -> f32 {
  var acc = 0.0;
  let total = p.batch * p.width;
  for (var i = first; i < total; i += step) {
    let e = i * 4u;
    let m = move_of(e);
    if (m < 0 || i32(table[e + 3u]) != i32(s)) { continue; }
    acc += dlogits[(i / p.width) * p.moves + u32(m)];
  }
  return acc;
}

@compute @workgroup_size(64)
fn cell_dbias(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let s = wid.x;
  let t = lid.x;
  red[t] = slot_sum(s, t, WG);
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) { red[t] += red[t + k]; }
    workgroupBarrier();
  }
  if (t == 0u && s < p.nbias) { dbias[s] = red[0]; }
}

@compute @workgroup_size(64)
fn cell_dbias_direct(@builtin(global_invocation_id) gid: vec3<u32>) {
  let s = gid.x;
  if (s >= p.nbias) { return; }
  dbias[s] = slot_sum(s, 0u, 1u);
}
