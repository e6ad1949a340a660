import { KibitzError } from "../errors.ts";
import type { CfrGame } from "./game.ts";
import { CFR_CHANCE, CFR_TERMINAL, type PublicTree } from "./tree.ts";
import {
  actionReach,
  addChanceChildValues,
  addValues,
  anyPositive,
  maxValues,
  mixValues,
  outcomeReach,
  terminalStep,
} from "./walk.ts";
import type { ChanceTasks } from "./tasks.ts";

/**
 * Runs the evaluation tasks of one traversal on every thread (see TreeEvaluator.parallel): each
 * task calls TreeEvaluator.runTask with the same policy on its thread.
 */
export type EvalTaskRunner = (player: 0 | 1, br: boolean) => void;

/**
 * A strategy profile: writes the strategy of player node `node` into out[a * hands + h] (actions x
 * hands of the acting player; each hand's column sums to 1).
 */
export type CfrPolicy = (node: number, out: Float32Array) => void;

/**
 * Root values of a policy computed by other means (a CfrTrainer walking the solver's average
 * strategy), bit-identical to TreeEvaluator's walk over `tree`: both players' best response and
 * profile values of player p. A policy that carries one (as `rootValues`) is evaluated by it.
 */
export interface PolicyRootValues {
  tree: PublicTree;
  values(p: 0 | 1, best: Float32Array, profile: Float32Array): void;
  /**
   * The same walk started at node `n` (depth `d`) with the opponent reach `opp` there, where the
   * other means offer it: TreeEvaluator then hands it every chance node it reaches (nodeValues'
   * walks of the results, which report player nodes above the chance nodes only).
   */
  nodeValues?: NodeValues;
}

/** Both modes' values of p's hands from node `n` (depth `d`) with the opponent reach `opp` there. */
export type NodeValues = (
  n: number,
  d: number,
  p: 0 | 1,
  opp: Float32Array,
  best: Float32Array,
  profile: Float32Array,
) => void;

/** Values of one player against a profile: best response or the profile's own strategy. */
export type CfrEvalMode = "best-response" | "profile";

/** Best-response and profile values of both players, in chips per deal. */
export interface CfrExploitability {
  /** (gain of player 0 + gain of player 1) / 2 against their best responses, in chips. */
  chips: number;
  /** `chips` as a percentage of the starting pot. */
  percent: number;
  /** NashConv = BR_0 + BR_1 - EV_0 - EV_1. */
  nashConv: number;
  /** Best-response value of each player against the other's strategy. */
  bestResponse: [number, number];
  /** Expected value of each player under the profile. */
  ev: [number, number];
}

/** The uniform random profile (each action 1 / actions). */
export function uniformPolicy(tree: PublicTree): CfrPolicy {
  return (node, out) => {
    const n = tree.numChildren[node] * tree.numHands[tree.player[node]];
    out.fill(1 / tree.numChildren[node], 0, n);
  };
}

/**
 * Walks the public tree for one player against a fixed profile and returns unnormalized
 * counterfactual values per hand (`best-response`: max over own actions; `profile`: own policy).
 * Subtrees the opponent never reaches are skipped (their values are exactly 0).
 */
export class TreeEvaluator {
  private readonly vals: Float32Array[] = [];
  private readonly sig: Float32Array[] = [];
  private readonly reach: Float32Array[] = [];
  private readonly maxH: number;
  private readonly acc: Float64Array;
  /**
   * Multi-threaded evaluation of one policy: the shared task rows, the policy the worker threads
   * evaluate, and the runner that has every thread run the tasks. Set by a multi-threaded solver.
   */
  parallel: { tasks: ChanceTasks; policy: CfrPolicy; run: EvalTaskRunner } | null = null;
  private fromTasks = false;

  constructor(readonly tree: PublicTree, readonly game: CfrGame) {
    this.maxH = Math.max(tree.numHands[0], tree.numHands[1]);
    this.acc = new Float64Array(this.maxH);
    const wide = Math.max(1, tree.maxActions) * this.maxH;
    for (let d = 0; d < tree.levels; d++) {
      this.vals.push(new Float32Array(wide));
      this.sig.push(new Float32Array(wide));
      this.reach.push(new Float32Array(this.maxH));
    }
  }

