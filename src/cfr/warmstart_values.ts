import { KibitzError } from "../errors.ts";
import { encodeBlock, type RoundingKey } from "../quant/mod.ts";
import { type CfrPolicy, policyExploitability, TreeEvaluator } from "./evaluate.ts";
import { regretsNonNegative } from "./schedule.ts";
import type { CfrSolver } from "./solver.ts";
import {
  addChanceChildValues,
  CFR_CHANCE,
  CFR_PLAYER,
  CFR_TERMINAL,
  type PublicTree,
} from "./tree.ts";
import { labelMapper, type WarmStartMapper } from "./warmstart.ts";

// Strategy-based warm start (Brown & Sandholm, "Strategy-Based Warm Starting for Regret Minimization
// in Games", AAAI 2016). The small tree's average strategy is mapped into the large tree (each large
// node takes its strategy from the small node the parallel walk pairs it with; bets split by the
// mapper's weights; a large subtree with no exact counterpart, e.g. the responses to a size the
// small tree lacks, takes the nearest small subtree's behaviour). That profile sigma is evaluated once
// in the large tree for both players, and every regret, new actions included, is set to
// W * (v(a) - v(node)) per hand with v the counterfactual values against sigma, and the cumulative
// strategy to W * sigma: the state W iterations that all played sigma would leave. New actions
// therefore start from their true value against the warm strategy instead of an interpolated guess.

/**
 * For every large-tree node, the small-tree node it is paired with (-1: none): both trees are walked
 * from the roots, chance outcomes paired by label and player-node children by the mapper's `source`.
 */
export function pairNodes(
  smallTree: PublicTree,
  largeTree: PublicTree,
  mapper: WarmStartMapper = labelMapper(smallTree, largeTree),
): Int32Array {
  const st = smallTree, lt = largeTree;
  const pair = new Int32Array(lt.size).fill(-1);
  const labelIndex = new Map<string, number>();
  const stack: number[] = [0, 0];
  while (stack.length > 0) {
    const l = stack.pop()!, s = stack.pop()!;
    const kind = lt.kind[l];
    if (kind !== st.kind[s]) continue;
    if (kind === CFR_PLAYER && st.player[s] !== lt.player[l]) continue;
    pair[l] = s;
    const fs = st.firstChild[s], fl = lt.firstChild[l];
    const As = st.numChildren[s], Al = lt.numChildren[l];
    if (kind === CFR_CHANCE) {
      labelIndex.clear();
      for (let c = 0; c < As; c++) labelIndex.set(st.label[fs + c], fs + c);
      for (let c = 0; c < Al; c++) {
        const m = labelIndex.get(lt.label[fl + c]);
        if (m !== undefined) stack.push(m, fl + c);
      }
    } else if (kind === CFR_PLAYER) {
      const { source } = mapper(s, l);
      for (let b = 0; b < Al; b++) {
        const a = source[b];
        if (a >= 0 && a < As) stack.push(fs + a, fl + b);
      }
    }
  }
  return pair;
}

/** Options of mappedPolicy. */
export interface MappedPolicyOptions {
  /** Mix of the uniform strategy in every mapped node (default 0): (1 - e) * mapped + e / actions. */
  epsilon?: number;
  /** The small profile to map (default: the small solver's average strategy). */
  smallPolicy?: CfrPolicy;
  /**
   * Game-specific correction of a mapped node's strategy (out: actions x hands, columns summing to
   * 1), e.g. the responses to a bet size the small tree lacks; called before the uniform mix.
   */
  adjust?: (largeNode: number, smallNode: number, out: Float32Array) => void;
}

/**
 * The small solver's average strategy mapped into the large tree: at a paired player node the
 * probability of small action a goes to the large actions by the mapper's weights (renormalized per
 * hand; a hand whose mapped mass is 0 plays uniformly), unpaired nodes play uniformly.
 */
