// AssemblyScript source of the whole training walk of a postflop DCFR solve (built
// by `deno task build-wasm` into ../walk_wasm.ts, with the terminal and regret kernels it imports).
// Twin of CfrSolver.visit (src/cfr/solver.ts) in the case it fuses (dcfr, no pruning, locks or
// reach-weighted average) with PostflopGame's terminals: the same operations in the same order
// with the same roundings, so the stores come out bit-identical. f32 stores are updated in place;
// quantized ones (any signed regret and unsigned strategy format) are decoded per block, updated
// by the same fused step, and encoded back with the solver's rounding keys (cfr/wasm/asm/quant.ts,
// twin of src/quant/store.ts). The tree, the stores, the showdown tables and the per-depth scratch
// all live in this module's memory, laid out by ../walk.ts; nothing is copied per node.

import { fold, showdown } from "./terminal";
import { regretMatch, regretMatchReach, traverserDcfr } from "../../../cfr/wasm/asm/regret";
import { decodeBlock, encodeBlock } from "../../../cfr/wasm/asm/quant";

const K_TERMINAL: u32 = 2;
const K_CHANCE: u32 = 1;

// Layout pointers (byte offsets), set by setup() from the config block ../walk.ts writes.
// nodes: 16 B per node: first child u32, (children u16 | kind u8 << 16 | player u8 << 24),
// block (player node) or terminal id (terminal) i32, chance-outcome index u32.
let nodes: usize = 0;
// chance: 32 B per chance outcome: weight f32, then u32 blocked start/end of player 0, of player
// 1 (into the player's blocked list), isomorph start/end (into isos), task index (i32: the
// outcome of a first chance node, a task of a threaded walk; -1 otherwise).
let chance: usize = 0;
let blocked0: usize = 0;
let blocked1: usize = 0;
// isos: 16 B per isomorph: weight f32, permutation of player 0's hands, of player 1's (u32 lists).
let isos: usize = 0;
// terms: 32 B per terminal: f64 x3 (fold: scale for player 0, for player 1; showdown: payWin,
// payLose, payTie), showdown descriptor of player 0, of player 1 (i32, 0 for a fold).
let terms: usize = 0;
let regrets: usize = 0;
let strat: usize = 0;
let offsets: usize = 0; // u32 element offset per block
let H0: i32 = 0;
let H1: i32 = 0;
let cards0: usize = 0;
let cards1: usize = 0;
let same0: usize = 0;
let same1: usize = 0;
let cs: usize = 0;
let all: usize = 0;
let win: usize = 0;
let crec: usize = 0;
let cr: usize = 0;
let sum: usize = 0;
let den: usize = 0;
let acc: usize = 0;
// Per depth: vals (wideB bytes), sig (wideB), opponent reach (reachB), active flags (actB), and
// for evaluation the profile's values beside the best response's (wideB).
let depth0: usize = 0;
let depthB: usize = 0;
let wideB: usize = 0;
let reachB: usize = 0;
let actB: usize = 0;

// Quantized storage (set by setup from the quant block, config field 112; 0: both stores f32):
// format codes (quant/format.ts; 0 f32), the stores' scales, the rounding keys' seeds and modes.
// The block also holds the iteration (i32 at 24), which ../walk.ts writes before each one.
let quant: usize = 0;
let rFmt: i32 = 0;
let sFmt: i32 = 0;
let rScales: usize = 0;
let sScales: usize = 0;
let rSeed: u32 = 0;
let sSeed: u32 = 0;
let rStoch: bool = false;
let sStoch: bool = false;

let visits: f64 = 0;
let bad: i32 = 0;

