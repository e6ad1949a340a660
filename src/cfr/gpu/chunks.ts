import { CFR_CHANCE, CFR_TERMINAL, type PublicTree } from "../tree.ts";

/**
 * How a GPU solve splits the tree so that its per-node vectors need not cover every node at once.
 *
 * The "cut" chance nodes are the chance nodes with no chance node above them (the turn deal of a
 * flop spot, the river deal of a turn spot). Segment 0 is the upper tree (every node not below a
 * cut node, cut nodes included); segments 1.. are chunks: runs of consecutive subtrees rooted at
 * the children of the cut nodes (in node order, so a run never interleaves with other subtrees).
 * Upper nodes keep their own vector rows; every chunk reuses the same rows after them, one chunk at
 * a time: per traverser the upper down pass runs first, then each chunk's down pass, terminals, up
 * pass and store updates, with its cut nodes' values accumulated chunk after chunk (in the same
 * order as one sum, so results are bit-identical to one chunk), then the upper up pass. Without a
 * cut (river spots, non-poker games) or with one chunk, segment 0 is the whole tree.
 */
export interface ChunkPlan {
  /** Segment 0 (upper tree, or the whole tree) then the chunks. */
  segments: Segment[];
  /** Vector row of each node (its reach and values are `HM` floats at row * HM). */
  slot: Uint32Array;
  /** Segment of each node. */
  nodeSeg: Uint32Array;
  /** Store-update group of each block: its segment, or (chunked) segment x levels + level. */
  blockSeg: Uint32Array;
  /**
   * Chunked: each level's blocks are updated right after that level's up pass (their instant
   * regrets need only one level of one segment at a time); unchunked: once after the up pass.
   */
  levelUpdates: boolean;
  /** Offset in the instant-regret buffer of each block's first element (quantized stores). */
  blockInp: Uint32Array;
  /** Vector rows allocated: upper rows plus the largest chunk's. */
  rows: number;
  /** Elements of the instant-regret buffer's half: upper elements plus the largest chunk's. */
  inpHalf: number;
  /** Cut chance nodes (values accumulated across chunks; empty when unchunked). */
  cut: number[];
  /**
   * (cut node, accumulator row) pairs: a cut node's values build up in a row of their own (its
   * own row keeps its reach, which every chunk's down pass reads, when reach and values share
   * rows) and are copied to its row once all chunks are done.
   */
  cutRows: number[];
}

/** One segment's node lists and parts. */
export interface Segment {
  /** Per level: the segment's nodes there (down pass). */
  down: number[][];
  /** Per level: the segment's non-terminal nodes there, cut nodes left out (up pass). */
  up: number[][];
  /** Per player: the segment's blocks of that player (store updates). */
  blocks: [number[], number[]];
  /** Per level and player: the segment's blocks there (store updates level by level). */
  levelBlocks: [number[], number[]][];
  /** Chunks: (cut node, first child, end child, 1 if its first child else 0, accumulator row). */
  parts: number[];
  /** Terminal nodes, in node order. */
  terminals: number[];
  rows: number;
  elems: number;
}

/** Per-node costs the planner weighs: bytes per vector row and per store element of a chunk. */
export interface ChunkCosts {
  rowBytes: number;
  elemBytes: number;
}

/** What limits the chunking: a chunk count to aim for, or the bytes a chunk may take. */
export interface ChunkTarget {
  chunks?: number;
  chunkBytes?: number;
}

/** Cut nodes and chunk roots of `tree`, and each lower node's root (-1 for upper nodes). */
export function cutOf(tree: PublicTree): { cut: number[]; roots: number[]; rootOf: Int32Array } {
  const below = new Uint8Array(tree.size), rootOf = new Int32Array(tree.size).fill(-1);
  const cut: number[] = [], roots: number[] = [];
  for (let n = 1; n < tree.size; n++) {
    const p = tree.parent[n];
    if (below[p]) below[n] = 1, rootOf[n] = rootOf[p];
    else if (tree.kind[p] === CFR_CHANCE) below[n] = 1, rootOf[n] = n, roots.push(n);
  }
  for (let n = 0; n < tree.size; n++) {
    if (tree.kind[n] === CFR_CHANCE && !below[n]) cut.push(n);
  }
  return { cut, roots, rootOf };
}

