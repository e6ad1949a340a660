import { type CfrPolicy, policyHandValues, TreeEvaluator } from "../cfr/evaluate.ts";
import { CFR_CHANCE, CFR_PLAYER, nodePath, type PublicTree } from "../cfr/tree.ts";
import { KibitzError } from "../errors.ts";
import { gridCell, RANK_CHARS } from "./cards.ts";
import type { PostflopGame } from "./game.ts";

/** Root summary: action frequencies over the range, EVs and equities of both players. */
export interface RootSummary {
  /** Who acts at the node (null at a chance or terminal node). */
  player: "oop" | "ip" | null;
  actions: string[];
  frequencies: number[];
  /** Expected chips won from the pot by OOP and IP (sum = pot minus expected rake). */
  ev: [number, number];
  /** All-in equity (share of the pot at showdown with no more betting) of OOP and IP. */
  equity: [number, number];
  /** 13 x 13 hand classes: per cell, the frequency of each root action (null if no hands). */
  grid: (number[] | null)[][];
  /** Per-hand EV (chips from the pot) and equity of each player. */
  hands: [HandStats, HandStats];
}

/** Per-hand numbers of one player at the root. */
export interface HandStats {
  labels: string[];
  weights: number[];
  ev: number[];
  equity: number[];
}

/** Deal weight of each hand: its range weight times the opponent's compatible range mass. */
function dealWeights(game: PostflopGame, p: 0 | 1): Float32Array {
  const comp = new Float32Array(game.numHands[p]);
  game.compatibleSums(p, game.initialWeights((1 - p) as 0 | 1), comp);
  const w = game.initialWeights(p);
  return comp.map((c, h) => c * w[h]);
}

/** Computes the root summary of a strategy profile. */
export function rootSummary(tree: PublicTree, game: PostflopGame, policy: CfrPolicy): RootSummary {
  const ev = new TreeEvaluator(tree, game);
  const half = game.startingPot / 2;
  const hands = ([0, 1] as const).map((p) => {
    const v = policyHandValues(ev, p, policy);
    const eq = game.equity(p);
    const dw = dealWeights(game, p);
    return {
      labels: Array.from({ length: game.numHands[p] }, (_, h) => game.handLabel(p, h)),
      weights: Array.from(dw),
      ev: Array.from(v, (x) => x + half),
      equity: Array.from(eq),
    };
  }) as [HandStats, HandStats];
  return summarize(tree, game, policy, 0, hands);
}

/** Per hand class of the 13 x 13 grid, the frequency of every bet and raise (null: no hands). */
export function betFrequencyGrid(s: RootSummary): (number | null)[][] {
  const aggressive = s.actions.map((a) => !/^(Check|Call|Fold)$/.test(a));
  return s.grid.map((row) =>
    row.map((c) => c ? c.reduce((acc, x, a) => acc + (aggressive[a] ? x : 0), 0) : null)
  );
}

/** Prints a node summary: action frequencies, EV/equity, and a 13x13 grid of bet frequency. */
export function formatRootSummary(s: RootSummary, where = "root"): string {
  const lines: string[] = [];
  lines.push(
    `OOP: EV ${s.ev[0].toFixed(2)}  equity ${(100 * s.equity[0]).toFixed(2)}%   ` +
      `IP: EV ${s.ev[1].toFixed(2)}  equity ${(100 * s.equity[1]).toFixed(2)}%`,
  );
  if (s.actions.length === 0) return lines.join("\n");
  lines.push(
    `${where} (${(s.player ?? "").toUpperCase()}): ` +
      s.actions.map((a, i) => `${a} ${(100 * s.frequencies[i]).toFixed(1)}%`).join(", "),
  );
  const bets = betFrequencyGrid(s);
  lines.push("", "bet/raise frequency % by hand class (suited above the diagonal, . = none):");
  lines.push("      " + [...RANK_CHARS].reverse().map((r) => r.padStart(4)).join(""));
  for (let row = 0; row < 13; row++) {
    const cells = bets[row].map((f) =>
      f === null ? "   ." : String(Math.round(100 * f)).padStart(4)
    );
    lines.push(`   ${RANK_CHARS[12 - row]}  ${cells.join("")}`);
  }
  return lines.join("\n");
}

