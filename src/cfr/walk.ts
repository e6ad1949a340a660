import type { CfrGame } from "./game.ts";
import type { PublicTree } from "./tree.ts";

const fround = Math.fround;

export { addChanceChildValues } from "./tree.ts";

/*
 * The steps of one tree walk, shared by every traversal of a PublicTree: training (CfrSolver and
 * its worker threads), evaluation (TreeEvaluator: best response, profile EVs, equities) and the
 * per-node export (poker/results.ts, through TreeEvaluator.nodeValues). A walk computes, for one
 * player p (the traverser) and opponent o = 1 - p, the unnormalized counterfactual values of p's
 * hands at a start node given o's reach there; it may start at any node.
 *
 * In level order (the order a GPU backend runs them, one dispatch per level over node x hand):
 *
 * 1. Reach, top down. A child's opponent reach is its parent's, except
 *    - below an opponent node (player[n] === o), action a: r[h] = opp[h] * sigma[a * Ho + h]
 *      (`actionReach`; sigma is the node's strategy block, action-major);
 *    - below a chance node, outcome c: r[h] = opp[h], and 0 for the hands of o listed in
 *      blockedHands[o][blockedStart[o][c] .. blockedStart[o][c + 1]) (`outcomeReach`).
 *    Training also carries p's own reach and active-hand flags, zeroed the same way for p's
 *    blocked hands (`outcomeTraverser`).
 * 2. Terminals: the game's terminalValues (or terminalEquity) of terminal[n] for p against the
 *    node's opponent reach (`terminalStep`).
 * 3. Values, bottom up. The children of n are firstChild[n] .. firstChild[n] + numChildren[n]:
 *    - p's own node: out[h] = sum_a sigma[a * H + h] * v_a[h] in f64, actions in order
 *      (`mixValues`), or max_a v_a[h] for a best response (`maxValues`);
 *    - an opponent node: out[h] = sum_a v_a[h] (`addValues`);
 *    - a chance node: out[h] = sum_c (chanceWeight[c] * v_c[h] + sum over c's isomorphs k of
 *      isoWeight[k] * v_c[permutations[isoPerm[p][k]][h]]), with v_c zeroed first on p's hands
 *      blocked by c (`addChanceChildValues`); c's isomorphs are k in [isoStart[c],
 *      isoStart[c + 1]). The isomorphs stand for outcomes whose subtrees are not built:
 *      forgetting them is the bug class of issue 19.
 * 4. Training only, at p's own node n, after step 3: instant regrets v_a[h] - out[h] (0 for
 *    inactive hands) go into storage block block[n] (blockSize[block[n]] = actions x H elements,
 *    element a * H + h) through the algorithm's discounted update, and sigma into the cumulative
 *    strategy block of the same index (CfrSolver.update).
 *
 * The CPU walks run the same steps depth first, with one scratch vector per depth.
 */

/** Terminal `n`: the game's values (or pot shares, with `equity`) of p's hands against `opp`. */
export function terminalStep(
  game: CfrGame,
  tree: PublicTree,
  n: number,
  p: 0 | 1,
  opp: Float32Array,
  out: Float32Array,
  off: number,
  equity: boolean,
): void {
  if (equity) game.terminalEquity!(tree.terminal[n], p, opp, out, off);
  else game.terminalValues(tree.terminal[n], p, opp, out, off);
}

/**
 * Opponent reach entering chance outcome `c`: dst[dOff + i] = opp[i] for o's hands, 0 for those
 * the outcome blocks.
 */
export function outcomeReach(
  t: PublicTree,
  c: number,
  o: 0 | 1,
  opp: Float32Array,
  dst: Float32Array,
  dOff: number,
): void {
  const Ho = t.numHands[o], bs = t.blockedStart[o], bh = t.blockedHands[o];
  for (let i = 0; i < Ho; i++) dst[dOff + i] = opp[i];
  for (let i = bs[c]; i < bs[c + 1]; i++) dst[dOff + bh[i]] = 0;
}

/**
 * The traverser's side of chance outcome `c` (training): own reach and active flags copied to
 * sr/ca at `off`, zeroed for the hands the outcome blocks; returns the active-hand count there.
 */
export function outcomeTraverser(
  t: PublicTree,
  c: number,
  p: 0 | 1,
  self: Float32Array,
  act: Uint8Array,
  nAct: number,
  sr: Float32Array,
  ca: Uint8Array,
  off: number,
): number {
  const H = t.numHands[p], ss = t.blockedStart[p], sh = t.blockedHands[p];
  for (let h = 0; h < H; h++) sr[off + h] = self[h], ca[off + h] = act[h];
  let cn = nAct;
  for (let i = ss[c]; i < ss[c + 1]; i++) {
    const h = off + sh[i];
    if (ca[h]) cn--;
    ca[h] = 0, sr[h] = 0;
  }
  return cn;
}

/** Opponent reach below action `a` of an opponent node: r[i] = opp[i] * sig[a * Hq + i]. */
export function actionReach(
  opp: Float32Array,
  sig: Float32Array,
  a: number,
  Hq: number,
  r: Float32Array,
): void {
  const row = a * Hq;
  for (let i = 0; i < Hq; i++) r[i] = opp[i] * sig[row + i];
}

/** Whether any of the first n entries is positive (a subtree nobody reaches has values 0). */
export function anyPositive(x: Float32Array, n: number, off = 0): boolean {
  for (let i = off; i < off + n; i++) if (x[i] > 0) return true;
  return false;
}

/**
 * Value of the acting player's node: out[off + h] = sum over actions in order of
 * sig[a * H + h] * vals[a * H + h], in f32 arithmetic (each product and each partial sum rounded to
 * f32, as the Wasm kernels' f32x4 lanes; `acc`, length >= H, holds the running sums).
 */
export function mixValues(
  sig: Float32Array,
  vals: Float32Array,
  A: number,
  H: number,
  acc: Float64Array,
  out: Float32Array,
  off: number,
): void {
  for (let h = 0; h < H; h++) acc[h] = 0;
  for (let a = 0; a < A; a++) {
    const row = a * H;
    for (let h = 0; h < H; h++) acc[h] = fround(acc[h] + fround(sig[row + h] * vals[row + h]));
  }
  for (let h = 0; h < H; h++) out[off + h] = acc[h];
}

/** Best-response value of the acting player's node: out[off + h] = max over actions of vals[a * H + h]. */
export function maxValues(
  vals: Float32Array,
  A: number,
  H: number,
  acc: Float64Array,
  out: Float32Array,
  off: number,
): void {
  for (let h = 0; h < H; h++) acc[h] = -Infinity;
  for (let a = 0; a < A; a++) {
    const row = a * H;
    for (let h = 0; h < H; h++) {
      const x = vals[row + h];
      if (x > acc[h]) acc[h] = x;
    }
  }
  for (let h = 0; h < H; h++) out[off + h] = acc[h];
}

/** Opponent node: adds one child's values, out[off + h] += vals[h]. */
export function addValues(vals: Float32Array, H: number, out: Float32Array, off: number): void {
  for (let h = 0; h < H; h++) out[off + h] += vals[h];
}