export function mappedPolicy(
  small: CfrSolver,
  largeTree: PublicTree,
  mapper: WarmStartMapper,
  pair: Int32Array,
  options: MappedPolicyOptions = {},
): CfrPolicy {
  const st = small.tree, lt = largeTree;
  const eps = options.epsilon ?? 0;
  if (!(eps >= 0 && eps <= 1)) {
    throw new KibitzError("bad_option", `warm start epsilon must be in [0, 1], got ${eps}`);
  }
  const smallPolicy = options.smallPolicy ?? small.averagePolicy();
  const maxH = Math.max(lt.numHands[0], lt.numHands[1]);
  const src = new Float32Array(Math.max(1, st.maxActions) * maxH);
  const mass = new Float64Array(maxH);
  return (node, out) => {
    const Al = lt.numChildren[node], H = lt.numHands[lt.player[node]];
    const s = pair[node];
    if (s < 0 || st.kind[s] !== CFR_PLAYER) {
      out.fill(1 / Al, 0, Al * H);
      return;
    }
    const As = st.numChildren[s];
    smallPolicy(s, src);
    const { weights } = mapper(s, node);
    out.fill(0, 0, Al * H);
    for (let a = 0; a < As; a++) {
      for (let b = 0; b < Al; b++) {
        const w = weights[a * Al + b];
        if (w === 0) continue;
        const ia = a * H, ib = b * H;
        for (let h = 0; h < H; h++) out[ib + h] += w * src[ia + h];
      }
    }
    mass.fill(0, 0, H);
    for (let b = 0; b < Al; b++) for (let h = 0; h < H; h++) mass[h] += out[b * H + h];
    const u = eps / Al;
    for (let h = 0; h < H; h++) {
      const m = mass[h];
      for (let b = 0; b < Al; b++) {
        const i = b * H + h;
        out[i] = m > 0 ? out[i] / m : 1 / Al;
      }
    }
    options.adjust?.(node, s, out);
    if (eps > 0) { for (let i = 0; i < Al * H; i++) out[i] = (1 - eps) * out[i] + u; }
  };
}

/**
 * The automatic W: the iterations a cold solve needs to reach the mapped strategy's exploitability,
 * read off the small solve's own convergence (exploitability ~ 1 / t through (smallIterations,
 * smallPct)): W = smallIterations * smallPct / warmPct, rounded, at least 1 and at most
 * smallIterations. A poor transfer (warmPct far above smallPct) weighs little; a transfer as good as
 * the small solve weighs as much as its iterations. This follows the paper, which bounds the weight
 * a warm strategy may carry by how close to equilibrium it is.
 */
export function autoWarmWeight(smallIterations: number, smallPct: number, warmPct: number): number {
  if (!(warmPct > 0)) return Math.max(1, Math.round(smallIterations));
  const w = (smallIterations * Math.max(0, smallPct)) / warmPct;
  return Math.min(Math.max(1, Math.round(smallIterations)), Math.max(1, Math.round(w)));
}

/** Options of warmStartFromPolicy. */
export interface ValueWarmStartOptions {
  /** W, or "auto" (default): autoWarmWeight from `reference` and the profile's exploitability. */
  weight?: number | "auto";
  /** The point (iterations, exploitability %) of a cold solve the automatic W extrapolates from. */
  reference?: { iterations: number; percent: number };
  /** Seed of the stochastic rounding when encoding (default: the solver's seed). */
  seed?: number;
  /**
   * Margin k (default 0, the paper's seeding): adds W * k * spread(h) * profile(a, h) to each regret,
   * spread(h) = max_a v(a, h) - min_a v(a, h). Regret matching on the paper's regrets is nearly pure
   * where the advantages are near 0 (as they are at an equilibrium); k > 0 pulls the first current
   * strategies towards the profile. Measured: it helps the first iterations only (README).
   */
  margin?: number;
  /**
   * Per large-tree node, a factor on W for that node's regrets and cumulative strategy (default: 1
   * everywhere), e.g. 0 where the mapped strategy is a guess (subtrees the small tree lacks), so
   * those nodes start cold while the trusted ones carry the full weight.
   */
  nodeScale?: Float32Array;
  /**
   * Actions of a node that the profile does not carry over from the small tree (1 per action, or
   * undefined for none): their seeded regret is capped at 0, so they enter the current strategy only
   * once the large tree's own iterations find them profitable (their values against the profile
   * come from responses that are guesses).
   */
  newActions?: (node: number) => Uint8Array | undefined;
}

/** What a value-based warm start did. */
export interface ValueWarmStartReport {
  /** W: regrets and cumulative strategy weigh as W iterations of the profile. */
  weight: number;
  /** The iteration the solver continues at (W rounded, at least 1). */
  startIteration: number;
  /** Exploitability of the profile in the large tree, % of the pot (NaN when W was given). */
  profilePct: number;
  /** Expected values of both players under the profile (chips per deal). */
  ev: [number, number];
  /** Player nodes whose regrets were set from values (reached with positive opponent reach). */
  nodes: number;
  /** Negative regrets set to 0 because the solver keeps regrets >= 0. */
  clipped: number;
}

const WARM_SALT = 0x2545f491, STRATEGY_SALT = 0x9e3779b9;

/**
 * Seeds `solver` (before its first iteration) from a fixed profile of its own tree: one
 * counterfactual-value pass per player sets R(a, h) = W * (v(a, h) - v(h)) at every player node the
 * opponent reaches (0 elsewhere and for hands the public cards block; clipped at 0 when the algorithm
 * floors regrets, and copied into the PDCFR+ predictions), the cumulative strategy to W * profile,
 * and the iteration counter to W. The discount schedule is left to the caller (see warmSchedule).
 */