// A threaded walk's traversal on the main thread runs in two phases around the tasks (the
// outcomes of the first chance nodes, run by every thread with `task`/`evalTask`): PHASE_REACH
// walks the nodes above them and writes each first chance node's inputs (opponent reach, active
// flags and count, -1 where not reached) and the count of its outcomes left to run, nothing else.
// Each task takes its outcome's reach from its chance node's inputs, visits the outcome's subtree
// into its own row, and the task that finishes a chance node's last outcome adds the outcome rows
// up in order into the chance node's values (addChance, as the whole walk); PHASE_COMBINE walks
// the nodes above again as the whole walk does, taking each first chance node's values from its
// row. The same operations in the same order as the whole walk: the results are bit-identical.
const PHASE_WHOLE = 0;
const PHASE_REACH = 1;
const PHASE_COMBINE = 2;
let phase: i32 = PHASE_WHOLE;
// Task rows (set by setTasks; rows of tStride hands): per task, its values, evaluation's profile
// values, 1 or -1 (evaluation: visited or skipped) and its first chance node's index; per first
// chance node, its node, opponent reach and active flags there, active count (-1: not reached;
// evaluation: 1), outcomes left to run (atomic) and its values (evaluation: both modes').
let tOut: usize = 0;
let tOutE: usize = 0;
let tCn: usize = 0;
let tPar: usize = 0;
let jNode: usize = 0;
let jOpp: usize = 0;
let jAct: usize = 0;
let jCn: usize = 0;
let jLeft: usize = 0;
let jOut: usize = 0;
let jOutE: usize = 0;
let tStride: usize = 0;

/** Sets the task rows of a threaded walk from the i32 fields at `at` (see tOut; ../walk.ts). */
export function setTasks(at: usize): void {
  tOut = load<u32>(at), tOutE = load<u32>(at, 4), tCn = load<u32>(at, 8);
  tPar = load<u32>(at, 12), jNode = load<u32>(at, 16), jOpp = load<u32>(at, 20);
  jAct = load<u32>(at, 24), jCn = load<u32>(at, 28), jLeft = load<u32>(at, 32);
  jOut = load<u32>(at, 36), jOutE = load<u32>(at, 40), tStride = load<u32>(at, 44);
}

/** The first chance node index of chance outcome record ch (a task's). */
function parentOf(ch: usize): usize {
  return <usize> load<i32>(tPar + (<usize> taskOf(ch) << 2));
}

/**
 * At a first chance node j in PHASE_REACH: stores its inputs (the active flags unless act is 0:
 * evaluation) and its outcomes' count.
 */
function chanceInputs(j: usize, p: i32, opp: usize, act: usize, nAct: i32, A: i32): void {
  memory.copy(jOpp + ((j * tStride) << 2), opp, <usize> (p ? H0 : H1) << 2);
  if (act != 0) memory.copy(jAct + j * tStride, act, <usize> (p ? H1 : H0));
  store<i32>(jCn + (j << 2), nAct);
  if (ASC_FEATURE_THREADS) atomic.store<i32>(jLeft + (j << 2), A);
  else store<i32>(jLeft + (j << 2), A);
}

/**
 * After task ch's outcome ran: counts it done, and when it was its chance node j's last, adds the
 * outcome rows up in order into j's values (addChance, as the whole walk; evaluation: both modes',
 * skipping the outcomes skipped). The count is atomic: the rows other threads wrote are visible.
 */
function outcomeDone(j: usize, p: i32, evaluation: bool): void {
  const left = jLeft + (j << 2);
  let last: bool;
  if (ASC_FEATURE_THREADS) last = atomic.sub<i32>(left, 1) == 1;
  else {
    store<i32>(left, load<i32>(left) - 1);
    last = load<i32>(left) == 0;
  }
  if (!last) return;
  const rec = nodes + (<usize> load<u32>(jNode + (j << 2)) << 4);
  const first = load<u32>(rec), A = load<u32>(rec, 4) & 0xffff;
  const H = <usize> (p ? H1 : H0), out = jOut + ((j * tStride) << 2);
  const outE = jOutE + ((j * tStride) << 2);
  memory.fill(out, 0, H << 2);
  if (evaluation) memory.fill(outE, 0, H << 2);
  for (let c = first; c < first + A; c++) {
    const ch = outcomeRecord(c), k = <usize> taskOf(ch), row = (k * tStride) << 2;
    if (!evaluation) {
      addChance(ch, p, tOut + row, out);
    } else if (load<i32>(tCn + (k << 2)) >= 0) {
      addChance(ch, p, tOut + row, out);
      addChance(ch, p, tOutE + row, outE);
    }
  }
}

