import { KibitzError } from "../errors.ts";
import type { CfrGame, CfrIsomorph } from "./game.ts";

/** Node kinds stored in `PublicTree.kind`. */
export const CFR_PLAYER = 0, CFR_CHANCE = 1, CFR_TERMINAL = 2;

/**
 * A game's public tree as flat struct-of-arrays, in breadth-first order: nodes of depth d occupy
 * [levelStart[d], levelStart[d+1]) and the children of a node are the contiguous range
 * [firstChild, firstChild + numChildren). Player node i owns storage block `block[i]` of
 * actions x hands(acting player) elements, laid out action-major (element a * hands + h); blocks are
 * numbered in node order, so the blocks of one level are contiguous too.
 *
 * A GPU backend processes one level per dispatch over (node of the level) x (hand): a top-down pass
 * writes each node's opponent reach from its parent's (times the parent's strategy at opponent
 * nodes, with blocked hands zeroed below chance nodes), terminals are evaluated per level, and a
 * bottom-up pass reduces each node's children (a contiguous range one level down) into its values
 * and updates its regret and strategy blocks. The CPU backend (CfrSolver) walks the same arrays
 * depth-first with one scratch vector per depth instead of one per node. walk.ts spells out each
 * step (reach at actions and chance outcomes, terminals, value reductions) once for every walk.
 */
export interface PublicTree {
  /** Game name. */
  game: string;
  /** Number of nodes. */
  size: number;
  /** Hands of player 0 and player 1. */
  numHands: readonly [number, number];
  /** CFR_PLAYER, CFR_CHANCE or CFR_TERMINAL per node. */
  kind: Uint8Array;
  /** Acting player for player nodes, -1 otherwise. */
  player: Int8Array;
  /** Depth of each node (root 0). */
  depth: Uint16Array;
  /** Parent node (-1 for the root). */
  parent: Int32Array;
  /** First child index. */
  firstChild: Uint32Array;
  /** Number of children (actions or chance outcomes). */
  numChildren: Uint32Array;
  /** levels+1 offsets: level d is nodes [levelStart[d], levelStart[d+1]). */
  levelStart: Uint32Array;
  /** Storage block of a player node (-1 otherwise); blocks are numbered in node order. */
  block: Int32Array;
  /** Player node of each block. */
  blockNode: Uint32Array;
  /** Element count of each block: actions x hands of the acting player. */
  blockSize: Uint32Array;
  /** The game's terminal id for terminal nodes (-1 otherwise). */
  terminal: Int32Array;
  /** For a child of a chance node, the outcome's probability weight (1 otherwise). */
  chanceWeight: Float32Array;
  /** Per player: CSR offsets (size+1) into `blockedHands` of the hands a node's incoming outcome blocks. */
  blockedStart: [Uint32Array, Uint32Array];
  /** Per player: hands blocked by the chance outcome leading into each node. */
  blockedHands: [Uint32Array, Uint32Array];
  /** CSR offsets (size+1) into the iso* arrays: the isomorphs of the outcome leading into each node. */
  isoStart: Uint32Array;
  /** Weight of each isomorph. */
  isoWeight: Float32Array;
  /** Per player: index into `permutations` of each isomorph's hand relabelling. */
  isoPerm: [Uint32Array, Uint32Array];
  /** Distinct hand permutations used by isomorphs. */
  permutations: Uint32Array[];
  /** Label of the edge leading into each node (action or outcome; "" for the root). */
  label: string[];
  /** Largest number of children of any node. */
  maxChildren: number;
  /** Largest number of actions of any player node (sizes the per-level scratch of the traversals). */
  maxActions: number;
  /** Number of levels. */
  levels: number;
}

const EMPTY: number[] = [];

type ColumnArray = Uint8Array | Int8Array | Uint16Array | Int32Array | Uint32Array | Float32Array;

/**
 * One column of buildTree: a typed array that grows by doubling. JS number arrays would put every
 * node's fields on V8's heap (F1's 512k nodes: about 100 MB of heap at the expansion's peak, with
 * the garbage of each growth), where typed arrays free their old buffers outright.
 */
