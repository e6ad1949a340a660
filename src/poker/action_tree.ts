import { KibitzError } from "../errors.ts";
import type { BetSize, BetSizeOptions } from "./bet_size.ts";

// The betting tree of a postflop spot, built with the rules of the reference Rust solver
// (b-inary/postflop-solver, src/action_tree.rs): sizes are resolved to chip amounts, clamped to
// [min raise, all-in], turned into all-in when the remaining stack would be small
// (force_allin_threshold), extended with an all-in when it is not much bigger than the pot
// (add_allin_threshold), deduplicated and merged when close (merging_threshold). Chance nodes stand
// for "deal the next card" once; the game expands them per card.

/** Streets: 0 flop, 1 turn, 2 river. */
export type Street = 0 | 1 | 2;

/** Everything that shapes the betting tree. Sizes are indexed [OOP, IP]. */
export interface TreeConfig {
  startingStreet: Street;
  startingPot: number;
  effectiveStack: number;
  rakeRate: number;
  rakeCap: number;
  /** Bet sizes per street (flop, turn, river), each [OOP, IP]. */
  betSizes: [BetSizeOptions, BetSizeOptions][];
  /** OOP donk sizes on the turn and river (null: no donk line; OOP leads with normal bets). */
  donkSizes: [BetSize[] | null, BetSize[] | null];
  addAllinThreshold: number;
  forceAllinThreshold: number;
  mergingThreshold: number;
}

/** Node kinds of an ActionTree. */
export const NODE_OOP = 0, NODE_IP = 1, NODE_CHANCE = 2, NODE_FOLD = 3, NODE_SHOWDOWN = 4;
/** Edge kinds (the action leading into a node). */
export const ACT_NONE = 0,
  ACT_FOLD = 1,
  ACT_CHECK = 2,
  ACT_CALL = 3,
  ACT_BET = 4,
  ACT_RAISE = 5,
  ACT_ALLIN = 6,
  ACT_CHANCE = 7;

/** A betting tree as flat arrays in depth-first preorder (children contiguous). */
export interface ActionTree {
  config: TreeConfig;
  size: number;
  /** NODE_OOP, NODE_IP, NODE_CHANCE, NODE_FOLD, NODE_SHOWDOWN. */
  kind: Uint8Array;
  /** For NODE_FOLD: the player who folded. */
  folder: Uint8Array;
  street: Uint8Array;
  /** Chips each player has matched so far (beyond the starting pot). */
  amount: Int32Array;
  firstChild: Int32Array;
  numChildren: Uint16Array;
  parent: Int32Array;
  /** Edge into the node: ACT_* and the bet/raise-to amount (chips put in on this street). */
  action: Uint8Array;
  actionAmount: Int32Array;
}

interface Info {
  prev: number; // ACT_* of the previous action
  numBets: number;
  allin: boolean;
  oopCall: boolean;
  stack: [number, number];
  prevAmount: number;
}

interface Act {
  kind: number;
  amount: number;
}

function actCompare(a: Act, b: Act): number {
  return a.kind - b.kind || a.amount - b.amount;
}

/** Checks the numeric fields of a tree config; errors name the config key. */
export function checkTreeConfig(c: TreeConfig): void {
  const bad = (key: string, why: string) => {
    throw new KibitzError("bad_config", `tree.${key} ${why}`);
  };
  if (!(c.startingPot > 0) || !Number.isInteger(c.startingPot)) {
    bad("starting_pot", `must be a positive integer, got ${c.startingPot}`);
  }
  if (!(c.effectiveStack > 0) || !Number.isInteger(c.effectiveStack)) {
    bad("effective_stack", `must be a positive integer, got ${c.effectiveStack}`);
  }
  if (!(c.rakeRate >= 0 && c.rakeRate <= 1)) {
    bad("rake_rate", `must be in [0, 1], got ${c.rakeRate}`);
  }
  if (!(c.rakeCap >= 0)) bad("rake_cap", `must be >= 0, got ${c.rakeCap}`);
  if (!(c.addAllinThreshold >= 0)) bad("add_allin_threshold", "must be >= 0");
  if (!(c.forceAllinThreshold >= 0)) bad("force_allin_threshold", "must be >= 0");
  if (!(c.mergingThreshold >= 0)) bad("merging_threshold", "must be >= 0");
}