/** Bytes of a chunk of each root's subtree, and of the upper tree, at `costs`. */
export function subtreeCosts(
  tree: PublicTree,
  costs: ChunkCosts,
): { upper: number; per: Map<number, number>; roots: number[]; rootOf: Int32Array } {
  const { roots, rootOf } = cutOf(tree);
  const per = new Map<number, number>();
  for (const r of roots) per.set(r, 0);
  let upper = 0;
  for (let n = 0; n < tree.size; n++) {
    const b = tree.block[n];
    const c = costs.rowBytes + (b >= 0 ? tree.blockSize[b] * costs.elemBytes : 0);
    if (rootOf[n] < 0) upper += c;
    else per.set(rootOf[n], per.get(rootOf[n])! + c);
  }
  return { upper, per, roots, rootOf };
}

/** Per chunk root: rows and elements per level of its subtree (cached per tree: plans bisect). */
const ROOT_STATS = new WeakMap<PublicTree, {
  cut: number[];
  roots: number[];
  rootOf: Int32Array;
  rootRows: Float64Array;
  rootLevel: Float64Array;
}>();

function rootStats(tree: PublicTree) {
  const hit = ROOT_STATS.get(tree);
  if (hit) return hit;
  const { cut, roots, rootOf } = cutOf(tree);
  const L = tree.levels, idx = new Map<number, number>();
  roots.forEach((r, i) => idx.set(r, i));
  const rootRows = new Float64Array(roots.length), rootLevel = new Float64Array(roots.length * L);
  for (let n = 0; n < tree.size; n++) {
    if (rootOf[n] < 0) continue;
    const i = idx.get(rootOf[n])!, b = tree.block[n];
    rootRows[i]++;
    if (b >= 0) rootLevel[i * L + tree.depth[n]] += tree.blockSize[b];
  }
  const stats = { cut, roots, rootOf, rootRows, rootLevel };
  ROOT_STATS.set(tree, stats);
  return stats;
}

/**
 * Splits `tree` into chunks of consecutive subtrees, each at most `target.chunkBytes` (or about
 * 1/`target.chunks` of the lower tree), a subtree never split. One chunk (or no cut): unchunked.
 */
