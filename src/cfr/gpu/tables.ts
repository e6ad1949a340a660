import { KibitzError } from "../../errors.ts";
import type { CfrGame } from "../game.ts";
import { CFR_CHANCE, CFR_PLAYER, CFR_TERMINAL, type PublicTree } from "../tree.ts";
import type { ChunkPlan } from "./chunks.ts";
import { type KernelLayout, NODE_WORDS } from "./kernels.ts";

/** Per-terminal and per-board tables that the fold and showdown kernels read. */
export interface PokerTerminalTables {
  board: readonly number[];
  halfPot: readonly number[];
  rake: readonly number[];
  folder: readonly number[];
  orders: readonly {
    order: readonly [Int32Array, Int32Array];
    strength: readonly [Uint16Array, Uint16Array];
  }[];
  sameIn: readonly [Int32Array, Int32Array];
}

/** What the poker terminal kernels read from a postflop game (PostflopGame has all of it). */
export interface PokerTerminalSource {
  readonly cards: readonly [Uint8Array, Uint8Array];
  terminalTables(): PokerTerminalTables;
}

/** True when `game` exposes the poker terminal tables (fold and showdown kernels apply). */
export function isPokerSource(game: CfrGame): game is CfrGame & PokerTerminalSource {
  const g = game as Partial<PokerTerminalSource>;
  return typeof g.terminalTables === "function" && Array.isArray(g.cards) &&
    g.cards.length === 2;
}

/** Largest dense payoff data (bytes) built for a game without poker terminal tables. */
export const MAX_DENSE_BYTES = 64 << 20;

/** The aux buffer, its layout, and the dispatch ranges of a tree. */
export interface GpuTables {
  aux: Uint32Array;
  layout: KernelLayout;
  denseCount: number;
  foldCount: number;
  showdownCount: number;
  /** Elements per block offset (f32 store offsets), blocks + 1 entries. */
  blockOffsets: Uint32Array;
  /** Per segment of the plan: [first, count] of its dense, fold and showdown terminals. */
  ranges: { dense: [number, number]; fold: [number, number]; showdown: [number, number] }[];
  /** Per segment: aux offsets of its per-level down and up node lists (empty lists: offset -1). */
  lists: { down: [number, number][]; up: [number, number][] }[];
  /** Per segment and player: aux offset and length of its block list; its parts' offset and count. */
  blockLists: [[number, number], [number, number]][];
  /** Per segment, level and player: aux offset and length of its block list. */
  levelBlockLists: [[number, number], [number, number]][][];
  parts: [number, number][];
  /** aux offset and count of the (cut node, accumulator row) pairs. */
  cutRows: [number, number];
}

class Words {
  data: number[] = [];
  push(...x: number[]): number {
    const at = this.data.length;
    for (const v of x) this.data.push(v >>> 0);
    return at;
  }
  all(x: ArrayLike<number>): number {
    const at = this.data.length;
    for (let i = 0; i < x.length; i++) this.data.push(x[i] >>> 0);
    return at;
  }
  f32(x: number): number {
    F[0] = x;
    return U[0];
  }
}
const F = new Float32Array(1), U = new Uint32Array(F.buffer);