/** The task of chance outcome record ch, or -1 (see `chance`). */

function taskOf(ch: usize): i32 {
  return load<i32>(ch, 28);
}

/** The chance outcome record of outcome node c. */

function outcomeRecord(c: u32): usize {
  return chance + (<usize> load<u32>(nodes + (<usize> c << 4), 12) << 5);
}
let alphaPos: f32 = 0;
let betaNeg: f32 = 0;
let gamma: f32 = 0;

/** Reads the layout from the config block at `cfg` (i32 fields in the order ../walk.ts writes). */
export function setup(cfg: usize): void {
  nodes = load<u32>(cfg);
  chance = load<u32>(cfg, 4);
  blocked0 = load<u32>(cfg, 8);
  blocked1 = load<u32>(cfg, 12);
  isos = load<u32>(cfg, 16);
  terms = load<u32>(cfg, 20);
  regrets = load<u32>(cfg, 24);
  strat = load<u32>(cfg, 28);
  offsets = load<u32>(cfg, 32);
  H0 = load<i32>(cfg, 36);
  H1 = load<i32>(cfg, 40);
  cards0 = load<u32>(cfg, 44);
  cards1 = load<u32>(cfg, 48);
  same0 = load<u32>(cfg, 52);
  same1 = load<u32>(cfg, 56);
  cs = load<u32>(cfg, 60);
  all = load<u32>(cfg, 64);
  win = load<u32>(cfg, 68);
  crec = load<u32>(cfg, 72);
  cr = load<u32>(cfg, 76);
  sum = load<u32>(cfg, 80);
  den = load<u32>(cfg, 84);
  acc = load<u32>(cfg, 88);
  depth0 = load<u32>(cfg, 92);
  depthB = load<u32>(cfg, 96);
  wideB = load<u32>(cfg, 100);
  reachB = load<u32>(cfg, 104);
  actB = load<u32>(cfg, 108);
  quant = load<u32>(cfg, 112);
  if (quant != 0) {
    rFmt = load<i32>(quant), sFmt = load<i32>(quant, 4);
    rSeed = load<u32>(quant, 8), sSeed = load<u32>(quant, 12);
    rStoch = load<i32>(quant, 16) != 0, sStoch = load<i32>(quant, 20) != 0;
    rScales = load<u32>(quant, 32), sScales = load<u32>(quant, 36);
  }
}

/**
 * The regret block at byte offset `blk` (block b, len elements) for regret matching: in place
 * when f32, else decoded to `dec` (CfrSolver.current's decodeBlockPositiveSums values).
 */
function regretAt(b: i32, blk: usize, len: i32, dec: usize): usize {
  if (rFmt == 0) return regrets + blk;
  decodeBlock(rFmt, regrets, rScales, b, <u32> (blk >> 2), len, dec);
  return dec;
}

/** regretAt for the strategy store. */
function strategyAt(b: i32, blk: usize, len: i32, dec: usize): usize {
  if (sFmt == 0) return strat + blk;
  decodeBlock(sFmt, strat, sScales, b, <u32> (blk >> 2), len, dec);
  return dec;
}

/**
 * After the fused update of block b on decoded copies (`reg`, `st`), encodes them into the
 * quantized stores (updateBlock's encodeBlockWithMax, the iteration's rounding keys).
 */
function storeBack(b: i32, blk: usize, len: i32, reg: usize, st: usize): void {
  const it = load<u32>(quant, 24), start = <u32> (blk >> 2);
  if (rFmt != 0) encodeBlock(rFmt, regrets, rScales, b, start, len, reg, rSeed, it, rStoch);
  if (sFmt != 0) encodeBlock(sFmt, strat, sScales, b, start, len, st, sSeed, it, sStoch);
}