/** Per-node strategies, EVs and equities of the first street (before any chance card). */
export function firstStreetNodes(tree: PublicTree, game: PostflopGame, policy: CfrPolicy) {
  const out: {
    path: string[];
    player: "oop" | "ip";
    actions: string[];
    strategy: Record<string, number[]>;
    ev: { oop: Record<string, number>; ip: Record<string, number> };
    equity: { oop: Record<string, number>; ip: Record<string, number> };
  }[] = [];
  const stats = firstStreetStats(tree, game, policy);
  const perHand = (xs: number[][], q: 0 | 1) => {
    const rec: Record<string, number> = {};
    for (let h = 0; h < game.numHands[q]; h++) {
      rec[game.handLabel(q, h)] = Math.round((xs[q][h] ?? 0) * 1e4) / 1e4;
    }
    return rec;
  };
  const visit = (n: number) => {
    if (tree.kind[n] !== CFR_PLAYER) return;
    const A = tree.numChildren[n], p = tree.player[n] as 0 | 1, H = tree.numHands[p];
    const sig = new Float32Array(A * H);
    policy(n, sig);
    const actions: string[] = [];
    for (let c = tree.firstChild[n]; c < tree.firstChild[n] + A; c++) actions.push(tree.label[c]);
    const strategy: Record<string, number[]> = {};
    for (let h = 0; h < H; h++) {
      strategy[game.handLabel(p, h)] = Array.from(
        { length: A },
        (_, a) => Math.round(sig[a * H + h] * 1e5) / 1e5,
      );
    }
    const st = stats.get(n)!;
    out.push({
      path: nodePath(tree, n),
      player: p === 0 ? "oop" : "ip",
      actions,
      strategy,
      ev: { oop: perHand(st.ev, 0), ip: perHand(st.ev, 1) },
      equity: { oop: perHand(st.equity, 0), ip: perHand(st.equity, 1) },
    });
    for (let c = tree.firstChild[n]; c < tree.firstChild[n] + A; c++) {
      if (tree.kind[c] !== CFR_CHANCE) visit(c);
    }
  };
  visit(0);
  return out;
}

/** Average strategies of every player node, concatenated in block order (for the binary save). */
export function collectStrategies(tree: PublicTree, policy: CfrPolicy): Float32Array {
  let total = 0;
  for (let b = 0; b < tree.blockNode.length; b++) total += tree.blockSize[b];
  const out = new Float32Array(total);
  let off = 0;
  for (let b = 0; b < tree.blockNode.length; b++) {
    const view = out.subarray(off, off + tree.blockSize[b]);
    policy(tree.blockNode[b], view);
    off += tree.blockSize[b];
  }
  return out;
}

const MAGIC = "KBZSOLV1";

/** Encodes a binary save: magic, header length, JSON header (with the config), f32 strategies. */
export function encodeSave(header: Record<string, unknown>, strategies: Float32Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const pad = (4 - ((12 + json.length) % 4)) % 4;
  const out = new Uint8Array(12 + json.length + pad + strategies.byteLength);
  out.set(new TextEncoder().encode(MAGIC), 0);
  new DataView(out.buffer).setUint32(8, json.length + pad, true);
  out.set(json, 12);
  out.fill(0x20, 12 + json.length, 12 + json.length + pad);
  out.set(
    new Uint8Array(strategies.buffer, strategies.byteOffset, strategies.byteLength),
    12 + json.length + pad,
  );
  return out;
}

/** Decodes a binary save; errors name the file. */
export function decodeSave(
  bytes: Uint8Array,
  where: string,
): { header: Record<string, unknown>; strategies: Float32Array } {
  const magic = new TextDecoder().decode(bytes.subarray(0, 8));
  if (bytes.length < 12 || magic !== MAGIC) {
    throw new KibitzError("bad_save", `${where} is not a Kibitz solve save (no ${MAGIC} header)`);
  }
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
  if (12 + len > bytes.length || (bytes.length - 12 - len) % 4 !== 0) {
    throw new KibitzError("bad_save", `${where} is truncated or corrupt`);
  }
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + len)));
  } catch {
    throw new KibitzError("bad_save", `${where}: the header is not valid JSON`);
  }
  const data = bytes.slice(12 + len);
  return { header, strategies: new Float32Array(data.buffer, 0, data.byteLength / 4) };
}