class Column<T extends ColumnArray> {
  a: T;
  n = 0;
  constructor(private readonly make: (n: number) => T, capacity = 1024) {
    this.a = make(Math.max(1, capacity));
  }
  push(x: number): void {
    if (this.n === this.a.length) this.grow(this.n + 1);
    this.a[this.n++] = x;
  }
  set(i: number, x: number): void {
    if (i >= this.a.length) this.grow(i + 1);
    this.a[i] = x;
    if (i >= this.n) this.n = i + 1;
  }
  private grow(need: number): void {
    const b = this.make(Math.max(need, 2 * this.a.length));
    b.set(this.a as never);
    this.a = b;
  }
  /** The filled part as an array of its own length (and of the same kind of buffer). */
  done(): T {
    if (this.n === this.a.length) return this.a;
    const b = this.make(this.n);
    b.set(this.a.subarray(0, this.n) as never);
    return b;
  }
}

/**
 * Walks the game's public tree breadth-first and stores it as a flat PublicTree. `expectedNodes`
 * (the size where the game can count it ahead, as memory.ts gameSize does) sizes the columns once:
 * growing them leaves the freed buffers fragmenting the allocator's heap (F1: 33 MB more resident).
 * `shared` builds the arrays in SharedArrayBuffers, for a solve whose worker threads view them:
 * moving them there afterwards leaves the freed copies fragmenting it too (F1: about 25 MB).
 */