/**
 * One traversal for player p from the root: opponent reach at `opp`, active flags at `act` (H_p
 * bytes, all 1), root values to `out`; discounts of the iteration; `ph`: the whole walk, or a
 * phase of a threaded one (see PHASE_REACH). Returns the node-hand visits, or -1 when an update
 * gave a value that is not finite (the stores are then unusable).
 */
export function traverse(
  p: i32,
  opp: usize,
  act: usize,
  out: usize,
  a: f32,
  b: f32,
  g: f32,
  ph: i32,
): f64 {
  alphaPos = a, betaNeg = b, gamma = g;
  visits = 0, bad = 0, phase = ph;
  visit(0, 0, p, opp, act, p ? H1 : H0, out);
  return bad ? -1 : visits;
}

/**
 * One chance-subtree task of a multi-threaded traversal (../walk.ts, cfr/parallel.ts): the walk
 * from node n at depth d (an outcome of a first chance node) for player p, its reach taken from
 * its chance node's inputs as the whole walk does (in the scratch of the chance node's depth),
 * its values to its task row, then outcomeDone. Nothing when the chance node was not reached.
 * Each thread's instance has its own scratch (its own setup block); the tasks' subtrees own their
 * storage blocks alone. Returns the node-hand visits, or -1 as traverse.
 */
export function task(n: u32, d: u32, p: i32, a: f32, b: f32, g: f32): f64 {
  const ch = outcomeRecord(n), j = parentOf(ch), nAct = load<i32>(jCn + (j << 2));
  if (nAct < 0) return 0;
  alphaPos = a, betaNeg = b, gamma = g;
  visits = 0, bad = 0, phase = PHASE_WHOLE;
  const r = depth0 + <usize> (d - 1) * depthB + 2 * wideB, ca = r + reachB;
  outcomeReach(ch, 1 - p, jOpp + ((j * tStride) << 2), r);
  const cn = outcomeTraverser(ch, p, jAct + j * tStride, nAct, ca);
  visit(n, d, p, r, ca, cn, tOut + ((<usize> taskOf(ch) * tStride) << 2));
  outcomeDone(j, p, false);
  return bad ? -1 : visits;
}