/** EV (chips from the pot, same scale as the root) and equity per hand at one node. */
export interface NodeHandStats {
  ev: [number[], number[]];
  equity: [number[], number[]];
}

/**
 * Unnormalized counterfactual values of every hand of `p` at `node` against the opponent reach
 * `opp` there, under `policy` (the engine's traversal, written out so any node can be a start).
 * `onPlayerNode(n, values, opp)` sees the values at every player node below that `descend` allows.
 */
export function subtreeValues(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
  p: 0 | 1,
  opp: Float32Array,
  onPlayerNode?: (n: number, values: Float32Array, opp: Float32Array) => void,
): Float32Array {
  const o = (1 - p) as 0 | 1;
  const H = game.numHands[p], Ho = game.numHands[o];
  const visit = (n: number, opp: Float32Array, record: boolean): Float32Array => {
    const out = new Float32Array(H);
    const kind = tree.kind[n];
    if (kind !== CFR_PLAYER && kind !== CFR_CHANCE) {
      game.terminalValues(tree.terminal[n], p, opp, out, 0);
      return out;
    }
    const f = tree.firstChild[n], A = tree.numChildren[n];
    if (kind === CFR_CHANCE) {
      const bs = tree.blockedStart, bh = tree.blockedHands;
      for (let c = f; c < f + A; c++) {
        const r = opp.slice();
        for (let i = bs[o][c]; i < bs[o][c + 1]; i++) r[bh[o][i]] = 0;
        const v = visit(c, r, false);
        for (let i = bs[p][c]; i < bs[p][c + 1]; i++) v[bh[p][i]] = 0;
        const w = tree.chanceWeight[c];
        for (let h = 0; h < H; h++) out[h] += w * v[h];
      }
      return out;
    }
    const q = tree.player[n] as 0 | 1, Hq = game.numHands[q];
    const sig = new Float32Array(A * Hq);
    policy(n, sig);
    for (let a = 0; a < A; a++) {
      let r = opp;
      if (q !== p) {
        r = new Float32Array(Ho);
        for (let j = 0; j < Ho; j++) r[j] = opp[j] * sig[a * Hq + j];
      }
      const v = visit(f + a, r, record);
      for (let h = 0; h < H; h++) out[h] += q === p ? sig[a * H + h] * v[h] : v[h];
    }
    if (record) onPlayerNode?.(n, out, opp);
    return out;
  };
  return visit(node, opp, onPlayerNode !== undefined);
}

/**
 * Per-hand EV and equity of both players at every player node of the first street (before any
 * chance card), from one traversal per player that keeps the counterfactual values and the
 * opponent's reach at those nodes. EV(h) = pot/2 + value(h) / (compatible opponent reach);
 * equity is the all-in equity against the opponent's range as it reaches the node.
 */
export function firstStreetStats(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
): Map<number, NodeHandStats> {
  const stats = new Map<number, NodeHandStats>();
  const half = game.startingPot / 2;
  for (const p of [0, 1] as const) {
    const o = (1 - p) as 0 | 1;
    const H = game.numHands[p];
    subtreeValues(tree, game, policy, 0, p, game.initialWeights(o).slice(), (n, out, opp) => {
      const comp = new Float32Array(H);
      game.compatibleSums(p, opp, comp);
      const eq = game.equity(p, opp);
      const s = stats.get(n) ?? { ev: [[], []], equity: [[], []] } as NodeHandStats;
      s.ev[p] = Array.from(out, (x, h) => (comp[h] > 0 ? half + x / comp[h] : 0));
      s.equity[p] = Array.from(eq);
      stats.set(n, s);
    });
  }
  return stats;
}

/**
 * Summary at any node (a path of action and card labels from the root): both players' reach
 * along the path, the acting player's action frequencies and 13 x 13 grid weighted by its reach,
 * and per-hand EV and equity of both players there.
 */
