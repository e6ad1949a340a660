/**
 * WGSL of the GPU CFR backend, generated per tree: the hand counts, the largest action count and
 * the offsets of the sections of the read-only `aux` buffer are compile-time constants.
 *
 * Bindings (one layout for every entry point): 0 per-dispatch params, 1 per-iteration discounts,
 * 2 aux (u32: node table, block offsets, isomorphs, permutations, deal masks, initial weights,
 * terminal tables), 3 reach (opponent reach per node x hand), 4 unused, 5 vals (the traverser's
 * counterfactual values per node x hand), 6 regrets, 7 cumulative strategy, 8 predicted regrets
 * (PDCFR+), 9 scratch (showdown card sums, results rows), 10-11 (quantized stores) scales, inputs.
 * Vectors are row-major with stride HM = max(hands of player 0, hands of player 1); a node's row is
 * aux[SLOT + node] (chunks reuse rows, see chunks.ts). Level and store dispatches take node or block
 * lists (P.start: their aux offset, P.count: their length), terminal dispatches a range of their
 * table, store dispatches the segment (P.c) whose blocks they update.
 */

/** Node table words per node (see nodeTable in solver.ts). */
export const NODE_WORDS = 4;
/** Threads per workgroup of the element-wise kernels. */
export const WG = 256;
/** Threads per workgroup of the fold kernel (four threads per card sum, and a reduction). */
export const FOLD_WG = 256;
/** Threads per workgroup of the showdown kernel. */
export const SD_WG = 256;
/** Evaluation modes of the up pass (word DISC_MODE of the per-iteration uniform). */
export const MODE_TRAIN = 0, MODE_BR = 1, MODE_EV = 2;
/** Words of the per-iteration uniform (discounts, rounding keys, mode) and the mode's word. */
export const DISC_WORDS = 16, DISC_MODE = 12;

/** Offsets (u32 words) of the sections of the aux buffer and the sizes the kernels need. */
export interface KernelLayout {
  h0: number;
  h1: number;
  hm: number;
  maxActions: number;
  algorithm: "dcfr" | "plus" | "pdcfr+";
  blockOff: number;
  iso: number;
  perm: number;
  /** Card removal: nearest deal of each node, each deal's next deal up, blocked-hand bit masks. */
  blocked: number;
  dealUp: number;
  /** Per deal: its outcome's weight (f32 bits) and its isomorphs' range [start, end). */
  dealInfo: number;
  /** Poker: `masks` holds each deal's card instead (a deal blocks the hands holding it). */
  dealCards: boolean;
  masks: number;
  /** Mask words per player and deal: ceil(hm / 32). */
  aw: number;
  w0: number;
  w1: number;
  /** Dense terminals: (node, matrix) pairs, and each player's matrices (hands x opponent hands). */
  dense: number;
  mat0: number;
  mat1: number;
  /** Poker: cards and same-combo index per hand, holders per card, fold and showdown tables. */
  cards0: number;
  cards1: number;
  same0: number;
  same1: number;
  hold0: number;
  hold1: number;
  fold: number;
  showdown: number;
  boards: number;
  /** Largest number of live opponent hands on a river board (sizes workgroup memory). */
  maxNT: number;
  /** Word offset in `scratch` of the results rows (after the showdown workgroups' card sums). */
  results: number;
  /** aux offsets: each node's vector row; each block's segment, instant-regret offset and player. */
  slot: number;
  blockSeg: number;
  blockInp: number;
  blockPlayer: number;
  /** Store elements. */
  elems: number;
  /**
   * Reach and values share one buffer (binding 3): a row holds a node's opponent reach until its
   * children's reach and (terminals) its values are computed, then its values. Terminal kernels
   * read all they need of a row before writing it. Not for dense terminals (they read a row while
   * others write it).
   */
  inPlace: boolean;
  /**
   * Quantized stores (null: all f32, updated in place by the up pass). Otherwise the up pass writes
   * each level's instant regrets and strategies to `inp` and per-level kernels re-encode the blocks
   * through the shared codec (shaders/quant/codec.wgsl) with the CPU's rounding keys.
   */
  quant: QuantLayout | null;
}