function visit(n: u32, d: u32, p: i32, opp: usize, act: usize, nAct: i32, out: usize): void {
  const reach = phase == PHASE_REACH;
  if (!reach) visits += <f64> nAct;
  const rec = nodes + (<usize> n << 4);
  const first = load<u32>(rec), info = load<u32>(rec, 4);
  const kind = (info >> 16) & 0xff, A = info & 0xffff;
  const H = p ? H1 : H0;
  if (kind == K_TERMINAL) {
    if (!reach) terminal(load<i32>(rec, 8), p, opp, out);
    return;
  }
  const vals = depth0 + <usize> d * depthB, sig = vals + wideB;
  const r = sig + wideB, ca = r + reachB;
  if (kind == K_CHANCE && phase != PHASE_WHOLE && taskOf(outcomeRecord(first)) >= 0) {
    const j = parentOf(outcomeRecord(first));
    if (reach) chanceInputs(j, p, opp, act, nAct, <i32> A);
    else memory.copy(out, jOut + ((j * tStride) << 2), <usize> H << 2);
    return;
  }
  if (kind == K_CHANCE) {
    memory.fill(out, 0, <usize> H << 2);
    for (let c = first; c < first + A; c++) {
      const ch = chance + (<usize> load<u32>(nodes + (<usize> c << 4), 12) << 5);
      outcomeReach(ch, 1 - p, opp, r);
      const cn = outcomeTraverser(ch, p, act, nAct, ca);
      visit(c, d + 1, p, r, ca, cn, vals);
      addChance(ch, p, vals, out);
    }
    return;
  }
  const q = <i32> (info >> 24), Hq = q ? H1 : H0;
  const bi = load<i32>(rec, 8), len = <i32> A * Hq;
  const blk = <usize> load<u32>(offsets + (<usize> bi << 2)) << 2;
  // Quantized regrets decode into the depth's evaluation slot (unused by training).
  const dec = ca + actB;
  if (q != p) {
    // The opponent's reach through every action at once (row a of sig: opp * sigma_a). Where
    // no four-hand chunk of the reach has a bit set, regretMatchReach reads no regret: a
    // quantized block is not decoded then.
    const reg = rFmt != 0 && !anyBits(opp, Hq) ? dec : regretAt(bi, blk, len, dec);
    regretMatchReach(reg, sig, A, Hq, opp);
    if (!reach) memory.fill(out, 0, <usize> H << 2);
    for (let a: u32 = 0; a < A; a++) {
      visit(first + a, d + 1, p, sig + (<usize> (a * Hq) << 2), act, nAct, vals);
      if (!reach) addValues(vals, H, out);
    }
    return;
  }
  if (reach) {
    // The traverser's own strategy changes no task's inputs (no reach-weighted average).
    if (nAct != 0) {
      for (let a: u32 = 0; a < A; a++) visit(first + a, d + 1, p, opp, act, nAct, vals);
    }
    return;
  }
  const reg = regretAt(bi, blk, len, dec);
  regretMatch(reg, sig, A, Hq, sum, den);
  for (let a: u32 = 0; a < A; a++) {
    const row = vals + (<usize> (a * H) << 2);
    if (nAct == 0) memory.fill(row, 0, <usize> H << 2);
    else visit(first + a, d + 1, p, opp, act, nAct, row);
  }
  // A quantized strategy decodes into the next depth's values (free once the children ran).
  const st = strategyAt(bi, blk, len, vals + depthB);
  const mx = traverserDcfr(
    sig,
    vals,
    act,
    out,
    reg,
    st,
    A,
    H,
    alphaPos,
    betaNeg,
    gamma,
    acc,
  );
  if (!(mx < Infinity)) bad = 1;
  else if (quant != 0) storeBack(bi, blk, len, reg, st);
}

/** PostflopGame.terminalValues on the Wasm kernels (fold formula or showdown). */
function terminal(t: i32, p: i32, opp: usize, out: usize): void {
  const rec = terms + (<usize> t << 5);
  const desc = load<i32>(rec + 24 + (<usize> p << 2));
  const same = p ? same1 : same0;
  if (desc == 0) {
    const scale = load<f64>(rec + (<usize> p << 3));
    if (p) fold(H0, H1, opp, cards0, cards1, same, out, scale, cs);
    else fold(H1, H0, opp, cards1, cards0, same, out, scale, cs);
    return;
  }
  showdown(
    <usize> desc,
    opp,
    out,
    same,
    load<f64>(rec),
    load<f64>(rec, 8),
    load<f64>(rec, 16),
    cs,
    all,
    win,
    crec,
    cr,
  );
}

/** walk.ts outcomeReach: dst = opp for o's hands, 0 where the outcome blocks them. */
function outcomeReach(ch: usize, o: i32, opp: usize, dst: usize): void {
  memory.copy(dst, opp, <usize> (o ? H1 : H0) << 2);
  const list = o ? blocked1 : blocked0;
  const s = load<u32>(ch + 4 + (<usize> o << 3)), e = load<u32>(ch + 8 + (<usize> o << 3));
  for (let i = s; i < e; i++) {
    store<f32>(dst + (<usize> load<u32>(list + (<usize> i << 2)) << 2), 0);
  }
}

/** walk.ts outcomeTraverser without the own reach (unused here): active flags, their count. */
function outcomeTraverser(ch: usize, p: i32, act: usize, nAct: i32, ca: usize): i32 {
  memory.copy(ca, act, <usize> (p ? H1 : H0));
  const list = p ? blocked1 : blocked0;
  const s = load<u32>(ch + 4 + (<usize> p << 3)), e = load<u32>(ch + 8 + (<usize> p << 3));
  let cn = nAct;
  for (let i = s; i < e; i++) {
    const h = ca + <usize> load<u32>(list + (<usize> i << 2));
    cn -= <i32> load<u8>(h);
    store<u8>(h, 0);
  }
  return cn;
}

