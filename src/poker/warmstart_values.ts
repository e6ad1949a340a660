import {
  mappedPolicy,
  pairNodes,
  type ValueWarmStartReport,
  type WarmResets,
  warmSchedule,
  warmStartFromPolicy,
} from "../cfr/warmstart_values.ts";
import { CFR_PLAYER, type PublicTree } from "../cfr/tree.ts";
import { ACT_ALLIN, ACT_BET, ACT_FOLD, ACT_RAISE, type ActionTree } from "./action_tree.ts";
import {
  pairedDecisionNodes,
  pokerMapper,
  type PokerMapperOptions,
  pokerTreeActions,
  type PostflopSide,
  validateWarmStartGames,
} from "./warmstart.ts";

// Hold'em side of the strategy-based warm start (warmstart_method = "values"): the small tree's
// average strategy is mapped into the full tree with the pot-fraction mapper of the regret transfer
// (the responses to a size the small tree lacks, and everything below them, are copied from the
// nearest small size: "copy", the default, measured least exploitable on spot T2 (37.1 % of the pot
// against 42.6 % with "pot-odds" and 58.5 % with "rank"; README), because a copied subtree stays
// consistent with the ranges its later streets were solved for), then the full tree's regrets are
// set from that profile's counterfactual values (src/cfr/warmstart_values.ts).

/** How the responses to a bet size the small tree lacks are derived from the nearest size's. */
export type WarmResponses = "copy" | "pot-odds" | "rank";

function aggressive(kind: number): boolean {
  return kind === ACT_BET || kind === ACT_RAISE || kind === ACT_ALLIN;
}

/**
 * The "pot-odds" correction of mapped responses: facing a bet of pot fraction f whose responses were
 * copied from those to the small tree's size g, each hand folds fold_g * a(f) / a(g) of the time
 * (at most 1), a(x) = x / (1 + x) being the share of the pot a bluff must win to break even, and its
 * other actions keep their proportions. A smaller bet is so defended more, a larger one less, as
 * the bettor's odds require; copied unchanged, the responses to 66 % would fold as often to 33 %.
 */
export function potOddsResponses(
  small: { tree: PublicTree; actionTree: ActionTree },
  large: { tree: PublicTree; actionTree: ActionTree },
): (largeNode: number, smallNode: number, out: Float32Array) => void {
  const sa = pokerTreeActions(small.tree, small.actionTree);
  const la = pokerTreeActions(large.tree, large.actionTree);
  const lt = large.tree;
  return (l, s, out) => {
    if (!aggressive(la.kind[l]) || !aggressive(sa.kind[s])) return;
    const f = la.frac[l], g = sa.frac[s];
    if (!(g > 0) || Math.abs(f - g) <= 1e-9) return;
    const A = lt.numChildren[l], H = lt.numHands[lt.player[l]], first = lt.firstChild[l];
    let fold = -1;
    for (let b = 0; b < A; b++) if (la.kind[first + b] === ACT_FOLD) fold = b;
    if (fold < 0) return;
    const k = (f / (1 + f)) / (g / (1 + g));
    for (let h = 0; h < H; h++) {
      const old = out[fold * H + h];
      const now = Math.min(1, old * k);
      const rest = 1 - old;
      for (let b = 0; b < A; b++) {
        if (b === fold) continue;
        const i = b * H + h;
        // Other actions keep their proportions; a hand that always folded now calls (the first
        // non-fold action) with what it no longer folds.
        out[i] = rest > 0
          ? (out[i] * (1 - now)) / rest
          : (b === (fold === 0 ? 1 : 0) ? 1 - now : 0);
      }
      out[fold * H + h] = now;
    }
  };
}

/**
 * The "rank" correction of mapped responses: facing a bet of pot fraction f whose responses were
 * copied from those to size g, the fold frequency of the responder's range (its reach at the node
 * under the mapped strategy) is scaled by a(f) / a(g) as in "pot-odds", but the change goes to the
 * marginal hands first: a smaller bet turns into calls the folds of the hands that folded least
 * (mixed hands before pure folds), a larger bet into folds the calls of the hands that folded most.
 * Scaling every hand's fold alike would make the weakest hands call a small bet; here the range
 * keeps its order. `reach(node, player, out)` gives the responder's reach per hand.
 */