export function planChunks(tree: PublicTree, costs: ChunkCosts, target: ChunkTarget): ChunkPlan {
  // A chunk costs its rows and (store updates level by level) its largest level's elements.
  const { roots, rootOf, rootRows, rootLevel } = rootStats(tree);
  const L = tree.levels;
  const levelCost = (i: number) => {
    let m = 0;
    for (let d = 0; d < L; d++) m = Math.max(m, rootLevel[i * L + d]);
    return rootRows[i] * costs.rowBytes + m * costs.elemBytes;
  };
  let total = 0;
  for (let i = 0; i < roots.length; i++) total += levelCost(i);
  let cap = Infinity;
  if (target.chunkBytes !== undefined) cap = target.chunkBytes;
  if (target.chunks !== undefined && target.chunks > 1) {
    cap = Math.min(cap, Math.ceil(total / target.chunks));
  }
  // Greedy runs of roots in node order.
  const chunkOfRoot = new Map<number, number>();
  const level = new Float64Array(L);
  let chunks = 0, rows = Infinity;
  for (let i = 0; i < roots.length; i++) {
    let m = 0;
    for (let d = 0; d < L; d++) m = Math.max(m, level[d] + rootLevel[i * L + d]);
    const c = (rows + rootRows[i]) * costs.rowBytes + m * costs.elemBytes;
    if (c > cap || chunks === 0) chunks++, rows = 0, level.fill(0);
    rows += rootRows[i];
    for (let d = 0; d < L; d++) level[d] += rootLevel[i * L + d];
    chunkOfRoot.set(roots[i], chunks);
  }
  const chunked = roots.length > 0 && chunks > 1;
  const nodeSeg = new Uint32Array(tree.size);
  if (chunked) {
    for (let n = 0; n < tree.size; n++) {
      nodeSeg[n] = rootOf[n] < 0 ? 0 : chunkOfRoot.get(rootOf[n])!;
    }
  }
  const nseg = chunked ? chunks + 1 : 1;
  const segments: Segment[] = [];
  for (let s = 0; s < nseg; s++) {
    segments.push({
      down: Array.from({ length: tree.levels }, () => []),
      up: Array.from({ length: tree.levels }, () => []),
      blocks: [[], []],
      levelBlocks: Array.from({ length: tree.levels }, () => [[], []] as [number[], number[]]),
      parts: [],
      terminals: [],
      rows: 0,
      elems: 0,
    });
  }
  const cut = chunked ? rootStats(tree).cut : [];
  const isCut = new Uint8Array(tree.size);
  for (const c of cut) isCut[c] = 1;
  const slot = new Uint32Array(tree.size);
  const blockSeg = new Uint32Array(tree.blockNode.length);
  const blockInp = new Uint32Array(tree.blockNode.length);
  const levelUpdates = chunked;
  const levelElems = new Float64Array(nseg * L);
  for (let n = 0; n < tree.size; n++) {
    const seg = segments[nodeSeg[n]], d = tree.depth[n];
    slot[n] = seg.rows++;
    seg.down[d].push(n);
    if (tree.kind[n] === CFR_TERMINAL) seg.terminals.push(n);
    else if (!isCut[n]) seg.up[d].push(n);
    const b = tree.block[n];
    if (b >= 0) {
      const g = nodeSeg[n] * L + d;
      blockSeg[b] = levelUpdates ? g : nodeSeg[n];
      blockInp[b] = levelUpdates ? levelElems[g] : seg.elems;
      levelElems[g] += tree.blockSize[b];
      seg.elems += tree.blockSize[b];
      seg.blocks[tree.player[n] as 0 | 1].push(b);
      seg.levelBlocks[d][tree.player[n] as 0 | 1].push(b);
    }
  }
  const upperRows = segments[0].rows, upperElems = segments[0].elems;
  rows = upperRows;
  let inpHalf = upperElems;
  for (let s = 1; s < nseg; s++) {
    rows = Math.max(rows, upperRows + segments[s].rows);
    inpHalf = Math.max(inpHalf, upperElems + segments[s].elems);
  }
  for (let n = 0; n < tree.size; n++) {
    if (nodeSeg[n] > 0) slot[n] += upperRows;
  }
  if (levelUpdates) {
    inpHalf = 0;
    for (const x of levelElems) inpHalf = Math.max(inpHalf, x);
  } else {
    for (let b = 0; b < blockSeg.length; b++) if (blockSeg[b] > 0) blockInp[b] += upperElems;
  }
  // Parts: each cut node's children in a chunk form one contiguous range.
  const cutRows: number[] = [];
  for (const c of cut) {
    const acc = rows++;
    cutRows.push(c, acc);
    const first = tree.firstChild[c], end = first + tree.numChildren[c];
    let s0 = first;
    for (let k = first + 1; k <= end; k++) {
      if (k === end || nodeSeg[k] !== nodeSeg[s0]) {
        segments[nodeSeg[s0]].parts.push(c, s0, k, s0 === first ? 1 : 0, acc);
        s0 = k;
      }
    }
  }
  return {
    segments,
    slot,
    nodeSeg,
    blockSeg,
    levelUpdates,
    blockInp,
    rows,
    inpHalf,
    cut,
    cutRows,
  };
}