/**
 * tree.ts addChanceChildValues: p's blocked hands zeroed in vals, then out += w * vals and, per
 * isomorph, out += wk * vals[perm[h]]. As in JavaScript, each product and sum is taken in f64 and
 * rounded to f32 once, on the store.
 */
function addChance(ch: usize, p: i32, vals: usize, out: usize): void {
  const H = p ? H1 : H0;
  const list = p ? blocked1 : blocked0;
  const s = load<u32>(ch + 4 + (<usize> p << 3)), e = load<u32>(ch + 8 + (<usize> p << 3));
  for (let i = s; i < e; i++) {
    store<f32>(vals + (<usize> load<u32>(list + (<usize> i << 2)) << 2), 0);
  }
  const w = <f64> load<f32>(ch);
  const H2 = H & ~1;
  const w2 = f64x2.splat(w);
  let h = 0;
  for (; h < H2; h += 2) {
    const o = out + (<usize> h << 2), v = vals + (<usize> h << 2);
    const x = f64x2.add(
      f64x2.promote_low_f32x4(v128.load64_zero(o)),
      f64x2.mul(w2, f64x2.promote_low_f32x4(v128.load64_zero(v))),
    );
    v128.store64_lane(o, f32x4.demote_f64x2_zero(x), 0);
  }
  for (; h < H; h++) {
    const o = out + (<usize> h << 2);
    store<f32>(o, <f32> (<f64> load<f32>(o) + w * <f64> load<f32>(vals + (<usize> h << 2))));
  }
  const ks = load<u32>(ch, 20), ke = load<u32>(ch, 24);
  for (let k = ks; k < ke; k++) {
    const iso = isos + (<usize> k << 4);
    const wk = <f64> load<f32>(iso), perm = <usize> load<u32>(iso + 4 + (<usize> p << 2));
    for (let h = 0; h < H; h++) {
      const o = out + (<usize> h << 2);
      const v = load<f32>(vals + (<usize> load<u32>(perm + (<usize> h << 2)) << 2));
      store<f32>(o, <f32> (<f64> load<f32>(o) + wk * <f64> v));
    }
  }
}

/** walk.ts addValues: out[h] += vals[h] (f32), h < n. */
function addValues(vals: usize, n: i32, out: usize): void {
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const o = <usize> i << 2;
    v128.store(out + o, f32x4.add(v128.load(out + o), v128.load(vals + o)));
  }
  for (; i < n; i++) {
    const o = <usize> i << 2;
    store<f32>(out + o, load<f32>(out + o) + load<f32>(vals + o));
  }
}

/**
 * Root values of player p's hands under the average strategy (the normalized cumulative
 * strategy: regret matching of the strategy store, the same f64 sums and divisions as
 * CfrSolver.average on nonnegative sums) to `outE`, and of p's best response to it to `outB`:
 * TreeEvaluator.rootValues (src/cfr/evaluate.ts) in both modes with the solver's average policy,
 * bit-identical. One walk serves both: the opponent's reach, the subtrees skipped and the
 * terminals are the same in the two modes; only p's own nodes differ (max or mix of the values).
 * Opponent reach at `opp`.
 */
export function evaluate(p: i32, opp: usize, outB: usize, outE: usize, ph: i32): void {
  phase = ph;
  evalVisit(0, 0, p, opp, outB, outE);
}

/**
/**
 * CfrSolver.average of block `b` (A x H) of the strategy store, i.e. the normalized cumulative
 * strategy (regret matching of the nonnegative sums, as evalVisit reads it), written to the depth-0
 * strategy scratch (unused between walks), whose byte offset it returns.
 */
