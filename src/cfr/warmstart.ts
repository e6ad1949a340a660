import { KibitzError } from "../errors.ts";
import { decodeBlock, encodeBlock, formatInfo } from "../quant/mod.ts";
import { regretsNonNegative } from "./schedule.ts";
import type { CfrSolver } from "./solver.ts";
import { CFR_CHANCE, CFR_PLAYER, type PublicTree } from "./tree.ts";

// Warm start (seed 002): the regrets of a solved small tree (few bet sizes) seed a large tree of the
// same game. Both public trees are walked in parallel from the root; every large node gets at most one
// small source node, so no regret is counted twice. At each player pair the small block is decoded to
// f32, averaged per iteration and rescaled (R_warm = R_small / T_small * W), spread over the large
// actions by the mapper's weights, clipped at 0 when the large algorithm floors regrets, and encoded in
// the large tree's format. The large solve then continues at iteration W.

/** How the actions of one pair of player nodes (small, large) correspond. */
export interface NodeMapping {
  /** weights[s * largeActions + l]: share of small action s's regret given to large action l. */
  weights: Float64Array;
  /** For each large action l, the small action whose subtree warms l's subtree (-1: none). */
  source: Int32Array;
}

/** Maps the actions of small player node `small` onto those of large player node `large`. */
export type WarmStartMapper = (small: number, large: number) => NodeMapping;

/** Options of warmStart. */
export interface WarmStartOptions {
  /** W: the transferred regrets weigh as W iterations, and the large solve continues at t = W (default 10). */
  weight?: number;
  /** T_small: iterations behind the small regrets (default: the small solver's iteration count). */
  smallIterations?: number;
  /** Action correspondence (default: labelMapper, actions with equal labels only). */
  mapper?: WarmStartMapper;
  /** Seed of the stochastic rounding when encoding (default: the large solver's seed). */
  seed?: number;
}

/** What a warm start did. */
export interface WarmStartReport {
  /** Large player nodes whose regrets were written from a small node. */
  nodes: number;
  /** Large player nodes with no small source (their regrets stay 0). */
  unmatched: number;
  /** avg factor W / T_small applied to the small regrets. */
  factor: number;
  /** The iteration the large solver continues at (W rounded). */
  startIteration: number;
  /** Negative regrets dropped because the large algorithm keeps regrets >= 0. */
  clipped: number;
  /** Human-readable warnings: precision drop, algorithm change. */
  warnings: string[];
}

const WARM_SALT = 0x2545f491;

/** Direct mapping by equal labels: for games whose trees share action names (and for identical trees). */
export function labelMapper(smallTree: PublicTree, largeTree: PublicTree): WarmStartMapper {
  return (s, l) => {
    const As = smallTree.numChildren[s], Al = largeTree.numChildren[l];
    const fs = smallTree.firstChild[s], fl = largeTree.firstChild[l];
    const weights = new Float64Array(As * Al);
    const source = new Int32Array(Al).fill(-1);
    for (let a = 0; a < As; a++) {
      for (let b = 0; b < Al; b++) {
        if (smallTree.label[fs + a] === largeTree.label[fl + b]) {
          weights[a * Al + b] = 1;
          source[b] = a;
          break;
        }
      }
    }
    return { weights, source };
  };
}

/**
 * Transfers the small solver's regrets into the large solver (both over trees of the same game with
 * the same hands) and sets the large solver's iteration to W. The large solver's cumulative strategy
 * and (PDCFR+) predicted regrets are left at zero. Throws if the hands differ or W / T are invalid.
 */