export function rankResponses(
  small: { tree: PublicTree; actionTree: ActionTree },
  large: { tree: PublicTree; actionTree: ActionTree },
  reach: (node: number, player: 0 | 1, out: Float32Array) => void,
): (largeNode: number, smallNode: number, out: Float32Array) => void {
  const sa = pokerTreeActions(small.tree, small.actionTree);
  const la = pokerTreeActions(large.tree, large.actionTree);
  const lt = large.tree;
  const maxH = Math.max(lt.numHands[0], lt.numHands[1]);
  const r = new Float32Array(maxH), fold = new Float64Array(maxH);
  return (l, s, out) => {
    if (!aggressive(la.kind[l]) || !aggressive(sa.kind[s])) return;
    const f = la.frac[l], g = sa.frac[s];
    if (!(g > 0) || Math.abs(f - g) <= 1e-9) return;
    const q = lt.player[l] as 0 | 1;
    const A = lt.numChildren[l], H = lt.numHands[q], first = lt.firstChild[l];
    let fi = -1;
    for (let b = 0; b < A; b++) if (la.kind[first + b] === ACT_FOLD) fi = b;
    if (fi < 0) return;
    reach(l, q, r);
    let total = 0, F = 0;
    for (let h = 0; h < H; h++) {
      fold[h] = out[fi * H + h];
      total += r[h];
      F += r[h] * fold[h];
    }
    if (!(total > 0)) return;
    const k = (f / (1 + f)) / (g / (1 + g));
    const target = Math.min(total, F * k);
    const order = Array.from({ length: H }, (_, h) => h).filter((h) => r[h] > 0);
    const now = Float64Array.from(fold.subarray(0, H));
    if (target < F) {
      // Unfold from the hands that fold least (but fold some).
      order.sort((x, y) => fold[x] - fold[y]);
      let need = F - target;
      for (let i = 0; i < order.length && need > 0;) {
        let j = i;
        let m = 0;
        while (j < order.length && fold[order[j]] === fold[order[i]]) {
          m += r[order[j]] * fold[order[j++]];
        }
        const share = m > 0 ? Math.min(1, need / m) : 0;
        for (let t = i; t < j; t++) now[order[t]] = fold[order[t]] * (1 - share);
        need -= share * m;
        i = j;
      }
    } else {
      // Fold more from the hands that fold most (but call some).
      order.sort((x, y) => fold[y] - fold[x]);
      let need = target - F;
      for (let i = 0; i < order.length && need > 0;) {
        let j = i;
        let m = 0;
        while (j < order.length && fold[order[j]] === fold[order[i]]) {
          m += r[order[j]] * (1 - fold[order[j++]]);
        }
        const share = m > 0 ? Math.min(1, need / m) : 0;
        for (let t = i; t < j; t++) now[order[t]] = fold[order[t]] + (1 - fold[order[t]]) * share;
        need -= share * m;
        i = j;
      }
    }
    for (let h = 0; h < H; h++) {
      const old = fold[h], nw = now[h], rest = 1 - old;
      for (let b = 0; b < A; b++) {
        if (b === fi) continue;
        const i = b * H + h;
        out[i] = rest > 0 ? (out[i] * (1 - nw)) / rest : (b === (fi === 0 ? 1 : 0) ? 1 - nw : 0);
      }
      out[fi * H + h] = nw;
    }
  };
}

/**
 * Own reach of a player at a node of `tree` under `policy`: the product of its action probabilities
 * on the path, 0 for hands the path's public cards block (initial range weights included).
 */
export function pathReach(
  tree: PublicTree,
  weights: (p: 0 | 1) => Float32Array,
  policy: (node: number, out: Float32Array) => void,
): (node: number, player: 0 | 1, out: Float32Array) => void {
  const maxH = Math.max(tree.numHands[0], tree.numHands[1]);
  const buf = new Float32Array(Math.max(1, tree.maxActions) * maxH);
  return (node, q, out) => {
    const H = tree.numHands[q];
    out.set(weights(q).subarray(0, H));
    for (let c = node; c > 0; c = tree.parent[c]) {
      const p = tree.parent[c];
      const bs = tree.blockedStart[q], bh = tree.blockedHands[q];
      for (let i = bs[c]; i < bs[c + 1]; i++) out[bh[i]] = 0;
      if (tree.kind[p] === CFR_PLAYER && tree.player[p] === q) {
        policy(p, buf);
        const a = c - tree.firstChild[p];
        for (let h = 0; h < H; h++) out[h] *= buf[a * H + h];
      }
    }
  };
}

