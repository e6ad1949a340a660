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

/** Walks the game's public tree breadth-first and stores it as a flat PublicTree. */
export function buildTree<S>(game: CfrGame<S>, maxNodes = 50_000_000): PublicTree {
  const kinds: number[] = [], players: number[] = [], depths: number[] = [], parents: number[] = [];
  const firstChild: number[] = [], numChildren: number[] = [], terminals: number[] = [];
  const weights: number[] = [], labels: string[] = [];
  // Blocked hands, flat (CSR): blockedEnd[p][node] = end of the node's list in blockedFlat[p].
  const blockedFlat: [number[], number[]] = [[], []], blockedEnd: [number[], number[]] = [[0], [0]];
  const levelStart: number[] = [0];
  const isoCount: number[] = [0],
    isoWeight: number[] = [],
    isoPerm: [number[], number[]] = [[], []];
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
        kinds[id] = CFR_PLAYER, players[id] = node.player, terminals[id] = -1;
        for (let a = 0; a < n; a++) {
          pushChild(id, d + 1, 1, node.actions[a], EMPTY, EMPTY);
          next.push(game.child(level[i], a));
        }
      } else if (node.kind === "chance") {
        n = node.outcomes.length;
        if (n < 1) {
          throw new KibitzError("bad_game", `${game.name}: chance node ${id} has no outcomes`);
        }
        kinds[id] = CFR_CHANCE, players[id] = -1, terminals[id] = -1;
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
        kinds[id] = CFR_TERMINAL, players[id] = -1, terminals[id] = node.terminal;
      }
      firstChild[id] = childStart, numChildren[id] = n;
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
    blockedEnd[p].push(flat.length);
  }
  function addIsomorph(iso: CfrIsomorph): void {
    if (!(iso.weight >= 0) || !Number.isFinite(iso.weight)) {
      throw new KibitzError(
        "bad_game",
        `${game.name}: isomorph ${iso.label} has weight ${iso.weight}`,
      );
    }
    isoCount[isoCount.length - 1]++;
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

  const size = kinds.length;
  const tree: PublicTree = {
    game: game.name,
    size,
    numHands: [game.numHands[0], game.numHands[1]],
    kind: Uint8Array.from(kinds),
    player: Int8Array.from(players),
    depth: Uint16Array.from(depths),
    parent: Int32Array.from(parents),
    firstChild: Uint32Array.from(firstChild),
    numChildren: Uint32Array.from(numChildren),
    levelStart: Uint32Array.from(levelStart),
    block: new Int32Array(size).fill(-1),
    blockNode: new Uint32Array(0),
    blockSize: new Uint32Array(0),
    terminal: Int32Array.from(terminals),
    chanceWeight: Float32Array.from(weights),
    blockedStart: [Uint32Array.from(blockedEnd[0]), Uint32Array.from(blockedEnd[1])],
    blockedHands: [Uint32Array.from(blockedFlat[0]), Uint32Array.from(blockedFlat[1])],
    isoStart: prefixSums(isoCount),
    isoWeight: Float32Array.from(isoWeight),
    isoPerm: [Uint32Array.from(isoPerm[0]), Uint32Array.from(isoPerm[1])],
    permutations,
    label: labels,
    maxChildren: 0,
    maxActions: 0,
    levels: levelStart.length - 1,
  };
  const blockNode: number[] = [], blockSize: number[] = [];
  for (let i = 0; i < size; i++) {
    tree.maxChildren = Math.max(tree.maxChildren, tree.numChildren[i]);
    if (tree.kind[i] !== CFR_PLAYER) continue;
    tree.maxActions = Math.max(tree.maxActions, tree.numChildren[i]);
    tree.block[i] = blockNode.length;
    blockNode.push(i);
    blockSize.push(tree.numChildren[i] * tree.numHands[tree.player[i]]);
  }
  tree.blockNode = Uint32Array.from(blockNode);
  tree.blockSize = Uint32Array.from(blockSize);
  return tree;
}

function prefixSums(counts: number[]): Uint32Array {
  const start = new Uint32Array(counts.length + 1);
  for (let i = 0; i < counts.length; i++) start[i + 1] = start[i] + counts[i];
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