  private equity = false;
  /** Reporter of player nodes (nodeValues), null when none or below the first chance nodes. */
  private report: NodeReport | null = null;

  /**
   * out[h] = unnormalized value of hand h of `player` (summed over opponent hands weighted by their
   * reach) at the root; with `equity`, the pot share from the game's terminalEquity instead.
   */
  rootValues(
    player: 0 | 1,
    policy: CfrPolicy,
    mode: CfrEvalMode,
    out: Float32Array,
    equity = false,
  ): void {
    if (equity && !this.game.terminalEquity) {
      throw new KibitzError("no_equity", `${this.game.name} does not define equity`);
    }
    const fast = (policy as { rootValues?: PolicyRootValues }).rootValues;
    if (fast && fast.tree === this.tree && !equity) {
      const other = new Float32Array(out.length);
      if (mode === "best-response") fast.values(player, out, other);
      else fast.values(player, other, out);
      return;
    }
    const opp = this.game.initialWeights((1 - player) as 0 | 1);
    const br = mode === "best-response", par = this.parallel;
    this.equity = equity;
    try {
      if (par && par.policy === policy && !equity) {
        // Reach down to the first chance nodes, their subtrees on every thread, then the values.
        par.tasks.cn.fill(-1);
        this.reachPass(0, 0, player, opp, policy);
        par.run(player, br);
        this.fromTasks = true;
      }
      this.visit(0, 0, player, opp, policy, br, out, 0);
    } finally {
      this.equity = false;
      this.fromTasks = false;
    }
  }

  /**
   * Engine-internal (also run by worker threads): values of task `k`'s subtree for `player` from
   * the opponent reach the reach pass stored, into the task's output row.
   */
  runTask(k: number, player: 0 | 1, policy: CfrPolicy, br: boolean): void {
    const tk = this.parallel!.tasks;
    if (tk.cn[k] < 0) return;
    const c = tk.node[k], d = this.tree.depth[c], row = k * tk.stride;
    const r = this.reach[d - 1], Ho = this.tree.numHands[1 - player];
    for (let i = 0; i < Ho; i++) r[i] = tk.opp[row + i];
    this.visit(c, d, player, r, policy, br, tk.out, row);
  }

  /**
   * Values of every hand of `player` at `node` (any node) against the opponent reach `opp` there,
   * into out[0..hands): the same walk as rootValues, started lower. With `onPlayerNode`, every
   * player node from `node` down to the next chance nodes is reported (values and the opponent
   * reach there), subtrees the opponent does not reach included; on one thread.
   */
  nodeValues(
    node: number,
    player: 0 | 1,
    opp: Float32Array,
    policy: CfrPolicy,
    mode: CfrEvalMode,
    out: Float32Array,
    options: { equity?: boolean; onPlayerNode?: NodeReport } = {},
  ): void {
    const { equity = false, onPlayerNode = null } = options;
    if (equity && !this.game.terminalEquity) {
      throw new KibitzError("no_equity", `${this.game.name} does not define equity`);
    }
    if (!(node >= 0 && node < this.tree.size)) {
      throw new KibitzError("bad_node", `node ${node} is not in ${this.tree.game}'s tree`);
    }
    const d = this.tree.depth[node];
    this.equity = equity;
    this.report = onPlayerNode;
    try {
      this.visit(node, d, player, opp, policy, mode === "best-response", out, 0);
    } finally {
      this.equity = false;
      this.report = null;
    }
  }