/** Builds the aux tables of `tree` (node table, blocks, isomorphs, blocked hands, terminals). */
export function buildTables(
  tree: PublicTree,
  game: CfrGame,
  algorithm: KernelLayout["algorithm"],
  plan: ChunkPlan,
): GpuTables {
  const [h0, h1] = tree.numHands;
  const hm = Math.max(h0, h1);
  const w = new Words();
  for (let n = 0; n < tree.size; n++) {
    const kind = tree.kind[n], pl = tree.player[n] < 0 ? 3 : tree.player[n];
    w.push(
      kind | (pl << 2) | (tree.numChildren[n] << 4),
      tree.firstChild[n],
      tree.block[n] < 0 ? 0 : tree.block[n],
      n === 0 ? 0 : tree.parent[n],
    );
  }
  if (w.data.length !== tree.size * NODE_WORDS) throw new Error("node table size");
  const blockOffsets = new Uint32Array(tree.blockNode.length + 1);
  for (let b = 0; b < tree.blockNode.length; b++) {
    blockOffsets[b + 1] = blockOffsets[b] + tree.blockSize[b];
  }
  const blockOff = w.all(blockOffsets);
  // Permutations, flattened; isomorph entries hold (weight, offset for player 0, for player 1).
  const permStart: number[] = [];
  let permLen = 0;
  for (const perm of tree.permutations) permStart.push(permLen), permLen += perm.length;
  const iso = w.data.length;
  for (let k = 0; k < tree.isoWeight.length; k++) {
    w.push(w.f32(tree.isoWeight[k]), permStart[tree.isoPerm[0][k]], permStart[tree.isoPerm[1][k]]);
  }
  const perm = w.data.length;
  for (const p of tree.permutations) w.all(p);
  // Card removal: each child of a chance node (a "deal") has a bit mask per player of the hands its
  // outcome blocks; every node names its nearest deal at or above it, every deal the next one up.
  const NONE = 0xffffffff, aw = Math.ceil(hm / 32);
  const dealOf = new Uint32Array(tree.size).fill(NONE);
  const dealUp: number[] = [];
  const dealInfo: number[] = [];
  const masks: number[] = [];
  for (let n = 1; n < tree.size; n++) {
    const par = tree.parent[n];
    if (tree.kind[par] !== CFR_CHANCE) {
      dealOf[n] = dealOf[par];
      continue;
    }
    const k = dealUp.length;
    dealUp.push(dealOf[par]);
    dealInfo.push(w.f32(tree.chanceWeight[n]), tree.isoStart[n], tree.isoStart[n + 1]);
    dealOf[n] = k;
    for (const p of [0, 1] as const) {
      const m = new Array<number>(aw).fill(0);
      const ss = tree.blockedStart[p], sh = tree.blockedHands[p];
      for (let i = ss[n]; i < ss[n + 1]; i++) m[sh[i] >>> 5] |= 1 << (sh[i] & 31);
      for (const x of m) masks.push(x);
    }
  }
  const blocked = w.all(dealOf);
  const dealUpAt = w.all(dealUp);
  const dealInfoAt = w.all(dealInfo);
  // Poker: a deal blocks exactly the hands holding its card; then one card per deal replaces the
  // two bit masks (F1: 0.5 MB instead of 6 MB).
  const dealCards = isPokerSource(game) ? cardsOfDeals(tree, game.cards) : null;
  const masksAt = dealCards ? w.all(dealCards) : w.all(masks);
  const w0 = w.data.length;
  for (const x of game.initialWeights(0)) w.push(w.f32(x));
  const w1 = w.data.length;
  for (const x of game.initialWeights(1)) w.push(w.f32(x));

  // Terminals segment by segment (node order inside each), so each segment's are one range.
  const terminals: number[] = plan.segments.flatMap((s) => s.terminals);
  const segOfTerm = terminals.map((n) => plan.nodeSeg[n]);
  const nseg = plan.segments.length;
  // Node rows, per-segment node lists, block lists, blocks' segments, players and inp offsets, parts.
  const slotAt = w.all(plan.slot);
  const lists = plan.segments.map((seg) => {
    const put = (l: number[]): [number, number] => [l.length > 0 ? w.all(l) : 0, l.length];
    return { down: seg.down.map(put), up: seg.up.map(put) };
  });
  type Pair = [[number, number], [number, number]];
  const putBlocks = (ls: [number[], number[]]) =>
    ls.map((l) => [l.length > 0 ? w.all(l) : 0, l.length]) as Pair;
  const blockLists = plan.levelUpdates
    ? plan.segments.map((): Pair => [[0, 0], [0, 0]])
    : plan.segments.map((seg) => putBlocks(seg.blocks));
  const levelBlockLists = plan.levelUpdates
    ? plan.segments.map((seg) => seg.levelBlocks.map(putBlocks))
    : [];
  const parts = plan.segments.map((seg): [number, number] => [
    seg.parts.length > 0 ? w.all(seg.parts) : 0,
    seg.parts.length / 5,
  ]);
  const cutRows: [number, number] = [
    plan.cutRows.length > 0 ? w.all(plan.cutRows) : 0,
    plan.cutRows.length / 2,
  ];
  const bsegAt = w.all(plan.blockSeg);
  const binpAt = w.all(plan.blockInp);
  const bplayer = new Uint32Array(tree.blockNode.length);
  for (let b = 0; b < bplayer.length; b++) bplayer[b] = tree.player[tree.blockNode[b]];
  const bplayerAt = w.all(bplayer);
  const ranges = Array.from({ length: nseg }, () => ({
    dense: [0, 0] as [number, number],
    fold: [0, 0] as [number, number],
    showdown: [0, 0] as [number, number],
  }));
  const layout: KernelLayout = {
    h0,
    h1,
    hm,
    maxActions: tree.maxActions,
    algorithm,
    blockOff,
    iso,
    perm,
    blocked,
    dealUp: dealUpAt,
    dealCards: dealCards !== null,
    dealInfo: dealInfoAt,
    masks: masksAt,
    aw,
    w0,
    w1,
    dense: 0,
    mat0: 0,
    mat1: 0,
    cards0: 0,
    cards1: 0,
    same0: 0,
    same1: 0,
    hold0: 0,
    hold1: 0,
    fold: 0,
    showdown: 0,
    boards: 0,
    maxNT: 1,
    results: 0,
    quant: null,
    slot: slotAt,
    blockSeg: bsegAt,
    blockInp: binpAt,
    blockPlayer: bplayerAt,
    elems: blockOffsets[blockOffsets.length - 1],
    inPlace: isPokerSource(game),
  };
  // Per segment [first, count] of a kind of terminal, from each terminal's segment in table order.
  const span = (segs: number[], pick: (r: (typeof ranges)[number]) => [number, number]) => {
    segs.forEach((s, i) => {
      const r = pick(ranges[s]);
      if (r[1] === 0) r[0] = i;
      r[1]++;
    });
  };
  let denseCount = 0, foldCount = 0, showdownCount = 0;
  if (isPokerSource(game)) {
    const tt = game.terminalTables();
    const cardWords = (p: 0 | 1) => {
      const c = game.cards[p], at = w.data.length;
      for (let h = 0; h < tree.numHands[p]; h++) w.push(c[2 * h] | (c[2 * h + 1] << 8));
      return at;
    };
    layout.cards0 = cardWords(0), layout.cards1 = cardWords(1);
    layout.same0 = w.all(tt.sameIn[0]);
    layout.same1 = w.all(tt.sameIn[1]);
    const holders = (p: 0 | 1) => {
      const c = game.cards[p], lists: number[][] = Array.from({ length: 52 }, () => []);
      for (let h = 0; h < tree.numHands[p]; h++) {
        lists[c[2 * h]].push(h), lists[c[2 * h + 1]].push(h);
      }
      const at = w.data.length;
      let s = 0;
      for (let k = 0; k < 52; k++) w.push(s), s += lists[k].length;
      w.push(s);
      for (const l of lists) w.all(l);
      return at;
    };
    layout.hold0 = holders(0), layout.hold1 = holders(1);
    layout.fold = w.data.length;
    const sd: number[] = [], foldSeg: number[] = [], sdSeg: number[] = [];
    terminals.forEach((n, i) => {
      const id = tree.terminal[n];
      const halfPot = tt.halfPot[id], rake = tt.rake[id];
      if (tt.board[id] < 0) {
        w.push(n, tt.folder[id], w.f32(halfPot - rake), w.f32(-halfPot));
        foldCount++;
        foldSeg.push(segOfTerm[i]);
      } else {
        sd.push(n, tt.board[id], w.f32(halfPot - rake), w.f32(-halfPot), w.f32(-rake / 2));
        sdSeg.push(segOfTerm[i]);
      }
    });
    span(foldSeg, (r) => r.fold);
    span(sdSeg, (r) => r.showdown);
    layout.showdown = w.all(sd);
    showdownCount = sd.length / 5;
    layout.maxNT = boardTables(w, game, tt.orders, layout);
  } else {
    const bytes = terminals.length * h0 * h1 * 8;
    if (bytes > MAX_DENSE_BYTES) {
      throw new KibitzError(
        "gpu_unsupported",
        `${game.name}: the GPU backend evaluates this game's terminals as dense payoff matrices, which need ${
          (bytes / 2 ** 20).toFixed(0)
        } MiB here (limit ${MAX_DENSE_BYTES / 2 ** 20} MiB); use the CPU backend`,
      );
    }
    // Column j of terminal t's matrix for player p: terminalValues against a unit reach on hand j.
    layout.dense = w.data.length;
    for (let k = 0; k < terminals.length; k++) w.push(terminals[k], k);
    denseCount = terminals.length;
    span(segOfTerm, (r) => r.dense);
    for (const p of [0, 1] as const) {
      const Hp = tree.numHands[p], Ho = tree.numHands[1 - p];
      const at = w.data.length;
      if (p === 0) layout.mat0 = at;
      else layout.mat1 = at;
      const mat = new Float32Array(terminals.length * Hp * Ho);
      const unit = new Float32Array(Ho), col = new Float32Array(Hp);
      for (let k = 0; k < terminals.length; k++) {
        for (let j = 0; j < Ho; j++) {
          unit.fill(0), unit[j] = 1;
          game.terminalValues(tree.terminal[terminals[k]], p, unit, col, 0);
          for (let h = 0; h < Hp; h++) mat[(k * Hp + h) * Ho + j] = col[h];
        }
      }
      const u = new Uint32Array(mat.buffer);
      for (let i = 0; i < u.length; i++) w.data.push(u[i]);
    }
  }
  for (let n = 0; n < tree.size; n++) {
    const k = tree.kind[n];
    if (k !== CFR_PLAYER && k !== CFR_CHANCE && k !== CFR_TERMINAL) throw new Error("node kind");
  }
  return {
    aux: Uint32Array.from(w.data),
    layout,
    denseCount,
    foldCount,
    showdownCount,
    blockOffsets,
    ranges,
    lists,
    blockLists,
    levelBlockLists,
    parts,
    cutRows,
  };
}