/** Formats (codec ids) and sizes of the quantized path. */
export interface QuantLayout {
  /** Codec format ids (0 f32, 1 i16, 2 u16, 3 i8, 4 u8, 5 i4, 6 u4) of regrets, strategy, predictions. */
  r: number;
  s: number;
  q: number;
  blocks: number;
  /** Offset of the strategy half of `inp` (see ChunkPlan.inpHalf). */
  inpHalf: number;
}

const CODEC_FNS = [
  "fmt_bits",
  "fmt_signed",
  "fmt_levels",
  "fmt_per_word",
  "mix32",
  "rounding_uniform",
  "level_of",
  "put_level",
  "fmt_inv_levels",
  "decode_factor",
  "is_finite",
  "nofuse",
  "div_rn",
  "encode_level",
];

/** The shared codec with its format fixed to `fmt` and its functions prefixed (one copy per store). */
function codecFor(codec: string, prefix: string, fmt: number): string {
  let c = codec.replace(/override FMT: u32 = 0u;/, `const ${prefix}FMT: u32 = ${fmt}u;`);
  c = c.replace(/\bFMT\b/g, `${prefix}FMT`);
  for (const f of CODEC_FNS) c = c.replace(new RegExp(`\\b${f}\\(`, "g"), `${prefix}${f}(`);
  return c;
}

/**
 * Per-store kernels of the quantized path, one level at a time (P.start/P.count: the level's
 * blocks; P.a/P.b: its element range), touching only the traverser's blocks: reduce (one workgroup
 * per block: the updated values' max -> next scale and its inverse), encode (one thread per payload
 * word: new levels; other blocks' elements keep their bits), commit (next scale -> scale).
 */
function quantStoreKernels(x: "R" | "S" | "Q", k: number, op: string): string {
  const px = x.toLowerCase() + "_";
  return `
fn ${px}scale(b: u32) -> f32 { return scales[${k}u * 3u * NBLOCKS + b]; }
fn ${px}value(e: u32, b: u32) -> f32 {
  if (${px}FMT == 0u) { return bitcast<f32>(${x}[e]); }
  let per = ${px}fmt_per_word();
  return ${px}nofuse(f32(${px}level_of(${x}[e / per], e % per)) * ${px}decode_factor(${px}scale(b), D.zero), D.zero);
}
fn ${px}updated(e: u32, b: u32) -> f32 {
  let z = D.zero;
  let local = aux[BINP + b] + e - aux[BLOCKOFF + b];
  ${op}
}

@compute @workgroup_size(64)
fn reduce_${x}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let i = wid.x + wid.y * nwg.x;
  let live = i < P.count;
  let b = aux[P.start + min(i, P.count - 1u)];
  var m = 0.0;
  if (live) {
    for (var e = aux[BLOCKOFF + b] + lid; e < aux[BLOCKOFF + b + 1u]; e += 64u) {
      m = max(m, abs(${px}updated(e, b)));
    }
  }
  qmax[lid] = m;
  workgroupBarrier();
  for (var s = 32u; s > 0u; s = s / 2u) {
    if (lid < s) { qmax[lid] = max(qmax[lid], qmax[lid + s]); }
    workgroupBarrier();
  }
  if (live && lid == 0u) {
    var mx = qmax[0];
    if (mx < 7.888609052210118e-31) { mx = 0.0; }
    scales[(${k}u * 3u + 1u) * NBLOCKS + b] = mx;
    scales[(${k}u * 3u + 2u) * NBLOCKS + b] = select(0.0, ${px}div_rn(${px}fmt_levels(), mx), mx > 0.0);
  }
}

// One workgroup per listed block; a payload word shared by several blocks is written by the
// workgroup of the first of them this dispatch updates (segment P.c, player P.p), for all of them.
@compute @workgroup_size(64)
fn encode_${x}(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
  let i = wid.x + wid.y * nwg.x;
  if (i >= P.count) { return; }
  let b = aux[P.start + i];
  let e0 = aux[BLOCKOFF + b];
  let e1 = aux[BLOCKOFF + b + 1u];
  if (${px}FMT == 0u) {
    for (var e = e0 + lid; e < e1; e += 64u) { ${x}[e] = bitcast<u32>(${px}updated(e, b)); }
    return;
  }
  let per = ${px}fmt_per_word();
  for (var w = e0 / per + lid; w <= (e1 - 1u) / per; w += 64u) {
    let first = w * per;
    let last = min(first + per, ELEMS);
    var bb = b;
    while (bb > 0u && aux[BLOCKOFF + bb] > first) { bb--; }
    var owner = NONE;
    for (var k = bb; k < NBLOCKS && aux[BLOCKOFF + k] < last; k++) {
      if (updating(k)) { owner = k; break; }
    }
    if (owner != b) { continue; }
    var word = ${x}[w];
    var cb = bb;
    for (var e = first; e < last; e++) {
      while (aux[BLOCKOFF + cb + 1u] <= e) { cb++; }
      if (!updating(cb)) { continue; }
      let v = ${px}updated(e, cb);
      let inv = scales[(${k}u * 3u + 2u) * NBLOCKS + cb];
      var q = 0;
      if (inv > 0.0) {
        let u = ${px}rounding_uniform(D.${x.toLowerCase()}Seed, D.iteration, cb, e - aux[BLOCKOFF + cb]);
        q = ${px}encode_level(v, inv, u, D.${x.toLowerCase()}Stoch != 0u, D.zero);
      }
      word = ${px}put_level(word, e % per, q);
    }
    ${x}[w] = word;
  }
}

@compute @workgroup_size(64)
fn commit_${x}(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * 64u;
  if (i >= P.count) { return; }
  let b = aux[P.start + i];
  scales[${k}u * 3u * NBLOCKS + b] = scales[(${k}u * 3u + 1u) * NBLOCKS + b];
}
`;
}

