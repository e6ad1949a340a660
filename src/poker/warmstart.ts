import type { CfrSolver } from "../cfr/solver.ts";
import { CFR_CHANCE, type PublicTree } from "../cfr/tree.ts";
import { pairNodes } from "../cfr/warmstart_values.ts";
import {
  type NodeMapping,
  warmStart,
  type WarmStartMapper,
  type WarmStartReport,
} from "../cfr/warmstart.ts";
import { KibitzError } from "../errors.ts";
import {
  ACT_ALLIN,
  ACT_BET,
  ACT_CALL,
  ACT_CHANCE,
  ACT_CHECK,
  ACT_FOLD,
  ACT_RAISE,
  type ActionTree,
} from "./action_tree.ts";
import type { BetSizeOptions } from "./bet_size.ts";
import { cardName } from "./cards.ts";
import type { SolveConfig } from "./config.ts";
import type { PostflopGame } from "./game.ts";
import type { WarmStartInterpolation, WarmStartSettings } from "./warmstart_config.ts";

export {
  AUTO_REGRETS_COVERAGE,
  autoWarmStartMethod,
  parseWarmStartSettings,
  REGRETS_AUTO_WEIGHT,
  WARMSTART_CONFIG_KEYS,
  type WarmStartChoice,
  type WarmStartInterpolation,
  type WarmStartMethod,
  type WarmStartSettings,
} from "./warmstart_config.ts";

// Hold'em side of the warm start (seed 002): bets and raises of the small tree are mapped onto the
// large tree's by pot fraction, f = (chips put in beyond the call) / (pot after the call). An all-in
// is a bet like any other whose size is the whole stack. Fold, check and call map to themselves. A
// small size between two large sizes is split between them (linear in f, or linear in log(1 + 2f),
// the log of the factor by which a called bet grows the pot); below the smallest large size it is
// split between check/call (f = 0) and that size; above the largest it goes to the largest.

/** Which large subtrees are warmed: only those reached by the same actions, or also the nearest. */
export type WarmStartSubtrees = "matched" | "nearest";

/** One action as the mapping sees it: its ACT_* kind and, for bets/raises/all-ins, its pot fraction. */
export interface PokerAction {
  kind: number;
  frac: number;
}

/** A share of a small action given to large action `index`. */
export interface ActionShare {
  index: number;
  weight: number;
}

const EXACT = 1e-9;

function aggressive(kind: number): boolean {
  return kind === ACT_BET || kind === ACT_RAISE || kind === ACT_ALLIN;
}

/** The interpolation coordinate of a pot fraction: f (linear) or ln(1 + 2f) (log); both 0 at f = 0. */
export function sizeCoordinate(frac: number, mode: WarmStartInterpolation): number {
  return mode === "log" ? Math.log1p(2 * frac) : frac;
}

/**
 * Where one small-tree action goes among a large node's actions: fold/check/call to the same action;
 * a bet, raise or all-in to the equal size, split between the two bracketing sizes, between
 * check/call and the smallest size when below it, or to the largest size when above. Empty when the
 * large node has no counterpart (e.g. a raise where the large tree allows none).
 */
export function mapPokerAction(
  small: PokerAction,
  large: readonly PokerAction[],
  mode: WarmStartInterpolation = "linear",
): ActionShare[] {
  if (!aggressive(small.kind)) {
    const i = large.findIndex((a) => a.kind === small.kind);
    return i < 0 ? [] : [{ index: i, weight: 1 }];
  }
  const bets: number[] = [];
  for (let i = 0; i < large.length; i++) if (aggressive(large[i].kind)) bets.push(i);
  if (bets.length === 0) return [];
  bets.sort((a, b) => large[a].frac - large[b].frac);
  for (const i of bets) {
    if (Math.abs(large[i].frac - small.frac) <= EXACT) return [{ index: i, weight: 1 }];
  }
  const x = sizeCoordinate(small.frac, mode);
  const first = bets[0], last = bets[bets.length - 1];
  if (small.frac < large[first].frac) {
    const passive = large.findIndex((a) => a.kind === ACT_CHECK || a.kind === ACT_CALL);
    if (passive < 0) return [{ index: first, weight: 1 }];
    const w = x / sizeCoordinate(large[first].frac, mode);
    return [{ index: passive, weight: 1 - w }, { index: first, weight: w }];
  }
  if (small.frac > large[last].frac) return [{ index: last, weight: 1 }];
  for (let k = 0; k + 1 < bets.length; k++) {
    const lo = bets[k], hi = bets[k + 1];
    if (small.frac > large[lo].frac && small.frac < large[hi].frac) {
      const xl = sizeCoordinate(large[lo].frac, mode), xh = sizeCoordinate(large[hi].frac, mode);
      const w = (x - xl) / (xh - xl);
      return [{ index: lo, weight: 1 - w }, { index: hi, weight: w }];
    }
  }
  return [{ index: last, weight: 1 }];
}