/**
 * The card each deal (child of a chance node, in node order) deals, when the hands it blocks for
 * both players are exactly those holding that card (255: blocks none); null if a deal is not so.
 */
function cardsOfDeals(tree: PublicTree, cards: readonly [Uint8Array, Uint8Array]): number[] | null {
  const holders = ([0, 1] as const).map((p) => {
    const l: number[][] = Array.from({ length: 52 }, () => []);
    for (let h = 0; h < tree.numHands[p]; h++) {
      l[cards[p][2 * h]].push(h), l[cards[p][2 * h + 1]].push(h);
    }
    return l;
  });
  const same = (a: number[], b: ArrayLike<number>, lo: number, hi: number) => {
    if (a.length !== hi - lo) return false;
    const s = new Set(a);
    for (let i = lo; i < hi; i++) if (!s.has(b[i])) return false;
    return true;
  };
  const out: number[] = [];
  for (let n = 1; n < tree.size; n++) {
    if (tree.kind[tree.parent[n]] !== CFR_CHANCE) continue;
    const [s0, s1] = tree.blockedStart, [b0, b1] = tree.blockedHands;
    const cand: number[] = [];
    if (s0[n + 1] > s0[n]) cand.push(cards[0][2 * b0[s0[n]]], cards[0][2 * b0[s0[n]] + 1]);
    else if (s1[n + 1] > s1[n]) cand.push(cards[1][2 * b1[s1[n]]], cards[1][2 * b1[s1[n]] + 1]);
    else {
      out.push(255);
      continue;
    }
    const c = cand.find((c) =>
      same(holders[0][c], b0, s0[n], s0[n + 1]) && same(holders[1][c], b1, s1[n], s1[n + 1])
    );
    if (c === undefined) return null;
    out.push(c);
  }
  return out;
}