export function warmStartFromPolicy(
  solver: CfrSolver,
  policy: CfrPolicy,
  options: ValueWarmStartOptions = {},
): ValueWarmStartReport {
  const tree = solver.tree, game = solver.game;
  let weight = options.weight ?? "auto";
  let profilePct = NaN;
  if (weight === "auto") {
    const ref = options.reference;
    if (!ref) {
      throw new KibitzError(
        "bad_option",
        `warm start weight "auto" needs the small solve's iterations and exploitability`,
      );
    }
    profilePct = policyExploitability(new TreeEvaluator(tree, game), policy).percent;
    weight = autoWarmWeight(ref.iterations, ref.percent, profilePct);
  }
  if (!(weight > 0) || !Number.isFinite(weight)) {
    throw new KibitzError(
      "bad_option",
      `warm start weight must be a positive number, got ${weight}`,
    );
  }
  const W = weight;
  const seed = options.seed ?? solver.seed;
  const walk = new ValueWalk(
    solver,
    policy,
    W,
    {
      seed: (seed ^ WARM_SALT) >>> 0,
      iteration: 0,
    },
    options.margin ?? 0,
    options.nodeScale,
    options.newActions,
  );
  const mass = solver.dealMass();
  const ev: [number, number] = [0, 0];
  for (const p of [0, 1] as const) {
    const out = new Float32Array(tree.numHands[p]);
    walk.run(p, out);
    const w = game.initialWeights(p);
    let v = 0;
    for (let h = 0; h < out.length; h++) v += w[h] * out[h];
    ev[p] = v / mass;
  }
  // Cumulative strategy: W * profile at every player node (reached or not).
  const maxH = Math.max(tree.numHands[0], tree.numHands[1]);
  const buf = new Float32Array(Math.max(1, tree.maxActions) * maxH);
  const sKey: RoundingKey = { seed: (seed ^ STRATEGY_SALT) >>> 0, iteration: 0 };
  for (let b = 0; b < tree.blockNode.length; b++) {
    const n = tree.blockNode[b], len = tree.blockSize[b];
    policy(n, buf);
    const wn = W * (options.nodeScale?.[n] ?? 1);
    for (let i = 0; i < len; i++) buf[i] = Math.fround(wn * buf[i]);
    encodeBlock(solver.strategy, b, buf, 0, sKey);
  }
  solver.iteration = Math.max(1, Math.round(W));
  return {
    weight: W,
    startIteration: solver.iteration,
    profilePct,
    ev,
    nodes: walk.nodes,
    clipped: walk.clipped,
  };
}

/** The value pass of warmStartFromPolicy: the profile's counterfactual values, regrets written. */
class ValueWalk {
  nodes = 0;
  clipped = 0;
  private readonly vals: Float32Array[] = [];
  private readonly sig: Float32Array[] = [];
  private readonly reach: Float32Array[] = [];
  private readonly act: Uint8Array[] = [];
  private readonly acc: Float64Array;
  private readonly reg: Float32Array;
  private readonly clip: boolean;

  constructor(
    private readonly solver: CfrSolver,
    private readonly policy: CfrPolicy,
    private readonly W: number,
    private readonly key: RoundingKey,
    private readonly margin: number,
    private readonly nodeScale?: Float32Array,
    private readonly newActions?: (node: number) => Uint8Array | undefined,
  ) {
    const t = solver.tree;
    const maxH = Math.max(t.numHands[0], t.numHands[1]);
    const wide = Math.max(1, t.maxActions) * maxH;
    for (let d = 0; d < t.levels; d++) {
      this.vals.push(new Float32Array(wide));
      this.sig.push(new Float32Array(wide));
      this.reach.push(new Float32Array(maxH));
      this.act.push(new Uint8Array(maxH));
    }
    this.acc = new Float64Array(maxH);
    this.reg = new Float32Array(wide);
    this.clip = regretsNonNegative(solver.algorithm);
  }

  run(p: 0 | 1, out: Float32Array): void {
    const g = this.solver.game;
    const act = new Uint8Array(this.solver.tree.numHands[p]).fill(1);
    this.visit(0, 0, p, g.initialWeights((1 - p) as 0 | 1), act, out, 0);
  }