/** Options of warmStartPostflopValues. */
export interface PostflopValueWarmStartOptions extends PokerMapperOptions {
  /** W, or "auto" (default): from the mapped strategy's exploitability in the full tree. */
  weight?: number | "auto";
  /** Iterations of the small solve (default: its solver's count); the automatic W's reference. */
  smallIterations?: number;
  /** The small solve's exploitability in % of the pot (default: measured now). */
  smallPct?: number;
  /** Uniform mix in the mapped strategy (default 0). */
  epsilon?: number;
  /** Average resets of the continued schedule (default "continue"). */
  resets?: WarmResets;
  /** Responses to sizes the small tree lacks (default "copy", measured best; see WarmResponses). */
  responses?: WarmResponses;
  /** Regret margin k (default 0), see ValueWarmStartOptions.margin. */
  margin?: number;
  /**
   * Factor on W at full-tree nodes off the small tree's lines (reached through a size the small tree
   * lacks, where the mapped strategy is copied from the nearest size; default 1). 0 starts them cold.
   */
  offLine?: number;
  /**
   * Regrets of the actions the small tree lacks (new bet sizes, raises that map to nothing): "value"
   * (default) W * (v(a) - v) like the others; "capped" at most 0 (see ValueWarmStartOptions.newActions).
   */
  newActions?: "value" | "capped";
}

/** What a value-based postflop warm start did. */
export interface PostflopValueWarmStartReport extends ValueWarmStartReport {
  /** Full-tree player nodes paired with a small-tree node (the rest play uniformly). */
  paired: number;
  /** Player nodes of the full tree. */
  playerNodes: number;
  /** First iteration whose power of 4 may reset the average (Infinity: none). */
  resetFrom: number;
}

/**
 * Validates the pair, maps the small solve's average strategy into the large tree, and seeds the
 * large solver's regrets, cumulative strategy, iteration and schedule from that profile's values.
 */
export function warmStartPostflopValues(
  small: PostflopSide,
  large: PostflopSide,
  options: PostflopValueWarmStartOptions = {},
): PostflopValueWarmStartReport {
  validateWarmStartGames(small.game, large.game);
  const st = small.solver.tree, lt = large.solver.tree;
  const mapper = pokerMapper(
    { tree: st, actionTree: small.game.tree },
    { tree: lt, actionTree: large.game.tree },
    options,
  );
  const pair = pairNodes(st, lt, mapper);
  const paired = pairedDecisionNodes(lt, pair);
  const responses = options.responses ?? "copy";
  const S = { tree: st, actionTree: small.game.tree },
    L = { tree: lt, actionTree: large.game.tree };
  // The reach of "rank" follows the mapped strategy before any correction (responses upstream of
  // a node are then copies; the correction only reorders folds within each node).
  const plain = responses === "rank" ? mappedPolicy(small.solver, lt, mapper, pair) : undefined;
  const adjust = responses === "pot-odds"
    ? potOddsResponses(S, L)
    : plain
    ? rankResponses(S, L, pathReach(lt, (p) => large.game.initialWeights(p), plain))
    : undefined;
  const policy = mappedPolicy(small.solver, lt, mapper, pair, {
    epsilon: options.epsilon,
    adjust,
  });
  const weight = options.weight ?? "auto";
  const reference = weight === "auto"
    ? {
      iterations: options.smallIterations ?? small.solver.iteration,
      percent: options.smallPct ?? small.solver.exploitability().percent,
    }
    : undefined;
  const offLine = options.offLine ?? 1;
  let nodeScale: Float32Array | undefined;
  if (offLine !== 1) {
    const exact = pairNodes(
      st,
      lt,
      pokerMapper(
        { tree: st, actionTree: small.game.tree },
        { tree: lt, actionTree: large.game.tree },
        { ...options, subtrees: "matched" },
      ),
    );
    nodeScale = new Float32Array(lt.size);
    for (let n = 0; n < lt.size; n++) nodeScale[n] = exact[n] >= 0 ? 1 : offLine;
  }
  let newActions: ((node: number) => Uint8Array | undefined) | undefined;
  if (options.newActions === "capped") {
    newActions = (l) => {
      const s = pair[l];
      if (s < 0 || st.kind[s] !== CFR_PLAYER) return undefined;
      const { weights } = mapper(s, l);
      const As = st.numChildren[s], Al = lt.numChildren[l];
      const out = new Uint8Array(Al);
      for (let b = 0; b < Al; b++) {
        let w = 0;
        for (let a = 0; a < As; a++) w += weights[a * Al + b];
        out[b] = w > 0 ? 0 : 1;
      }
      return out;
    };
  }
  const rep = warmStartFromPolicy(large.solver, policy, {
    weight,
    reference,
    margin: options.margin,
    nodeScale,
    newActions,
  });
  const resetFrom = warmSchedule(large.solver, rep.weight, options.resets);
  return { ...rep, paired, playerNodes: lt.blockNode.length, resetFrom };
}
