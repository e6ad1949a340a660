import {
  mappedPolicy,
  pairNodes,
  type ValueWarmStartReport,
  type WarmResets,
  warmSchedule,
  warmStartFromPolicy,
} from "../cfr/warmstart_values.ts";
import type { PublicTree } from "../cfr/tree.ts";
import { ACT_ALLIN, ACT_BET, ACT_FOLD, ACT_RAISE, type ActionTree } from "./action_tree.ts";
import {
  pokerMapper,
  type PokerMapperOptions,
  pokerTreeActions,
  type PostflopSide,
  validateWarmStartGames,
} from "./warmstart.ts";

// Hold'em side of the strategy-based warm start (warmstart_method = "values"): the small tree's
// average strategy is mapped into the full tree with the pot-fraction mapper of the regret transfer
// (sizes the small tree lacks take the behaviour of the nearest small size below them, their
// fold frequencies corrected by pot odds), then the
// full tree's regrets are set from that profile's counterfactual values (src/cfr/warmstart_values.ts).

/** How the responses to a bet size the small tree lacks are derived from the nearest size's. */
export type WarmResponses = "copy" | "pot-odds";

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
  /** Responses to sizes the small tree lacks (default "pot-odds"). */
  responses?: WarmResponses;
  /** Regret margin k (default 0), see ValueWarmStartOptions.margin. */
  margin?: number;
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
  let paired = 0;
  for (let b = 0; b < lt.blockNode.length; b++) if (pair[lt.blockNode[b]] >= 0) paired++;
  const adjust = (options.responses ?? "pot-odds") === "pot-odds"
    ? potOddsResponses(
      { tree: st, actionTree: small.game.tree },
      { tree: lt, actionTree: large.game.tree },
    )
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
  const rep = warmStartFromPolicy(large.solver, policy, {
    weight,
    reference,
    margin: options.margin,
  });
  const resetFrom = warmSchedule(large.solver, rep.weight, options.resets);
  return { ...rep, paired, playerNodes: lt.blockNode.length, resetFrom };
}