function quantKernels(L: KernelLayout, codec: string): string {
  const Q = L.quant!;
  const rOp = L.algorithm === "dcfr"
    ? `let o = r_value(e, b);
  return r_nofuse(o * select(D.betaNeg, D.alphaPos, o > 0.0), z) + inp[local];`
    : `let o = r_value(e, b);
  let r = r_nofuse(o * D.alphaPos, z) + inp[local];
  return select(r, 0.0, r < 0.0);`;
  const sOp = `let o = s_value(e, b);
  return s_nofuse(o * D.gamma, z) + s_nofuse(inp[INPHALF + local] * 1.0, z);`;
  const qOp = `let x = q_nofuse(r_value(e, b) * D.alphaNext, z) + inp[local];
  return select(x, 0.0, x < 0.0);`;
  return `
@group(0) @binding(10) var<storage, read_write> scales: array<f32>;
@group(0) @binding(11) var<storage, read_write> inp: array<f32>;
const NBLOCKS = ${Math.max(1, Q.blocks)}u;
const INPHALF = ${Q.inpHalf}u;
var<workgroup> qmax: array<f32, 64>;
// Block k is updated by this store dispatch: it is in segment P.c and the traverser's.
fn updating(k: u32) -> bool { return aux[BSEG + k] == P.c && aux[BPLAYER + k] == P.p; }
${codecFor(codec, "r_", Q.r)}
${codecFor(codec, "s_", Q.s)}
${codecFor(codec, "q_", Q.q)}
${quantStoreKernels("R", 0, rOp)}
${quantStoreKernels("S", 1, sOp)}
${L.algorithm === "pdcfr+" ? quantStoreKernels("Q", 2, qOp) : ""}
`;
}