/** Builds the betting tree of `config` (the reference solver's rules); refuses beyond maxNodes. */
export function buildActionTree(config: TreeConfig, maxNodes = 10_000_000): ActionTree {
  checkTreeConfig(config);
  const kind: number[] = [], folder: number[] = [], street: number[] = [], amount: number[] = [];
  const firstChild: number[] = [], numChildren: number[] = [], parent: number[] = [];
  const action: number[] = [], actionAmount: number[] = [];

  const add = (k: number, st: number, amt: number, par: number, a: number, aa: number, f = 0) => {
    if (kind.length >= maxNodes) {
      throw new KibitzError("tree_too_large", `the betting tree exceeds ${maxNodes} nodes`);
    }
    kind.push(k), folder.push(f), street.push(st), amount.push(amt), parent.push(par);
    action.push(a), actionAmount.push(aa), firstChild.push(-1), numChildren.push(0);
    return kind.length - 1;
  };

  const next = (info: Info, player: number, a: Act): Info => {
    const n: Info = { ...info, stack: [info.stack[0], info.stack[1]], prev: a.kind };
    if (a.kind === ACT_CHECK) n.oopCall = false;
    else if (a.kind === ACT_CALL) {
      n.numBets = 0;
      n.oopCall = player === NODE_OOP;
      n.stack[player] = n.stack[player ^ 1];
      n.prevAmount = 0;
    } else if (a.kind === ACT_BET || a.kind === ACT_RAISE || a.kind === ACT_ALLIN) {
      const toCall = n.stack[player] - n.stack[player ^ 1];
      n.numBets++;
      n.allin = a.kind === ACT_ALLIN;
      n.stack[player] -= a.amount - info.prevAmount + toCall;
      n.prevAmount = a.amount;
    }
    return n;
  };

  const build = (id: number, info: Info) => {
    const k = kind[id];
    if (k === NODE_FOLD || k === NODE_SHOWDOWN) return;
    if (k === NODE_CHANCE) {
      const st = street[id] + 1;
      // After an all-in call the remaining cards are dealt with no more betting.
      const childKind = !info.allin ? NODE_OOP : st === 1 ? NODE_CHANCE : NODE_SHOWDOWN;
      firstChild[id] = kind.length, numChildren[id] = 1;
      const c = add(childKind, st, amount[id], id, ACT_CHANCE, 0);
      build(c, { ...next(info, 0, { kind: ACT_CHANCE, amount: 0 }) });
      return;
    }
    const acts = actionsAt(config, k, street[id] as Street, amount[id], info);
    const player = k;
    const toCall = info.stack[player] - info.stack[player ^ 1];
    const afterCall = street[id] === 2 ? NODE_SHOWDOWN : NODE_CHANCE;
    const afterCheck = player === NODE_OOP ? NODE_IP : afterCall;
    const ids: number[] = [];
    firstChild[id] = kind.length, numChildren[id] = acts.length;
    for (const a of acts) {
      let amt = amount[id];
      let ck: number, f = 0;
      if (a.kind === ACT_FOLD) (ck = NODE_FOLD), (f = player);
      else if (a.kind === ACT_CHECK) ck = afterCheck;
      else if (a.kind === ACT_CALL) (amt += toCall), (ck = afterCall);
      else (amt += toCall), (ck = player ^ 1);
      ids.push(add(ck, street[id], amt, id, a.kind, a.amount, f));
    }
    for (let i = 0; i < acts.length; i++) build(ids[i], next(info, player, acts[i]));
  };

  const rootKind = NODE_OOP;
  const root = add(rootKind, config.startingStreet, 0, -1, ACT_NONE, 0);
  const s = config.effectiveStack;
  build(root, {
    prev: ACT_NONE,
    numBets: 0,
    allin: false,
    oopCall: false,
    stack: [s, s],
    prevAmount: 0,
  });
  return {
    config,
    size: kind.length,
    kind: Uint8Array.from(kind),
    folder: Uint8Array.from(folder),
    street: Uint8Array.from(street),
    amount: Int32Array.from(amount),
    firstChild: Int32Array.from(firstChild),
    numChildren: Uint16Array.from(numChildren),
    parent: Int32Array.from(parent),
    action: Uint8Array.from(action),
    actionAmount: Int32Array.from(actionAmount),
  };
}