  /**
   * The top-down half of a parallel evaluation: walks the nodes above the first chance nodes as
   * `visit` does, storing the opponent reach of every outcome below them (cn = 0 when some reach is
   * positive, so the outcome is evaluated; it stays -1 when `visit` would skip it).
   */
  private reachPass(n: number, d: number, p: 0 | 1, opp: Float32Array, policy: CfrPolicy): void {
    const t = this.tree, tk = this.parallel!.tasks;
    const kind = t.kind[n];
    if (kind === CFR_TERMINAL) return;
    const first = t.firstChild[n], A = t.numChildren[n];
    if (kind === CFR_CHANCE) {
      const o = (1 - p) as 0 | 1, Ho = t.numHands[o];
      for (let c = first; c < first + A; c++) {
        const k = tk.index[c], row = k * tk.stride;
        outcomeReach(t, c, o, opp, tk.opp, row);
        tk.cn[k] = anyPositive(tk.opp, Ho, row) ? 0 : -1;
      }
      return;
    }
    const q = t.player[n];
    if (q === p) {
      for (let a = 0; a < A; a++) this.reachPass(first + a, d + 1, p, opp, policy);
      return;
    }
    const sig = this.sig[d], r = this.reach[d], Hq = t.numHands[q];
    policy(n, sig);
    for (let a = 0; a < A; a++) {
      actionReach(opp, sig, a, Hq, r);
      if (anyPositive(r, Hq)) this.reachPass(first + a, d + 1, p, r, policy);
    }
  }

  private visit(
    n: number,
    d: number,
    p: 0 | 1,
    opp: Float32Array,
    policy: CfrPolicy,
    br: boolean,
    out: Float32Array,
    off: number,
  ): void {
    const t = this.tree;
    const H = t.numHands[p];
    const kind = t.kind[n];
    if (kind === CFR_TERMINAL) {
      terminalStep(this.game, t, n, p, opp, out, off, this.equity);
      return;
    }
    const first = t.firstChild[n], A = t.numChildren[n];
    const vals = this.vals[d], r = this.reach[d];
    if (kind === CFR_CHANCE) {
      const tk = this.fromTasks ? this.parallel!.tasks : null;
      const fast = (policy as { rootValues?: PolicyRootValues }).rootValues;
      if (fast?.nodeValues && fast.tree === t && !this.equity && !tk) {
        // The chance node's whole subtree on the other means (no player node is reported there).
        const best = new Float32Array(H), profile = new Float32Array(H);
        fast.nodeValues(n, d, p, opp, best, profile);
        out.set(br ? best : profile, off);
        return;
      }
      out.fill(0, off, off + H);
      const o = (1 - p) as 0 | 1, Ho = t.numHands[o];
      // Player nodes are reported down to the first chance nodes only.
      const report = this.report;
      this.report = null;
      for (let c = first; c < first + A; c++) {
        if (tk) {
          // Parallel evaluation: this outcome's subtree already ran as a task (or is skipped).
          const k = tk.index[c], row = k * tk.stride;
          if (tk.cn[k] < 0) continue;
          for (let h = 0; h < H; h++) vals[h] = tk.out[row + h];
        } else {
          outcomeReach(t, c, o, opp, r, 0);
          if (!anyPositive(r, Ho)) continue;
          this.visit(c, d + 1, p, r, policy, br, vals, 0);
        }
        addChanceChildValues(t, c, p, vals, out, off);
      }
      this.report = report;
      return;
    }
    const q = t.player[n];
    const sig = this.sig[d];
    if (q === p) {
      if (!br || this.report) policy(n, sig);
      for (let a = 0; a < A; a++) this.visit(first + a, d + 1, p, opp, policy, br, vals, a * H);
      // Per hand over actions in order (action-major): the best value, or the policy's mix in f32.
      if (br) maxValues(vals, A, H, this.acc, out, off);
      else mixValues(sig, vals, A, H, this.acc, out, off);
    } else {
      policy(n, sig);
      const Hq = t.numHands[q];
      out.fill(0, off, off + H);
      for (let a = 0; a < A; a++) {
        // A child nobody reaches has values 0; it is still walked when its nodes are reported.
        actionReach(opp, sig, a, Hq, r);
        if (!this.report && !anyPositive(r, Hq)) continue;
        this.visit(first + a, d + 1, p, r, policy, br, vals, 0);
        addValues(vals, H, out, off);
      }
    }
    this.report?.(n, out.subarray(off, off + H), opp);
  }
}

/**
 * Called by TreeEvaluator.nodeValues at each reported player node: the traverser's values there
 * (unnormalized, as the walk computes them) and the opponent's reach there. Both are scratch views:
 * copy what must be kept.
 */
export type NodeReport = (node: number, values: Float32Array, opp: Float32Array) => void;