/** The WGSL module of a tree's kernels (`codec`: shaders/quant/codec.wgsl, for quantized stores). */
export function cfrKernels(L: KernelLayout, codec = ""): string {
  const code = cfrKernelsText(L, codec);
  return L.inPlace ? code.replace(/\bvals\[/g, "reach[") : code;
}

function cfrKernelsText(L: KernelLayout, codec: string): string {
  const qt = L.quant !== null;
  const cur = L.algorithm === "pdcfr+" ? "Q" : "R";
  const update = L.algorithm === "dcfr"
    ? "let r = o * select(D.betaNeg, D.alphaPos, o > 0.0) + inst;\n        R[i] = r;"
    : L.algorithm === "plus"
    ? "let r = max(o * D.alphaPos + inst, 0.0);\n        R[i] = r;"
    : "let r = max(o * D.alphaPos + inst, 0.0);\n        R[i] = r;\n        Q[i] = max(r * D.alphaNext + inst, 0.0);";
  const maxNT = Math.max(1, L.maxNT);
  return /* wgsl */ `
struct Params { start: u32, count: u32, p: u32, mode: u32, a: u32, b: u32, c: u32, d: u32 }
struct Disc {
  alphaPos: f32, betaNeg: f32, gamma: f32, alphaNext: f32,
  iteration: u32, zero: u32, rSeed: u32, sSeed: u32, qSeed: u32, rStoch: u32, sStoch: u32, qStoch: u32,
  mode: u32, pad0: u32, pad1: u32, pad2: u32,
}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<uniform> D: Disc;
@group(0) @binding(2) var<storage, read> aux: array<u32>;
@group(0) @binding(3) var<storage, read_write> reach: array<f32>;
${L.inPlace ? "" : "@group(0) @binding(5) var<storage, read_write> vals: array<f32>;"}
@group(0) @binding(6) var<storage, read_write> R: array<${qt ? "u32" : "f32"}>;
@group(0) @binding(7) var<storage, read_write> S: array<${qt ? "u32" : "f32"}>;
@group(0) @binding(8) var<storage, read_write> Q: array<${qt ? "u32" : "f32"}>;
@group(0) @binding(9) var<storage, read_write> scratch: array<f32>;

const H0 = ${L.h0}u;
const H1 = ${L.h1}u;
const HM = ${L.hm}u;
const MAXA = ${Math.max(1, L.maxActions)}u;
const WG = ${WG}u;
const BLOCKOFF = ${L.blockOff}u;
const ISO = ${L.iso}u;
const PERM = ${L.perm}u;
const DEAL = ${L.blocked}u;
const DEALUP = ${L.dealUp}u;
const DEALINFO = ${L.dealInfo}u;
const MASKS = ${L.masks}u;
const AW = ${L.aw}u;
const W0 = ${L.w0}u;
const W1 = ${L.w1}u;
const DENSE = ${L.dense}u;
const MAT0 = ${L.mat0}u;
const MAT1 = ${L.mat1}u;
const CARDS0 = ${L.cards0}u;
const CARDS1 = ${L.cards1}u;
const SAME0 = ${L.same0}u;
const SAME1 = ${L.same1}u;
const HOLD0 = ${L.hold0}u;
const HOLD1 = ${L.hold1}u;
const FOLD = ${L.fold}u;
const SHOWDOWN = ${L.showdown}u;
const BOARDS = ${L.boards}u;
const MAXNT = ${maxNT}u;
const RES = ${L.results}u;
const SLOT = ${L.slot}u;
const BSEG = ${L.blockSeg}u;
const BINP = ${L.blockInp}u;
const BPLAYER = ${L.blockPlayer}u;
const ELEMS = ${L.elems}u;
const NONE = 0xffffffffu;
const PRE = ${Math.ceil(L.hm / Math.min(FOLD_WG, SD_WG))}u;

fn hands(q: u32) -> u32 { return select(H1, H0, q == 0u); }
// Node table: (kind | player << 2 | children << 4, first child, block, parent) per node.
fn kindOf(n: u32) -> u32 { return aux[n * 4u] & 3u; }
fn playerOf(n: u32) -> u32 { return (aux[n * 4u] >> 2u) & 3u; }
fn childCount(n: u32) -> u32 { return aux[n * 4u] >> 4u; }
fn flat(gid: vec3<u32>, nwg: vec3<u32>) -> u32 { return gid.x + gid.y * nwg.x * WG; }
fn row(n: u32) -> u32 { return aux[SLOT + n] * HM; }

// Probability of action a for hand h at player node n: regret matching of the current regrets
// (training) or the normalized cumulative strategy (evaluation); uniform when all are zero.
fn curAt(e: u32, b: u32) -> f32 { return ${qt ? `${cur.toLowerCase()}_value(e, b)` : `${cur}[e]`}; }
fn stratAt(e: u32, b: u32) -> f32 { return ${qt ? "s_value(e, b)" : "S[e]"}; }

fn sigma(n: u32, a: u32, h: u32) -> f32 {
  let A = childCount(n);
  let H = hands(playerOf(n));
  let b = aux[n * 4u + 2u];
  let off = aux[BLOCKOFF + b];
  var s = 0.0;
  if (D.mode == ${MODE_TRAIN}u) {
    for (var k = 0u; k < A; k++) { s += max(curAt(off + k * H + h, b), 0.0); }
    if (s > 0.0) { return max(curAt(off + a * H + h, b), 0.0) / s; }
  } else {
    for (var k = 0u; k < A; k++) { s += stratAt(off + k * H + h, b); }
    if (s > 0.0) { return stratAt(off + a * H + h, b) / s; }
  }
  return 1.0 / f32(A);
}

// Root vector: the opponent's initial weights.
@compute @workgroup_size(${WG})
fn init(@builtin(global_invocation_id) gid: vec3<u32>) {
  let h = gid.x;
  if (h >= HM) { return; }
  let p = P.p;
  let o = 1u - p;
  let wo = select(W1, W0, o == 0u);
  reach[h] = select(0.0, bitcast<f32>(aux[wo + h]), h < hands(o));
}

// Hand h of player p is blocked by deal k (the outcome leading into a child of a chance node).
fn isBlocked(k: u32, p: u32, h: u32) -> bool {
  ${
    L.dealCards
      ? `let c = aux[MASKS + k];
  let cc = aux[select(CARDS1, CARDS0, p == 0u) + h];
  return (cc & 255u) == c || (cc >> 8u) == c;`
      : "return ((aux[MASKS + (k * 2u + p) * AW + h / 32u] >> (h % 32u)) & 1u) != 0u;"
  }
}

// Hand h of player p is impossible at node n: a deal on the path to n blocks it.
fn inactive(n: u32, p: u32, h: u32) -> bool {
  var k = aux[DEAL + n];
  while (k != NONE) {
    if (isBlocked(k, p, h)) { return true; }
    k = aux[DEALUP + k];
  }
  return false;
}

// Down pass, one level: each node's opponent reach from its parent's (times the parent's strategy
// at the opponent's nodes; 0 for the hands a deal blocks).
@compute @workgroup_size(${WG})
fn down(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = flat(gid, nwg);
  let o = 1u - P.p;
  let Ho = hands(o);
  if (idx >= P.count * Ho) { return; }
  let n = aux[P.start + idx / Ho];
  let h = idx % Ho;
  let par = aux[n * 4u + 3u];
  let pk = kindOf(par);
  var r = reach[row(par) + h];
  if (pk == 0u && playerOf(par) == o && r != 0.0) {
    r = r * sigma(par, n - aux[par * 4u + 1u], h);
  }
  if (pk == 1u && isBlocked(aux[DEAL + n], o, h)) { r = 0.0; }
  reach[row(n) + h] = r;
}

// Terminals of a generic game: a dense payoff matrix per terminal and player.
@compute @workgroup_size(${WG})
fn dense(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = flat(gid, nwg);
  let p = P.p;
  let Hp = hands(p);
  let Ho = hands(1u - p);
  if (idx >= P.count * Hp) { return; }
  let k = P.start + idx / Hp;
  let h = idx % Hp;
  let n = aux[DENSE + 2u * k];
  let m = aux[DENSE + 2u * k + 1u];
  let mrow = select(MAT1, MAT0, p == 0u) + (m * Hp + h) * Ho;
  let base = row(n);
  var v = 0.0;
  for (var j = 0u; j < Ho; j++) { v += bitcast<f32>(aux[mrow + j]) * reach[base + j]; }
  vals[base + h] = v;
}

var<workgroup> cardSum: array<f32, 64>;
var<workgroup> cpart: array<f32, 256>;
var<workgroup> part: array<f32, ${Math.max(FOLD_WG, SD_WG)}>;

// Poker fold terminals, one workgroup per node: out[h] = pay * (opponent reach sharing no card with h),
// by inclusion-exclusion over h's two cards (per-card sums over the card's holders).
@compute @workgroup_size(${FOLD_WG})
fn fold(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = P.p;
  let o = 1u - p;
  let Hp = hands(p);
  let Ho = hands(o);
  let hold = select(HOLD1, HOLD0, o == 0u);
  let cards = select(CARDS1, CARDS0, p == 0u);
  let same = select(SAME1, SAME0, p == 0u);
  let stride = nwg.x * nwg.y;
  for (var i = wid.x + wid.y * nwg.x; i < P.count; i += stride) {
    let k = P.start + i;
    let n = aux[FOLD + 4u * k];
    let win = aux[FOLD + 4u * k + 1u] != p;
    let pay = bitcast<f32>(aux[FOLD + 4u * k + select(3u, 2u, win)]);
    let base = row(n);
    // Card sums over the card's holders, a quarter of them per thread (short load chains).
    if (t < 208u) {
      let s0 = aux[hold + t / 4u];
      let s1 = aux[hold + t / 4u + 1u];
      let cch = (s1 - s0 + 3u) / 4u;
      let lo = min(s0 + (t % 4u) * cch, s1);
      let hi = min(lo + cch, s1);
      var s = 0.0;
      for (var e = lo; e < hi; e++) { s += reach[base + aux[hold + 53u + e]]; }
      cpart[t] = s;
    }
    var ps = 0.0;
    for (var j = t; j < Ho; j += ${FOLD_WG}u) { ps += reach[base + j]; }
    part[t] = ps;
    // The reach of the opponent's copy of each of my hands, read before any value is written.
    var sameReach: array<f32, PRE>;
    for (var h = t; h < Hp; h += ${FOLD_WG}u) {
      let j = aux[same + h];
      if (j != NONE) { sameReach[h / ${FOLD_WG}u] = reach[base + j]; }
    }
    workgroupBarrier();
    if (t < 52u) {
      cardSum[t] = ((cpart[4u * t] + cpart[4u * t + 1u]) + cpart[4u * t + 2u]) + cpart[4u * t + 3u];
    }
    if (t == 64u) {
      var s = 0.0;
      for (var i = 0u; i < ${FOLD_WG}u; i++) { s += part[i]; }
      part[0] = s;
    }
    workgroupBarrier();
    let total = part[0];
    for (var h = t; h < Hp; h += ${FOLD_WG}u) {
      let cc = aux[cards + h];
      var v = total - cardSum[cc & 255u] - cardSum[cc >> 8u];
      let j = aux[same + h];
      if (j != NONE) { v += sameReach[h / ${FOLD_WG}u]; }
      vals[base + h] = pay * v;
    }
    workgroupBarrier();
  }
}

var<workgroup> prefix: array<f32, ${maxNT}>;

fn cardPrefix(sbase: u32, cs: u32, c: u32, m: u32) -> f32 {
  if (m == 0u) { return 0.0; }
  return scratch[sbase + aux[cs + c] + m - 1u];
}

// Poker showdown terminals, one workgroup per node: prefix sums of the opponent reach in strength
// order and per card (over the card's holders in strength order); hand h wins against the hands
// strictly weaker and loses to those strictly stronger, minus those sharing one of its cards.
@compute @workgroup_size(${SD_WG})
fn showdown(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3<u32>,
            @builtin(num_workgroups) nwg: vec3<u32>) {
  let p = P.p;
  let cards = select(CARDS1, CARDS0, p == 0u);
  let same = select(SAME1, SAME0, p == 0u);
  let wgi = wid.x + wid.y * nwg.x;
  let stride = nwg.x * nwg.y;
  let sbase = wgi * 2u * MAXNT;
  for (var i = wgi; i < P.count; i += stride) {
    let sd = SHOWDOWN + 5u * (P.start + i);
    let n = aux[sd];
    let bt = BOARDS + (aux[sd + 1u] * 2u + p) * 6u;
    let payWin = bitcast<f32>(aux[sd + 2u]);
    let payLose = bitcast<f32>(aux[sd + 3u]);
    let payTie = bitcast<f32>(aux[sd + 4u]);
    let tOff = aux[bt];
    let nT = aux[bt + 1u];
    let eOff = aux[bt + 2u];
    let cs = aux[bt + 3u];
    let mOff = aux[bt + 4u];
    let nM = aux[bt + 5u];
    let base = row(n);
    // Per-card running sums, four threads per card (a quarter of its holders each, then the
    // sums of the quarters before): short dependent load chains.
    let c4 = t / 4u;
    let q4 = t % 4u;
    var cLo = 0u;
    var cHi = 0u;
    if (t < 208u) {
      let s0 = aux[cs + c4];
      let s1 = aux[cs + c4 + 1u];
      let cch = (s1 - s0 + 3u) / 4u;
      cLo = min(s0 + q4 * cch, s1);
      cHi = min(cLo + cch, s1);
      var run = 0.0;
      for (var e = cLo; e < cHi; e++) {
        run += reach[base + aux[eOff + e]];
        scratch[sbase + e] = run;
      }
      cpart[t] = run;
    }
    let ch = (nT + ${SD_WG - 1}u) / ${SD_WG}u;
    let lo = min(t * ch, nT);
    let hi = min(lo + ch, nT);
    var s = 0.0;
    for (var j = lo; j < hi; j++) {
      s += reach[base + aux[tOff + j]];
      prefix[j] = s;
    }
    part[t] = s;
    var sameReach: array<f32, PRE>;
    for (var i = t; i < nM; i += ${SD_WG}u) {
      let j = aux[same + aux[mOff + 3u * i]];
      if (j != NONE) { sameReach[i / ${SD_WG}u] = reach[base + j]; }
    }
    workgroupBarrier();
    if (t == 0u) {
      var run = 0.0;
      for (var i = 0u; i < ${SD_WG}u; i++) {
        let x = part[i];
        part[i] = run;
        run += x;
      }
    }
    workgroupBarrier();
    let add = part[t];
    for (var j = lo; j < hi; j++) { prefix[j] += add; }
    if (t < 208u && q4 > 0u) {
      var cadd = 0.0;
      for (var i = c4 * 4u; i < t; i++) { cadd += cpart[i]; }
      for (var e = cLo; e < cHi; e++) { scratch[sbase + e] += cadd; }
    }
    storageBarrier();
    workgroupBarrier();
    var total = 0.0;
    if (nT > 0u) { total = prefix[nT - 1u]; }
    for (var i = t; i < nM; i += ${SD_WG}u) {
      let m = mOff + 3u * i;
      let hand = aux[m];
      let wl = aux[m + 1u];
      let wc = wl & 0xffffu;
      let ls = wl >> 16u;
      let cn = aux[m + 2u];
      let cc = aux[cards + hand];
      let c1 = cc & 255u;
      let c2 = cc >> 8u;
      var pw = 0.0;
      if (wc > 0u) { pw = prefix[wc - 1u]; }
      var pl = 0.0;
      if (ls > 0u) { pl = prefix[ls - 1u]; }
      let t1 = cardPrefix(sbase, cs, c1, aux[cs + c1 + 1u] - aux[cs + c1]);
      let t2 = cardPrefix(sbase, cs, c2, aux[cs + c2 + 1u] - aux[cs + c2]);
      let win = pw - cardPrefix(sbase, cs, c1, cn & 255u) - cardPrefix(sbase, cs, c2, (cn >> 8u) & 255u);
      let lose = (total - pl) - (t1 - cardPrefix(sbase, cs, c1, (cn >> 16u) & 255u))
        - (t2 - cardPrefix(sbase, cs, c2, cn >> 24u));
      var v = payWin * win + payLose * lose;
      if (payTie != 0.0) {
        var compat = total - t1 - t2;
        let j = aux[same + hand];
        if (j != NONE) { compat += sameReach[i / ${SD_WG}u]; }
        v += payTie * (compat - win - lose);
      }
      vals[base + hand] = v;
    }
    storageBarrier();
    workgroupBarrier();
  }
}

// Up pass, one level: each node's values from its children's (a contiguous range one level down);
// at the traverser's nodes in training, the regret and cumulative-strategy updates.
@compute @workgroup_size(${WG})
fn up(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = flat(gid, nwg);
  let p = P.p;
  let Hp = hands(p);
  if (idx >= P.count * Hp) { return; }
  let n = aux[P.start + idx / Hp];
  let h = idx % Hp;
  let kind = kindOf(n);
  if (kind == 2u) { return; }
  let first = aux[n * 4u + 1u];
  let A = childCount(n);
  let out = row(n) + h;
  if (kind == 1u) {
    vals[out] = chanceSum(0.0, first, first + A, p, h);
    return;
  }
  if (playerOf(n) != p) {
    var v = 0.0;
    for (var a = 0u; a < A; a++) { v += vals[row(first + a) + h]; }
    vals[out] = v;
    return;
  }
  var cv: array<f32, MAXA>;
  for (var a = 0u; a < A; a++) { cv[a] = vals[row(first + a) + h]; }
  if (D.mode == ${MODE_BR}u) {
    var v = cv[0];
    for (var a = 1u; a < A; a++) { v = max(v, cv[a]); }
    vals[out] = v;
    return;
  }
  if (D.mode == ${MODE_EV}u) {
    var v = 0.0;
    for (var a = 0u; a < A; a++) { v += sigma(n, a, h) * cv[a]; }
    vals[out] = v;
    return;
  }
  let blk = aux[n * 4u + 2u];
  let off = aux[BLOCKOFF + blk];
  var sig: array<f32, MAXA>;
  var s = 0.0;
  for (var a = 0u; a < A; a++) { s += max(curAt(off + a * Hp + h, blk), 0.0); }
  var v = 0.0;
  for (var a = 0u; a < A; a++) {
    var x = 1.0 / f32(A);
    if (s > 0.0) { x = max(curAt(off + a * Hp + h, blk), 0.0) / s; }
    sig[a] = x;
    v += x * cv[a];
  }
  vals[out] = v;
  let on = !inactive(n, p, h);
  ${qt ? "let ib = aux[BINP + blk];" : ""}
  for (var a = 0u; a < A; a++) {
    let i = off + a * Hp + h;
    let inst = select(0.0, cv[a] - v, on);
    ${
    qt
      ? "inp[ib + a * Hp + h] = inst;\n    inp[INPHALF + ib + a * Hp + h] = sig[a];"
      : `let o = R[i];
    ${update}
    S[i] = S[i] * D.gamma + sig[a];`
  }
  }
}

// Values of a chance node from its children [c0, c1) (each weighted, plus its isomorphs), added to
// v0 in child order: the up pass (v0 = 0) and the accumulation over chunks give the same sums.
fn chanceSum(v0: f32, c0: u32, c1: u32, p: u32, h: u32) -> f32 {
  var v = v0;
  for (var c = c0; c < c1; c++) {
    let k = aux[DEAL + c];
    let w = bitcast<f32>(aux[DEALINFO + 3u * k]);
    let base = row(c);
    v += w * select(vals[base + h], 0.0, isBlocked(k, p, h));
    for (var i = aux[DEALINFO + 3u * k + 1u]; i < aux[DEALINFO + 3u * k + 2u]; i++) {
      let g = aux[PERM + aux[ISO + 3u * i + 1u + p] + h];
      v += bitcast<f32>(aux[ISO + 3u * i]) * select(vals[base + g], 0.0, isBlocked(k, p, g));
    }
  }
  return v;
}

// A chunk's share of its cut chance nodes' values: parts (node, first child, end child, first?,
// accumulator row) at aux[P.start], P.count of them; a node's first part starts its sum in its
// accumulator row, later ones add to it.
@compute @workgroup_size(${WG})
fn accum(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = flat(gid, nwg);
  let p = P.p;
  let Hp = hands(p);
  if (idx >= P.count * Hp) { return; }
  let e = P.start + 5u * (idx / Hp);
  let h = idx % Hp;
  let out = aux[e + 4u] * HM + h;
  var v = 0.0;
  if (aux[e + 3u] == 0u) { v = vals[out]; }
  vals[out] = chanceSum(v, aux[e + 1u], aux[e + 2u], p, h);
}

// After the chunks: each cut node's accumulated values (pairs node, accumulator row) to its row.
@compute @workgroup_size(${WG})
fn settle(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let idx = flat(gid, nwg);
  let Hp = hands(P.p);
  if (idx >= P.count * Hp) { return; }
  let e = P.start + 2u * (idx / Hp);
  let h = idx % Hp;
  vals[row(aux[e]) + h] = vals[aux[e + 1u] * HM + h];
}

// Copies the root's values (the traverser's hands) to slot P.a of the results row.
@compute @workgroup_size(${WG})
fn result(@builtin(global_invocation_id) gid: vec3<u32>) {
  let h = gid.x;
  if (h >= HM) { return; }
  scratch[RES + P.a * HM + h] = vals[h];
}
${qt ? quantKernels(L, codec) : ""}`;
}