/**
 * Per river board and player p (the hand's side) against o: o's live hands in ascending strength,
 * o's hands per card (in the same order), and per live hand of p its position counts (hands of o
 * strictly weaker, weaker or equal) and its two cards' counts below each position. Returns the
 * largest live-hand count of a board.
 */
function boardTables(
  w: Words,
  game: PokerTerminalSource,
  orders: ReturnType<PokerTerminalSource["terminalTables"]>["orders"],
  layout: KernelLayout,
): number {
  const info: number[][] = [];
  let maxNT = 1;
  for (const bo of orders) {
    for (const p of [0, 1] as const) {
      const o = (1 - p) as 0 | 1;
      const theirs = bo.order[o], ts = bo.strength[o], oc = game.cards[o];
      const mine = bo.order[p], ms = bo.strength[p], pc = game.cards[p];
      const nT = theirs.length;
      maxNT = Math.max(maxNT, nT);
      const tOff = w.all(theirs);
      const lists: number[][] = Array.from({ length: 52 }, () => []);
      for (let k = 0; k < nT; k++) {
        const h = theirs[k];
        lists[oc[2 * h]].push(k), lists[oc[2 * h + 1]].push(k);
      }
      const eOff = w.data.length;
      for (const l of lists) for (const k of l) w.push(theirs[k]);
      const cs = w.data.length;
      let s = 0;
      for (let c = 0; c < 52; c++) w.push(s), s += lists[c].length;
      w.push(s);
      const below = (l: number[], pos: number) => lowerBound(l, pos);
      const mOff = w.data.length;
      for (let i = 0; i < mine.length; i++) {
        const h = mine[i], str = ms[i];
        const wc = lowerBound(ts, str), ls = upperBound(ts, str);
        const l1 = lists[pc[2 * h]], l2 = lists[pc[2 * h + 1]];
        w.push(
          h,
          wc | (ls << 16),
          below(l1, wc) | (below(l2, wc) << 8) | (below(l1, ls) << 16) | (below(l2, ls) << 24),
        );
      }
      info.push([tOff, nT, eOff, cs, mOff, mine.length]);
    }
  }
  layout.boards = w.data.length;
  for (const x of info) w.push(...x);
  return maxNT;
}

function lowerBound(a: ArrayLike<number>, x: number): number {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

function upperBound(a: ArrayLike<number>, x: number): number {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m] <= x) lo = m + 1;
    else hi = m;
  }
  return lo;
}