/** Total compatible deal mass sum_h w0(h) * sum_{o compatible} w1(o): the EV normalizer. */
export function dealMass(game: CfrGame): number {
  const w0 = game.initialWeights(0), w1 = game.initialWeights(1);
  const s = new Float32Array(game.numHands[0]);
  game.compatibleSums(0, w1, s);
  let m = 0;
  for (let h = 0; h < s.length; h++) m += w0[h] * s[h];
  if (!(m > 0)) {
    throw new KibitzError(
      "empty_ranges",
      `${game.name}: no pair of hands with positive weight can be dealt together (deal mass ${m})`,
    );
  }
  return m;
}

/** Expected value per deal of `player` (best response or profile), from root values. */
export function policyValue(
  ev: TreeEvaluator,
  player: 0 | 1,
  policy: CfrPolicy,
  mode: CfrEvalMode,
  mass = dealMass(ev.game),
): number {
  const out = new Float32Array(ev.tree.numHands[player]);
  ev.rootValues(player, policy, mode, out);
  const w = ev.game.initialWeights(player);
  let v = 0;
  for (let h = 0; h < out.length; h++) v += w[h] * out[h];
  return v / mass;
}

/**
 * Per-hand expected values of `player` under the profile (or its best response): the value of
 * holding hand h, averaged over the compatible opponent hands weighted by their range (0 when none).
 */
export function policyHandValues(
  ev: TreeEvaluator,
  player: 0 | 1,
  policy: CfrPolicy,
  mode: CfrEvalMode = "profile",
): Float32Array {
  const out = new Float32Array(ev.tree.numHands[player]);
  ev.rootValues(player, policy, mode, out);
  const comp = new Float32Array(out.length);
  ev.game.compatibleSums(player, ev.game.initialWeights((1 - player) as 0 | 1), comp);
  for (let h = 0; h < out.length; h++) out[h] = comp[h] > 0 ? out[h] / comp[h] : 0;
  return out;
}

/**
 * Per-hand equity of `player` under the profile: the expected share of the pot hand h wins (folds
 * included), averaged over compatible opponent hands weighted by their range. Needs terminalEquity.
 */
export function policyHandEquity(
  ev: TreeEvaluator,
  player: 0 | 1,
  policy: CfrPolicy,
): Float32Array {
  const out = new Float32Array(ev.tree.numHands[player]);
  ev.rootValues(player, policy, "profile", out, true);
  const comp = new Float32Array(out.length);
  ev.game.compatibleSums(player, ev.game.initialWeights((1 - player) as 0 | 1), comp);
  for (let h = 0; h < out.length; h++) out[h] = comp[h] > 0 ? out[h] / comp[h] : 0;
  return out;
}

/** Best responses of both players against `policy`: exploitability in chips and % of the pot. */
export function policyExploitability(ev: TreeEvaluator, policy: CfrPolicy): CfrExploitability {
  return valuesExploitability(
    ev.game,
    (p, mode, out) => ev.rootValues(p, policy, mode, out),
  );
}

/**
 * policyExploitability with the root values (TreeEvaluator.rootValues' unnormalized values)
 * computed elsewhere, e.g. by a CfrTrainer: the same sums in the same order.
 */
export function valuesExploitability(
  game: CfrGame,
  rootValues: (player: 0 | 1, mode: CfrEvalMode, out: Float32Array) => void,
): CfrExploitability {
  const mass = dealMass(game);
  const value = (player: 0 | 1, mode: CfrEvalMode) => {
    const out = new Float32Array(game.numHands[player]);
    rootValues(player, mode, out);
    const w = game.initialWeights(player);
    let v = 0;
    for (let h = 0; h < out.length; h++) v += w[h] * out[h];
    return v / mass;
  };
  const b0 = value(0, "best-response");
  const b1 = value(1, "best-response");
  const e0 = value(0, "profile");
  const e1 = value(1, "profile");
  const nashConv = b0 + b1 - e0 - e1;
  const chips = nashConv / 2;
  return {
    chips,
    percent: (100 * chips) / game.startingPot,
    nashConv,
    bestResponse: [b0, b1],
    ev: [e0, e1],
  };
}