export function warmStart(
  small: CfrSolver,
  large: CfrSolver,
  options: WarmStartOptions = {},
): WarmStartReport {
  const st = small.tree, lt = large.tree;
  for (const p of [0, 1] as const) {
    if (st.numHands[p] !== lt.numHands[p]) {
      throw new KibitzError(
        "warmstart_mismatch",
        `warm start: player ${p} has ${st.numHands[p]} hands in the small tree but ${
          lt.numHands[p]
        } in the large one; both trees must come from the same ranges and board`,
      );
    }
  }
  const W = options.weight ?? 10;
  const T = options.smallIterations ?? small.iteration;
  if (!(W > 0) || !Number.isFinite(W)) {
    throw new KibitzError("bad_option", `warm start weight must be a positive number, got ${W}`);
  }
  if (!(T > 0) || !Number.isFinite(T)) {
    throw new KibitzError(
      "bad_option",
      `warm start needs a solved small tree: its iteration count is ${T}`,
    );
  }
  const factor = W / T;
  const mapper = options.mapper ?? labelMapper(st, lt);
  const clip = regretsNonNegative(large.algorithm);
  const key = { seed: ((options.seed ?? large.seed) ^ WARM_SALT) >>> 0, iteration: 0 };
  const report: WarmStartReport = {
    nodes: 0,
    unmatched: 0,
    factor,
    startIteration: Math.max(1, Math.round(W)),
    clipped: 0,
    warnings: precisionWarnings(small, large),
  };

  const maxH = Math.max(st.numHands[0], st.numHands[1]);
  const inBuf = new Float32Array(Math.max(1, st.maxChildren) * maxH);
  const outBuf = new Float32Array(Math.max(1, lt.maxChildren) * maxH);
  const labelIndex = new Map<string, number>();
  const stack: number[] = [0, 0];
  while (stack.length > 0) {
    const l = stack.pop()!, s = stack.pop()!;
    const kind = lt.kind[l];
    if (kind !== st.kind[s]) continue;
    const fs = st.firstChild[s], fl = lt.firstChild[l];
    const As = st.numChildren[s], Al = lt.numChildren[l];
    if (kind === CFR_CHANCE) {
      // Chance outcomes match by label (the card), whatever their order.
      labelIndex.clear();
      for (let c = 0; c < As; c++) labelIndex.set(st.label[fs + c], fs + c);
      for (let c = 0; c < Al; c++) {
        const m = labelIndex.get(lt.label[fl + c]);
        if (m !== undefined) stack.push(m, fl + c);
      }
      continue;
    }
    if (kind !== CFR_PLAYER || st.player[s] !== lt.player[l]) continue;
    const H = lt.numHands[lt.player[l]];
    const { weights, source } = mapper(s, l);
    if (weights.length !== As * Al || source.length !== Al) {
      throw new KibitzError(
        "bad_mapping",
        `warm start mapper returned ${weights.length} weights / ${source.length} sources for ${As} x ${Al} actions`,
      );
    }
    decodeBlock(small.regrets, st.block[s], inBuf, 0);
    outBuf.fill(0, 0, Al * H);
    for (let a = 0; a < As; a++) {
      for (let b = 0; b < Al; b++) {
        const w = weights[a * Al + b];
        if (w === 0) continue;
        const f = Math.fround(w * factor), ia = a * H, ib = b * H;
        for (let h = 0; h < H; h++) outBuf[ib + h] += f * inBuf[ia + h];
      }
    }
    if (clip) {
      for (let i = 0; i < Al * H; i++) {
        if (outBuf[i] < 0) (outBuf[i] = 0), report.clipped++;
      }
    }
    encodeBlock(large.regrets, lt.block[l], outBuf, 0, key);
    report.nodes++;
    for (let b = 0; b < Al; b++) {
      const a = source[b];
      if (a >= 0 && a < As) stack.push(fs + a, fl + b);
    }
  }
  report.unmatched = lt.blockNode.length - report.nodes;
  large.iteration = report.startIteration;
  return report;
}

/** Warnings for a transfer that loses precision or changes algorithm (the transfer still runs). */
export function precisionWarnings(small: CfrSolver, large: CfrSolver): string[] {
  const out: string[] = [];
  const fs = small.regrets.format, fl = large.regrets.format;
  if (formatInfo(fl).bits < formatInfo(fs).bits) {
    out.push(
      `warm start drops precision: small-tree regrets are ${fs}, the large tree stores ${fl}`,
    );
  }
  if (formatInfo(fs).signed && !formatInfo(fl).signed) {
    out.push(`warm start: negative regrets of the small tree (${fs}) are clipped to 0 in ${fl}`);
  } else if (!regretsNonNegative(small.algorithm) && regretsNonNegative(large.algorithm)) {
    out.push(
      `warm start: ${large.algorithm} keeps regrets >= 0, so the negative regrets of ${small.algorithm} are clipped to 0`,
    );
  }
  if (small.algorithm !== large.algorithm) {
    out.push(`warm start across algorithms: small ${small.algorithm}, large ${large.algorithm}`);
  }
  return out;
}