  private visit(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    act: Uint8Array,
    out: Float32Array,
    off: number,
  ): void {
    const t = this.solver.tree, H = t.numHands[p];
    const kind = t.kind[n];
    if (kind === CFR_TERMINAL) {
      this.solver.game.terminalValues(t.terminal[n], p, opp, out, off);
      return;
    }
    const first = t.firstChild[n], A = t.numChildren[n];
    const vals = this.vals[d], r = this.reach[d];
    if (kind === CFR_CHANCE) {
      out.fill(0, off, off + H);
      const o = 1 - p, Ho = t.numHands[o];
      const bs = t.blockedStart[o], bh = t.blockedHands[o];
      const ss = t.blockedStart[p], sh = t.blockedHands[p];
      const ca = this.act[d];
      for (let c = first; c < first + A; c++) {
        for (let i = 0; i < Ho; i++) r[i] = opp[i];
        for (let i = bs[c]; i < bs[c + 1]; i++) r[bh[i]] = 0;
        if (!anyPositive(r, Ho)) continue;
        for (let h = 0; h < H; h++) ca[h] = act[h];
        for (let i = ss[c]; i < ss[c + 1]; i++) ca[sh[i]] = 0;
        this.visit(c, d + 1, p, r, ca, vals, 0);
        addChanceChildValues(t, c, p, vals, out, off);
      }
      return;
    }
    const q = t.player[n], sig = this.sig[d];
    this.policy(n, sig);
    if (q !== p) {
      const Hq = t.numHands[q];
      out.fill(0, off, off + H);
      for (let a = 0; a < A; a++) {
        let any = false;
        for (let i = 0; i < Hq; i++) {
          const x = opp[i] * sig[a * Hq + i];
          r[i] = x;
          if (x > 0) any = true;
        }
        if (!any) continue;
        this.visit(first + a, d + 1, p, r, act, vals, 0);
        for (let h = 0; h < H; h++) out[off + h] += vals[h];
      }
      return;
    }
    for (let a = 0; a < A; a++) this.visit(first + a, d + 1, p, opp, act, vals, a * H);
    const acc = this.acc;
    for (let h = 0; h < H; h++) acc[h] = 0;
    for (let a = 0; a < A; a++) {
      for (let h = 0; h < H; h++) acc[h] += sig[a * H + h] * vals[a * H + h];
    }
    for (let h = 0; h < H; h++) out[off + h] = acc[h];
    const reg = this.reg, W = this.W * (this.nodeScale?.[n] ?? 1), k = this.margin;
    for (let h = 0; h < H; h++) {
      // Spread of the action values of hand h (the stakes of its decision), for the margin.
      let lo = Infinity, hi = -Infinity;
      for (let a = 0; a < A; a++) {
        const x = vals[a * H + h];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      acc[h] = k * (hi - lo);
    }
    const fresh = this.newActions?.(n);
    for (let a = 0; a < A; a++) {
      const cap = fresh !== undefined && fresh[a] === 1;
      for (let h = 0; h < H; h++) {
        const i = a * H + h;
        let x = act[h] === 0 ? 0 : Math.fround(W * (vals[i] - out[off + h] + acc[h] * sig[i]));
        if (cap && x > 0) x = 0;
        if (this.clip && x < 0) (x = 0), this.clipped++;
        reg[i] = x;
      }
    }
    const b = t.block[n];
    encodeBlock(this.solver.regrets, b, reg, 0, this.key);
    if (this.solver.predicted) encodeBlock(this.solver.predicted, b, reg, 0, this.key);
    this.nodes++;
  }
}

function anyPositive(x: Float32Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (x[i] > 0) return true;
  return false;
}

/** How a warm-started run's discount schedule treats the reference schedule's average resets. */
export type WarmResets = "continue" | "none" | "keep";

/**
 * Makes `solver`'s schedule continue from the warm start at iteration W (call before its first
 * run: worker threads copy the options when they start). The reference DCFR schedule zeroes the
 * strategy sum at t = 1, 4, 16, 64, ...; a run that starts at W holds W iterations' worth of average
 * strategy, so "continue" (the default) lets only the powers of 4 at or above 4 W reset it: by then
 * the warm part weighs (1/4)^gamma of what it did at W next to 3 W real iterations, so the reset drops
 * the early full-tree iterations (its purpose) without throwing away a start that still counts.
 * "none" never resets; "keep" leaves the schedule as it is (resets at 16 and 64 erase a start at
 * W = 10). Returns the first iteration that may reset (Infinity: none).
 */
export function warmSchedule(
  solver: CfrSolver,
  W: number,
  resets: WarmResets = "continue",
): number {
  if (resets === "keep" || !solver.discount.resetPow4) return solver.discount.resetFrom ?? 0;
  const from = resets === "none" ? Infinity : 4 * Math.max(1, Math.round(W));
  solver.discount.resetFrom = from;
  solver.options.discount = { ...solver.options.discount, resetFrom: from };
  return from;
}