export function buildTree<S>(
  game: CfrGame<S>,
  maxNodes = 50_000_000,
  expectedNodes = 1024,
  shared = false,
): PublicTree {
  const Buf = shared ? SharedArrayBuffer : ArrayBuffer;
  const u8 = (n: number) => new Uint8Array(new Buf(n)),
    i8 = (n: number) => new Int8Array(new Buf(n));
  const u16 = (n: number) => new Uint16Array(new Buf(2 * n));
  const i32 = (n: number) => new Int32Array(new Buf(4 * n));
  const u32 = (n: number) => new Uint32Array(new Buf(4 * n));
  const f32 = (n: number) => new Float32Array(new Buf(4 * n));
  const cap = Math.min(expectedNodes, maxNodes) + 1;
  const kinds = new Column(u8, cap), players = new Column(i8, cap), depths = new Column(u16, cap);
  const parents = new Column(i32, cap), firstChild = new Column(u32, cap);
  const numChildren = new Column(u32, cap), terminals = new Column(i32, cap);
  const weights = new Column(f32, cap), labels: string[] = [];
  // Blocked hands, flat (CSR): blockedEnd[p][node] = end of the node's list in blockedFlat[p].
  const blockedFlat = [new Column(u32), new Column(u32)] as const;
  const blockedEnd = [new Column(u32, cap + 1), new Column(u32, cap + 1)] as const;
  blockedEnd[0].push(0), blockedEnd[1].push(0);
  const levelStart: number[] = [0];
  const isoCount = new Column(u32, cap), isoWeight = new Column(f32);
  const isoPerm = [new Column(u32), new Column(u32)] as const;
  isoCount.push(0);
  const permutations: Uint32Array[] = [], permIndex = new Map<Uint32Array, number>();
  const interned = new Map<string, string>();
  let level: S[] = [game.root()];
  kinds.push(0);
  players.push(-1), depths.push(0), parents.push(-1), weights.push(1), labels.push("");
  pushBlocked(EMPTY, 0), pushBlocked(EMPTY, 1); // the root's (empty) lists
  let base = 0;
  for (let d = 0; level.length > 0; d++) {
    const next: S[] = [];
    for (let i = 0; i < level.length; i++) {
      const id = base + i;
      const node = game.describe(level[i]);
      const childStart = base + level.length + next.length;
      let n = 0;
      if (node.kind === "player") {
        n = node.actions.length;
        if (n < 1) {
          throw new KibitzError("bad_game", `${game.name}: player node ${id} has no actions`);
        }
        if (node.player !== 0 && node.player !== 1) {
          throw new KibitzError("bad_game", `${game.name}: node ${id} has player ${node.player}`);
        }
        kinds.set(id, CFR_PLAYER), players.set(id, node.player), terminals.set(id, -1);
        for (let a = 0; a < n; a++) {
          pushChild(id, d + 1, 1, node.actions[a], EMPTY, EMPTY);
          next.push(game.child(level[i], a));
        }
      } else if (node.kind === "chance") {
        n = node.outcomes.length;
        if (n < 1) {
          throw new KibitzError("bad_game", `${game.name}: chance node ${id} has no outcomes`);
        }
        kinds.set(id, CFR_CHANCE), players.set(id, -1), terminals.set(id, -1);
        for (let c = 0; c < n; c++) {
          const o = node.outcomes[c];
          if (!(o.weight >= 0) || !Number.isFinite(o.weight)) {
            throw new KibitzError(
              "bad_game",
              `${game.name}: outcome ${o.label} has weight ${o.weight}`,
            );
          }
          pushChild(
            id,
            d + 1,
            o.weight,
            o.label,
            o.blocked[0],
            o.blocked[1],
          );
          for (const iso of o.isomorphs ?? []) addIsomorph(iso);
          next.push(game.child(level[i], c));
        }
      } else {
        kinds.set(id, CFR_TERMINAL), players.set(id, -1), terminals.set(id, node.terminal);
      }
      firstChild.set(id, childStart), numChildren.set(id, n);
      if (childStart + n > maxNodes) {
        throw new KibitzError(
          "tree_too_large",
          `${game.name}: public tree exceeds ${maxNodes} nodes`,
        );
      }
    }
    base += level.length;
    levelStart.push(base);
    level = next;
  }

  function pushBlocked(list: ArrayLike<number>, p: 0 | 1): void {
    const flat = blockedFlat[p];
    for (let i = 0; i < list.length; i++) {
      const h = list[i];
      if (!Number.isInteger(h) || h < 0 || h >= game.numHands[p]) {
        throw new KibitzError(
          "bad_game",
          `${game.name}: blocked hand ${h} of player ${p} out of range`,
        );
      }
      flat.push(h);
    }
    blockedEnd[p].push(flat.n);
  }
  function addIsomorph(iso: CfrIsomorph): void {
    if (!(iso.weight >= 0) || !Number.isFinite(iso.weight)) {
      throw new KibitzError(
        "bad_game",
        `${game.name}: isomorph ${iso.label} has weight ${iso.weight}`,
      );
    }
    isoCount.a[isoCount.n - 1]++;
    isoWeight.push(iso.weight);
    for (const p of [0, 1] as const) {
      const perm = iso.permutation[p];
      let k = permIndex.get(perm);
      if (k === undefined) {
        const n = game.numHands[p];
        const seen = new Uint8Array(n);
        for (let h = 0; h < perm.length; h++) seen[perm[h]] = 1;
        if (perm.length !== n || seen.indexOf(0) >= 0) {
          throw new KibitzError(
            "bad_game",
            `${game.name}: isomorph ${iso.label} needs a permutation of player ${p}'s ${n} hands`,
          );
        }
        k = permutations.length;
        permutations.push(perm);
        permIndex.set(perm, k);
      }
      isoPerm[p].push(k);
    }
  }
  function pushChild(
    parent: number,
    depth: number,
    w: number,
    label: string,
    b0: ArrayLike<number>,
    b1: ArrayLike<number>,
  ) {
    kinds.push(0), players.push(-1), depths.push(depth), parents.push(parent);
    // One string per distinct label: the games build a new one per node (F1: 8 MB of V8 heap).
    let known = interned.get(label);
    if (known === undefined) interned.set(label, known = label);
    weights.push(w), labels.push(known);
    pushBlocked(b0, 0), pushBlocked(b1, 1);
    isoCount.push(0);
  }

  const size = kinds.n;
  const tree: PublicTree = {
    game: game.name,
    size,
    numHands: [game.numHands[0], game.numHands[1]],
    kind: kinds.done(),
    player: players.done(),
    depth: depths.done(),
    parent: parents.done(),
    firstChild: firstChild.done(),
    numChildren: numChildren.done(),
    levelStart: u32(levelStart.length),
    block: i32(size).fill(-1),
    blockNode: new Uint32Array(0),
    blockSize: new Uint32Array(0),
    terminal: terminals.done(),
    chanceWeight: weights.done(),
    blockedStart: [blockedEnd[0].done(), blockedEnd[1].done()],
    blockedHands: [blockedFlat[0].done(), blockedFlat[1].done()],
    isoStart: prefixSums(isoCount.a, isoCount.n, u32),
    isoWeight: isoWeight.done(),
    isoPerm: [isoPerm[0].done(), isoPerm[1].done()],
    permutations,
    label: labels,
    maxChildren: 0,
    maxActions: 0,
    levels: levelStart.length - 1,
  };
  tree.levelStart.set(levelStart);
  let blocks = 0;
  for (let i = 0; i < size; i++) if (tree.kind[i] === CFR_PLAYER) blocks++;
  tree.blockNode = u32(blocks);
  tree.blockSize = u32(blocks);
  for (let i = 0, b = 0; i < size; i++) {
    tree.maxChildren = Math.max(tree.maxChildren, tree.numChildren[i]);
    if (tree.kind[i] !== CFR_PLAYER) continue;
    tree.maxActions = Math.max(tree.maxActions, tree.numChildren[i]);
    tree.block[i] = b;
    tree.blockNode[b] = i;
    tree.blockSize[b] = tree.numChildren[i] * tree.numHands[tree.player[i]];
    b++;
  }
  return tree;
}