/** Per public node: the betting-tree node it stands for, and the action (kind, pot fraction) into it. */
export interface PokerTreeActions {
  actionNode: Int32Array;
  kind: Uint8Array;
  frac: Float64Array;
}

/** Labels every public-tree node of a postflop game with its betting-tree node and incoming action. */
export function pokerTreeActions(tree: PublicTree, actionTree: ActionTree): PokerTreeActions {
  const at = actionTree, pot0 = at.config.startingPot;
  // Chips each player had in when the current street began (the base of street-level bet amounts).
  const base = new Int32Array(at.size);
  for (let i = 0; i < at.size; i++) {
    base[i] = i === 0 || at.action[i] === ACT_CHANCE ? at.amount[i] : base[at.parent[i]];
  }
  const actionNode = new Int32Array(tree.size).fill(-1);
  const kind = new Uint8Array(tree.size), frac = new Float64Array(tree.size);
  actionNode[0] = 0;
  for (let n = 0; n < tree.size; n++) {
    const a = actionNode[n], first = tree.firstChild[n];
    for (let c = 0; c < tree.numChildren[n]; c++) {
      const child = tree.kind[n] === CFR_CHANCE ? at.firstChild[a] : at.firstChild[a] + c;
      const pc = first + c;
      actionNode[pc] = child;
      kind[pc] = at.action[child];
      if (aggressive(kind[pc])) {
        const called = at.amount[child], commit = base[a] + at.actionAmount[child];
        frac[pc] = (commit - called) / (pot0 + 2 * called);
      }
    }
  }
  return { actionNode, kind, frac };
}

/** Options of the Hold'em action mapper. */
export interface PokerMapperOptions {
  interpolation?: WarmStartInterpolation;
  /** "nearest" (default) also warms large subtrees with no exact counterpart from the nearest size. */
  subtrees?: WarmStartSubtrees;
}

/** The WarmStartMapper of two postflop trees: pot-fraction mapping of each player node pair. */
export function pokerMapper(
  small: { tree: PublicTree; actionTree: ActionTree },
  large: { tree: PublicTree; actionTree: ActionTree },
  options: PokerMapperOptions = {},
): WarmStartMapper {
  const mode = options.interpolation ?? "linear";
  const nearest = (options.subtrees ?? "nearest") === "nearest";
  const sa = pokerTreeActions(small.tree, small.actionTree);
  const la = pokerTreeActions(large.tree, large.actionTree);
  const list = (t: PublicTree, acts: PokerTreeActions, n: number): PokerAction[] => {
    const out: PokerAction[] = [];
    for (let c = t.firstChild[n]; c < t.firstChild[n] + t.numChildren[n]; c++) {
      out.push({ kind: acts.kind[c], frac: acts.frac[c] });
    }
    return out;
  };
  return (s: number, l: number): NodeMapping => {
    const sl = list(small.tree, sa, s), ll = list(large.tree, la, l);
    const As = sl.length, Al = ll.length;
    const weights = new Float64Array(As * Al);
    const source = new Int32Array(Al).fill(-1);
    for (let a = 0; a < As; a++) {
      for (const { index, weight } of mapPokerAction(sl[a], ll, mode)) {
        weights[a * Al + index] += weight;
      }
    }
    for (let b = 0; b < Al; b++) {
      let best = -1, dist = Infinity;
      for (let a = 0; a < As; a++) {
        if (aggressive(ll[b].kind) !== aggressive(sl[a].kind)) continue;
        if (!aggressive(ll[b].kind)) {
          if (sl[a].kind === ll[b].kind) (best = a), (dist = 0);
          continue;
        }
        const d = Math.abs(sizeCoordinate(sl[a].frac, mode) - sizeCoordinate(ll[b].frac, mode));
        if (d < dist) (best = a), (dist = d);
      }
      if (best >= 0 && (nearest || dist <= EXACT)) source[b] = best;
    }
    return { weights, source };
  };
}

/**
 * Checks that two postflop games can share regrets: same board, ranges, starting pot, effective stack
 * and rake. Throws one error naming every difference.
 */