export function nodeSummary(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
): RootSummary {
  const path: number[] = [];
  for (let n = node; n > 0; n = tree.parent[n]) path.push(n);
  path.reverse();
  const reach: [Float32Array, Float32Array] = [
    game.initialWeights(0).slice(),
    game.initialWeights(1).slice(),
  ];
  const board = [...game.board];
  let at = 0;
  for (const next of path) {
    const idx = next - tree.firstChild[at];
    if (tree.kind[at] === CFR_PLAYER) {
      const q = tree.player[at] as 0 | 1, Hq = game.numHands[q];
      const sig = new Float32Array(tree.numChildren[at] * Hq);
      policy(at, sig);
      for (let h = 0; h < Hq; h++) reach[q][h] *= sig[idx * Hq + h];
    } else {
      for (const q of [0, 1] as const) {
        const s = tree.blockedStart[q];
        for (let i = s[next]; i < s[next + 1]; i++) reach[q][tree.blockedHands[q][i]] = 0;
      }
      board.push(parseCardLabel(tree.label[next]));
    }
    at = next;
  }
  const half = game.startingPot / 2;
  const hands = ([0, 1] as const).map((p) => {
    const o = (1 - p) as 0 | 1;
    const comp = new Float32Array(game.numHands[p]);
    game.compatibleSums(p, reach[o], comp);
    const v = subtreeValues(tree, game, policy, node, p, reach[o]);
    const eq = game.equity(p, reach[o], board);
    return {
      labels: Array.from({ length: game.numHands[p] }, (_, h) => game.handLabel(p, h)),
      weights: Array.from(comp, (c, h) => c * reach[p][h]),
      ev: Array.from(v, (x, h) => (comp[h] > 0 ? half + x / comp[h] : 0)),
      equity: Array.from(eq),
    };
  }) as [HandStats, HandStats];
  return summarize(tree, game, policy, node, hands);
}

function parseCardLabel(label: string): number {
  return 4 * RANK_CHARS.indexOf(label[0]) + "cdhs".indexOf(label[1]);
}

/** Frequencies, grid and averages at `node` from per-hand stats weighted by deal reach. */
function summarize(
  tree: PublicTree,
  game: PostflopGame,
  policy: CfrPolicy,
  node: number,
  hands: [HandStats, HandStats],
): RootSummary {
  const avg = (s: HandStats, xs: number[]) => {
    let num = 0, den = 0;
    for (let h = 0; h < xs.length; h++) (num += s.weights[h] * xs[h]), (den += s.weights[h]);
    return den > 0 ? num / den : 0;
  };
  const actions: string[] = [];
  const frequencies: number[] = [];
  const grid: (number[] | null)[][] = Array.from({ length: 13 }, () => new Array(13).fill(null));
  if (tree.kind[node] === CFR_PLAYER) {
    const A = tree.numChildren[node], H = tree.numHands[tree.player[node]];
    const p = tree.player[node] as 0 | 1;
    const f = tree.firstChild[node];
    for (let c = f; c < f + A; c++) actions.push(tree.label[c]);
    const sig = new Float32Array(A * H);
    policy(node, sig);
    const s = hands[p];
    const cellW: number[][] = Array.from({ length: 169 }, () => new Array(A + 1).fill(0));
    for (let a = 0; a < A; a++) {
      frequencies.push(avg(s, Array.from({ length: H }, (_, h) => sig[a * H + h])));
    }
    const cards = game.cards[p];
    for (let h = 0; h < H; h++) {
      const { row, col } = gridCell(cards[2 * h], cards[2 * h + 1]);
      const cell = cellW[row * 13 + col];
      cell[A] += s.weights[h];
      for (let a = 0; a < A; a++) cell[a] += s.weights[h] * sig[a * H + h];
    }
    for (let i = 0; i < 169; i++) {
      const cell = cellW[i];
      if (cell[A] > 0) grid[Math.floor(i / 13)][i % 13] = cell.slice(0, A).map((x) => x / cell[A]);
    }
  }
  const player = tree.kind[node] !== CFR_PLAYER ? null : tree.player[node] === 0 ? "oop" : "ip";
  return {
    player,
    actions,
    frequencies,
    ev: [avg(hands[0], hands[0].ev), avg(hands[1], hands[1].ev)],
    equity: [avg(hands[0], hands[0].equity), avg(hands[1], hands[1].equity)],
    grid,
    hands,
  };
}