function prefixSums(
  counts: ArrayLike<number>,
  n: number,
  make: (n: number) => Uint32Array,
): Uint32Array {
  const start = make(n + 1);
  for (let i = 0; i < n; i++) start[i + 1] = start[i] + counts[i];
  return start;
}

/** The action/outcome labels from the root to `node`, e.g. ["b", "c", "Ks", "k"]. */
export function nodePath(tree: PublicTree, node: number): string[] {
  const path: string[] = [];
  for (let n = node; n > 0; n = tree.parent[n]) path.push(tree.label[n]);
  return path.reverse();
}

/** Finds the node reached by following `path` labels from the root; throws if one is missing. */
export function findNode(tree: PublicTree, path: readonly string[]): number {
  let node = 0;
  for (const step of path) {
    const first = tree.firstChild[node], n = tree.numChildren[node];
    let next = -1;
    for (let c = first; c < first + n; c++) if (tree.label[c] === step) next = c;
    if (next < 0) {
      throw new KibitzError(
        "bad_node",
        `no child "${step}" after [${nodePath(tree, node).join(" ")}] in ${tree.game}`,
      );
    }
    node = next;
  }
  return node;
}

/**
 * Adds the values of chance child `c` for `p`'s hands into out[off..]: hands its outcome blocks are
 * zeroed in `vals` first, the sum is weighted by the outcome's probability, and its suit-isomorphic
 * outcomes add the same values with hands relabelled. Shared by training and evaluation traversals.
 */
export function addChanceChildValues(
  t: PublicTree,
  c: number,
  p: 0 | 1,
  vals: Float32Array,
  out: Float32Array,
  off: number,
): void {
  const H = t.numHands[p];
  const ss = t.blockedStart[p], sh = t.blockedHands[p];
  for (let i = ss[c]; i < ss[c + 1]; i++) vals[sh[i]] = 0;
  const w = t.chanceWeight[c];
  for (let h = 0; h < H; h++) out[off + h] += w * vals[h];
  for (let k = t.isoStart[c]; k < t.isoStart[c + 1]; k++) {
    const perm = t.permutations[t.isoPerm[p][k]], wk = t.isoWeight[k];
    for (let h = 0; h < H; h++) out[off + h] += wk * vals[perm[h]];
  }
}