export function validateWarmStartGames(small: PostflopGame, large: PostflopGame): void {
  const diffs: string[] = [];
  const board = (g: PostflopGame) => g.board.map(cardName).join("");
  if (board(small) !== board(large)) {
    diffs.push(`board (small ${board(small)}, large ${board(large)})`);
  }
  const names = ["OOP", "IP"];
  for (const p of [0, 1] as const) {
    const hs = small.hands[p], hl = large.hands[p];
    const ws = small.initialWeights(p), wl = large.initialWeights(p);
    let why = "";
    if (hs.length !== hl.length) why = `${hs.length} vs ${hl.length} hands`;
    else {
      for (let h = 0; h < hs.length && !why; h++) {
        if (hs[h] !== hl[h]) {
          why = `hand ${h + 1} is ${small.handLabel(p, h)} vs ${large.handLabel(p, h)}`;
        } else if (ws[h] !== wl[h]) {
          why = `${small.handLabel(p, h)} has weight ${ws[h]} vs ${wl[h]}`;
        }
      }
    }
    if (why) diffs.push(`${names[p]} range (${why})`);
  }
  const cs = small.tree.config, cl = large.tree.config;
  const fields: [string, number, number][] = [
    ["starting pot", cs.startingPot, cl.startingPot],
    ["effective stack", cs.effectiveStack, cl.effectiveStack],
    ["rake rate", cs.rakeRate, cl.rakeRate],
    ["rake cap", cs.rakeCap, cl.rakeCap],
  ];
  for (const [name, a, b] of fields) {
    if (a !== b) diffs.push(`${name} (small ${a}, large ${b})`);
  }
  if (diffs.length > 0) {
    throw new KibitzError(
      "warmstart_mismatch",
      `warm start needs the same game with other bet sizes; the small and large trees differ in: ${
        diffs.join("; ")
      }`,
    );
  }
}

/** A solved (or to-be-solved) postflop tree: its solver, game and public tree. */
export interface PostflopSide {
  solver: CfrSolver;
  game: PostflopGame;
}

/** Options of warmStartPostflop. */
export interface PostflopWarmStartOptions extends PokerMapperOptions {
  /** W (default 10). */
  weight?: number;
  /** T_small (default: the small solver's iterations). */
  smallIterations?: number;
}

/** Validates the pair, then transfers the small solve's regrets into the large solver (seed 002). */
export function warmStartPostflop(
  small: PostflopSide,
  large: PostflopSide,
  options: PostflopWarmStartOptions = {},
): WarmStartReport {
  validateWarmStartGames(small.game, large.game);
  const mapper = pokerMapper(
    { tree: small.solver.tree, actionTree: small.game.tree },
    { tree: large.solver.tree, actionTree: large.game.tree },
    options,
  );
  return warmStart(small.solver, large.solver, {
    weight: options.weight,
    smallIterations: options.smallIterations,
    mapper,
  });
}

/**
 * Share of the large tree's decision nodes that the parallel walk pairs with a small-tree node (bets
 * by nearest size): the part of the tree a regret transfer can seed (warmstart_method "auto").
 */
export function warmStartCoverage(
  small: { tree: PublicTree; game: PostflopGame },
  large: { tree: PublicTree; game: PostflopGame },
  options: PokerMapperOptions = {},
): number {
  const st = small.tree, lt = large.tree;
  const mapper = pokerMapper(
    { tree: st, actionTree: small.game.tree },
    { tree: lt, actionTree: large.game.tree },
    options,
  );
  const paired = pairedDecisionNodes(lt, pairNodes(st, lt, mapper));
  return lt.blockNode.length > 0 ? paired / lt.blockNode.length : 0;
}

/** Decision nodes of the large tree that `pair` (pairNodes) gives a small-tree counterpart. */
export function pairedDecisionNodes(large: PublicTree, pair: ArrayLike<number>): number {
  let paired = 0;
  for (let b = 0; b < large.blockNode.length; b++) if (pair[large.blockNode[b]] >= 0) paired++;
  return paired;
}

/** The labels of ACT_* kinds, for messages and tables. */
export function pokerActionName(kind: number): string {
  switch (kind) {
    case ACT_FOLD:
      return "fold";
    case ACT_CHECK:
      return "check";
    case ACT_CALL:
      return "call";
    case ACT_BET:
      return "bet";
    case ACT_RAISE:
      return "raise";
    case ACT_ALLIN:
      return "all-in";
    default:
      return "none";
  }
}

/** The small tree's config: the same spot with the warm-start sizes and the small solve's limits. */
export function smallTreeConfig(config: SolveConfig, ws: WarmStartSettings): SolveConfig {
  const sizes = (): [BetSizeOptions, BetSizeOptions] => [
    { bet: [...ws.sizes.bet], raise: [...ws.sizes.raise] },
    { bet: [...ws.sizes.bet], raise: [...ws.sizes.raise] },
  ];
  return {
    ...config,
    tree: {
      ...config.tree,
      betSizes: [sizes(), sizes(), sizes()],
      donkSizes: [ws.donk, ws.donk],
    },
    solver: {
      ...config.solver,
      maxIterations: ws.minimalMaxIters,
      targetExploitabilityPct: ws.minimalExploitabilityPct,
    },
  };
}