export function average(b: u32, A: i32, H: i32): usize {
  const out = depth0 + wideB, blk = <usize> load<u32>(offsets + (<usize> b << 2)) << 2;
  const dec = out + wideB + reachB + actB;
  regretMatch(strategyAt(<i32> b, blk, A * H, dec), out, A, H, sum, den);
  return out;
}

/**
 * evaluate started at node `n` (any node) of depth `d` with the opponent reach there at `opp`,
 * both modes' values to outB and outE: a threaded walk's evaluation task (an outcome of a first
 * chance node), and the results' per-node values below the first street.
 */
export function evaluateAt(n: u32, d: u32, p: i32, opp: usize, outB: usize, outE: usize): void {
  phase = PHASE_WHOLE;
  evalVisit(n, d, p, opp, outB, outE);
}

/**
 * A threaded walk's evaluation task (see `task`): outcome n at depth d for p, its opponent reach
 * from its chance node's (skipped, its row marked -1, where no hand of it is left), both modes'
 * values to its task rows, then outcomeDone.
 */
export function evalTask(n: u32, d: u32, p: i32): void {
  const ch = outcomeRecord(n), j = parentOf(ch), k = <usize> taskOf(ch);
  if (load<i32>(jCn + (j << 2)) < 0) return;
  phase = PHASE_WHOLE;
  const vals = depth0 + <usize> (d - 1) * depthB, r = vals + 2 * wideB, row = (k * tStride) << 2;
  outcomeReach(ch, 1 - p, jOpp + ((j * tStride) << 2), r);
  const seen = anyPositive(r, p ? H0 : H1);
  store<i32>(tCn + (k << 2), seen ? 1 : -1);
  if (seen) evalVisit(n, d, p, r, tOut + row, tOutE + row);
  outcomeDone(j, p, true);
}

function evalVisit(n: u32, d: u32, p: i32, opp: usize, outB: usize, outE: usize): void {
  const reach = phase == PHASE_REACH;
  const rec = nodes + (<usize> n << 4);
  const first = load<u32>(rec), info = load<u32>(rec, 4);
  const kind = (info >> 16) & 0xff, A = info & 0xffff;
  const H = p ? H1 : H0;
  if (kind == K_TERMINAL) {
    if (reach) return;
    terminal(load<i32>(rec, 8), p, opp, outB);
    memory.copy(outE, outB, <usize> H << 2);
    return;
  }
  const vals = depth0 + <usize> d * depthB, sig = vals + wideB;
  const r = sig + wideB, valsE = r + reachB + actB;
  if (kind == K_CHANCE && phase != PHASE_WHOLE && taskOf(outcomeRecord(first)) >= 0) {
    const j = parentOf(outcomeRecord(first)), row = (j * tStride) << 2;
    if (reach) chanceInputs(j, p, opp, 0, 1, <i32> A);
    else {
      memory.copy(outB, jOut + row, <usize> H << 2);
      memory.copy(outE, jOutE + row, <usize> H << 2);
    }
    return;
  }
  if (kind == K_CHANCE) {
    memory.fill(outB, 0, <usize> H << 2);
    memory.fill(outE, 0, <usize> H << 2);
    const Ho = p ? H0 : H1;
    for (let c = first; c < first + A; c++) {
      const ch = chance + (<usize> load<u32>(nodes + (<usize> c << 4), 12) << 5);
      outcomeReach(ch, 1 - p, opp, r);
      if (!anyPositive(r, Ho)) continue;
      evalVisit(c, d + 1, p, r, vals, valsE);
      addChance(ch, p, vals, outB);
      addChance(ch, p, valsE, outE);
    }
    return;
  }
  const q = <i32> (info >> 24), Hq = q ? H1 : H0;
  const bi = load<i32>(rec, 8), len = <i32> A * Hq;
  const blk = <usize> load<u32>(offsets + (<usize> bi << 2)) << 2;
  // A quantized strategy decodes into valsE, read before the children write their values there.
  if (q != p) {
    // As in visit: row a of sig holds the opponent's reach through action a.
    regretMatchReach(strategyAt(bi, blk, len, valsE), sig, A, Hq, opp);
    if (!reach) {
      memory.fill(outB, 0, <usize> H << 2);
      memory.fill(outE, 0, <usize> H << 2);
    }
    for (let a: u32 = 0; a < A; a++) {
      const ra = sig + (<usize> (a * Hq) << 2);
      if (!anyPositive(ra, Hq)) continue;
      evalVisit(first + a, d + 1, p, ra, vals, valsE);
      if (reach) continue;
      addValues(vals, H, outB);
      addValues(valsE, H, outE);
    }
    return;
  }
  if (reach) {
    for (let a: u32 = 0; a < A; a++) evalVisit(first + a, d + 1, p, opp, vals, valsE);
    return;
  }
  regretMatch(strategyAt(bi, blk, len, valsE), sig, A, Hq, sum, den);
  for (let a: u32 = 0; a < A; a++) {
    const row = <usize> (a * H) << 2;
    evalVisit(first + a, d + 1, p, opp, vals + row, valsE + row);
  }
  maxValues(vals, A, H, outB);
  mixValues(sig, valsE, A, H, outE);
}