/** The actions of `player` at a node (the reference's push_actions). */
function actionsAt(
  cfg: TreeConfig,
  player: number,
  st: Street,
  nodeAmount: number,
  info: Info,
): Act[] {
  const opponent = player ^ 1;
  const playerStack = info.stack[player], opponentStack = info.stack[opponent];
  const prevAmount = info.prevAmount;
  const toCall = playerStack - opponentStack;
  const pot = cfg.startingPot + 2 * (nodeAmount + toCall);
  const maxAmount = opponentStack + prevAmount;
  const minAmount = Math.min(Math.max(prevAmount + toCall, 1), maxAmount);
  const sprAfterCall = opponentStack / pot;
  // Geometric size: N equal pot-relative bets r put the whole stack in when
  // (1 + 2r)^N = 1 + 2 * spr, i.e. r = ((2 * spr + 1)^(1/N) - 1) / 2.
  const geometric = (n: number, maxRatio: number) => {
    const ratio = (Math.pow(2 * sprAfterCall + 1, 1 / n) - 1) / 2;
    return Math.round(pot * Math.min(ratio, maxRatio));
  };
  const remaining = 3 - st;
  const options = cfg.betSizes[st][player];
  const donk = st === 0 ? null : cfg.donkSizes[st - 1];
  const acts: Act[] = [];
  const allinAct = { kind: ACT_ALLIN, amount: maxAmount };

  const opening = (sizes: BetSize[]) => {
    acts.push({ kind: ACT_CHECK, amount: 0 });
    for (const s of sizes) {
      if (s.kind === "pot") acts.push({ kind: ACT_BET, amount: Math.round(pot * s.ratio) });
      else if (s.kind === "chips") acts.push({ kind: ACT_BET, amount: s.chips });
      else if (s.kind === "geometric") {
        const n = s.streets === 0 ? remaining : s.streets;
        acts.push({ kind: ACT_BET, amount: geometric(n, s.maxRatio) });
      } else if (s.kind === "allin") acts.push(allinAct);
    }
    // add_allin_threshold: add an all-in when it is at most this many pots.
    if (maxAmount <= Math.round(pot * cfg.addAllinThreshold)) acts.push(allinAct);
  };

  if (donk !== null && info.prev === ACT_CHANCE && info.oopCall) {
    opening(donk);
  } else if (info.prev === ACT_NONE || info.prev === ACT_CHECK || info.prev === ACT_CHANCE) {
    opening(options.bet);
  } else {
    acts.push({ kind: ACT_FOLD, amount: 0 }, { kind: ACT_CALL, amount: 0 });
    if (!info.allin) {
      for (const s of options.raise) {
        if (s.kind === "pot") {
          acts.push({ kind: ACT_RAISE, amount: prevAmount + Math.round(pot * s.ratio) });
        } else if (s.kind === "prev") {
          acts.push({ kind: ACT_RAISE, amount: Math.round(prevAmount * s.ratio) });
        } else if (s.kind === "chips") {
          if (s.cap === 0 || info.numBets <= s.cap) {
            acts.push({ kind: ACT_RAISE, amount: prevAmount + s.chips });
          }
        } else if (s.kind === "geometric") {
          const base = s.streets === 0 ? remaining : s.streets;
          const n = Math.max(base - info.numBets + 1, 1);
          acts.push({ kind: ACT_RAISE, amount: prevAmount + geometric(n, s.maxRatio) });
        } else if (s.kind === "allin") acts.push(allinAct);
      }
      if (maxAmount <= prevAmount + Math.round(pot * cfg.addAllinThreshold)) acts.push(allinAct);
    }
  }

  // force_allin_threshold: a bet becomes all-in when the stack left behind after the opponent's
  // call would be at most this fraction of the pot after that call.
  const aboveThreshold = (amt: number) => {
    const newPot = pot + 2 * (amt - prevAmount);
    return maxAmount <= amt + Math.round(newPot * cfg.forceAllinThreshold);
  };
  for (const a of acts) {
    if (a.kind !== ACT_BET && a.kind !== ACT_RAISE) continue;
    const clamped = Math.min(Math.max(a.amount, minAmount), maxAmount);
    if (aboveThreshold(clamped)) (a.kind = ACT_ALLIN), (a.amount = maxAmount);
    else a.amount = clamped;
  }
  acts.sort(actCompare);
  const uniq = acts.filter((a, i) => i === 0 || actCompare(a, acts[i - 1]) !== 0);
  return mergeBets(uniq, pot, prevAmount, cfg.mergingThreshold);
}

/**
 * merging_threshold (PioSOLVER's rule, as in the reference): from the largest bet down, keep a bet
 * of pot ratio Y only if it is clearly smaller than the last kept ratio X:
 * Y < (X - t) / (1 + t), i.e. (1 + X) / (1 + Y) > 1 + t after rearranging.
 */
function mergeBets(acts: Act[], pot: number, offset: number, t: number): Act[] {
  const EPS = 1e-12;
  let cur = 2 ** 31 - 1;
  const out: Act[] = [];
  for (let i = acts.length - 1; i >= 0; i--) {
    const a = acts[i];
    const isBet = a.kind === ACT_BET || a.kind === ACT_RAISE || a.kind === ACT_ALLIN;
    if (isBet && a.amount > 0) {
      const ratio = (a.amount - offset) / pot;
      const curRatio = (cur - offset) / pot;
      const limit = (curRatio - t) / (1 + t);
      if (ratio < limit * (1 - EPS)) {
        out.push(a);
        cur = a.amount;
      }
    } else out.push(a);
  }
  return out.reverse();
}

/** Display label of the action leading into node `n` ("Check", "Bet 120", "All-in 900"). */
export function actionLabel(tree: ActionTree, n: number): string {
  const amt = tree.actionAmount[n];
  switch (tree.action[n]) {
    case ACT_FOLD:
      return "Fold";
    case ACT_CHECK:
      return "Check";
    case ACT_CALL:
      return "Call";
    case ACT_BET:
      return `Bet ${amt}`;
    case ACT_RAISE:
      return `Raise ${amt}`;
    case ACT_ALLIN:
      return `All-in ${amt}`;
    case ACT_CHANCE:
      return "Deal";
    default:
      return "";
  }
}

/** Number of decision nodes per street [flop, turn, river] of the (unexpanded) tree. */
export function countDecisionNodes(tree: ActionTree): [number, number, number] {
  const out: [number, number, number] = [0, 0, 0];
  for (let i = 0; i < tree.size; i++) if (tree.kind[i] <= NODE_IP) out[tree.street[i]]++;
  return out;
}