/** Whether a four-element chunk of x[0, n) (rounded up to 4) has a bit set (see regretMatchReach). */
function anyBits(x: usize, n: i32): bool {
  for (let i = 0; i < n; i += 4) if (v128.any_true(v128.load(x + (<usize> i << 2)))) return true;
  return false;
}

/** walk.ts anyPositive: whether some x[i] > 0, i < n. */
function anyPositive(x: usize, n: i32): bool {
  for (let i = 0; i < n; i++) if (load<f32>(x + (<usize> i << 2)) > 0) return true;
  return false;
}

/**
 * walk.ts maxValues: out[h] = max over actions in order of vals[a * H + h] (from -Infinity), four
 * hands at a time: f32x4.pmax(m, x) is x > m ? x : m lane by lane, the scalar step exactly.
 */
function maxValues(vals: usize, A: u32, H: i32, out: usize): void {
  const H4 = H & ~3, stride = <usize> H << 2;
  let h = 0;
  for (; h < H4; h += 4) {
    const col = <usize> h << 2;
    let m = f32x4.splat(-Infinity);
    let v = vals + col;
    for (let a: u32 = 0; a < A; a++, v += stride) m = f32x4.pmax(m, v128.load(v));
    v128.store(out + col, m);
  }
  for (; h < H; h++) {
    let m: f32 = -Infinity;
    for (let a: u32 = 0; a < A; a++) {
      const x = load<f32>(vals + (<usize> (<i32> a * H + h) << 2));
      if (x > m) m = x;
    }
    store<f32>(out + (<usize> h << 2), m);
  }
}

/**
 * walk.ts mixValues: out[h] = sum over actions in order of sig * vals in f32 (each product and
 * partial sum rounded, as the scalar twin's frounds), four hands per f32x4, each hand's actions in
 * order.
 */
function mixValues(sig: usize, vals: usize, A: u32, H: i32, out: usize): void {
  const H4 = H & ~3, stride = <usize> H << 2;
  let h = 0;
  for (; h < H4; h += 4) {
    const col = <usize> h << 2;
    let m = f32x4.splat(0);
    let s0 = sig + col, v0 = vals + col;
    for (let a: u32 = 0; a < A; a++, s0 += stride, v0 += stride) {
      m = f32x4.add(m, f32x4.mul(v128.load(s0), v128.load(v0)));
    }
    v128.store(out + col, m);
  }
  for (; h < H; h++) {
    let s: f32 = 0;
    for (let a: u32 = 0; a < A; a++) {
      const o = <usize> (<i32> a * H + h) << 2;
      s += load<f32>(sig + o) * load<f32>(vals + o);
    }
    store<f32>(out + (<usize> h << 2), s);
  }
}
