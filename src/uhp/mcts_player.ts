// The network player of the UHP engine: PUCT search (seed 003: c_puct 2.5, priors from the policy
// head, values from the value head, negated at each ply) guided by a loaded Hive network, and the
// policy-only player (the network's top move, no search). The UHP engine answers each command
// synchronously, so this search is a synchronous twin of src/mcts's Search (one leaf at a time, the
// network run directly on the CPU reference backend); finished games are scored from the position
// (hiveOutcome), never from who moved.
import { hiveOutcome } from "../alphazero/hive.ts";
import {
  encodeHivePosition,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveLegalMask,
  hiveMoveIndex,
} from "../hive/encoding.ts";
import type { HiveGame } from "../hive/game.ts";
import { PASS } from "../hive/move.ts";
import { CpuBackend } from "../nn/cpu_backend.ts";
import { type NetTensors, runPass } from "../nn/graph.ts";
import type { NetWeights } from "../nn/params.ts";
import { type CpuTensor, cpuTensor } from "../nn/tensor.ts";
import { loadHiveModel } from "../nn/model_file.ts";
import { FastInference } from "../nn/cpu/fast_infer.ts";
import type { UhpModel, UhpPlayer } from "./engine.ts";

/** Playouts per unit of `bestmove depth N` (depth N = N x this many playouts). */
export const PLAYOUTS_PER_DEPTH = 100;
/** Milliseconds kept back from a time limit for the reply itself. */
const TIME_MARGIN_MS = 50;

/** Priors over the given legal moves and the value for the side to move. */
export interface HiveEvaluation {
  priors: Float32Array;
  value: number;
}

/** Evaluates a position synchronously (the network, or a stand-in in tests and baselines). */
export interface HiveEvaluator {
  evaluate(g: HiveGame, legal: number[]): HiveEvaluation;
}

/** Equal priors and value 0: search guided only by exact results. */
export const uniformHiveEvaluator: HiveEvaluator = {
  evaluate: (_g, legal) => ({
    priors: new Float32Array(legal.length).fill(1 / Math.max(1, legal.length)),
    value: 0,
  }),
};

/**
 * A Hive network evaluated synchronously on the CPU by the fast one-position path (batch norm
 * folded, only the legal moves' policy logits computed): milliseconds per evaluation at the
 * shipped size, against hundreds on the reference ops (ReferenceHiveNet, kept as its oracle).
 */
export class SyncHiveNet implements HiveEvaluator {
  private readonly fast: FastInference;
  private readonly planes = new Float32Array(HIVE_PLANE_SIZE);
  private indices = new Int32Array(64);
  /** Positions evaluated so far. */
  evaluations = 0;

  constructor(weights: NetWeights) {
    this.fast = new FastInference(weights);
  }

  /** Evaluates `g` for its legal moves `legal` (priors aligned with `legal`, summing to 1). */
  evaluate(g: HiveGame, legal: number[]): HiveEvaluation {
    encodeHivePosition(g, this.planes, 0, legal);
    if (this.indices.length < legal.length) this.indices = new Int32Array(legal.length * 2);
    const idx = this.indices.subarray(0, legal.length);
    for (let i = 0; i < legal.length; i++) idx[i] = hiveMoveIndex(g, legal[i]);
    const priors = new Float32Array(legal.length);
    const value = this.fast.evaluate(this.planes, 0, idx, priors);
    this.evaluations++;
    return { priors, value };
  }
}

/** The same evaluation through the reference ops (runPass on CpuBackend): the fast path's oracle. */
export class ReferenceHiveNet implements HiveEvaluator {
  private readonly backend = new CpuBackend();
  private readonly net: NetTensors<CpuTensor>;
  private readonly planes = new Float32Array(HIVE_PLANE_SIZE);
  private readonly mask = new Float32Array(HIVE_POLICY_SIZE);

  constructor(weights: NetWeights) {
    this.net = {
      config: weights.config,
      specs: weights.specs,
      params: weights.tensors,
      grads: null,
      velocity: null,
    };
  }

  /** Evaluates `g` for its legal moves `legal` (priors aligned with `legal`, summing to 1). */
  evaluate(g: HiveGame, legal: number[]): HiveEvaluation {
    const c = this.net.config;
    encodeHivePosition(g, this.planes, 0, legal);
    hiveLegalMask(g, this.mask, 0, legal);
    const out = runPass(this.backend, this.net, {
      x: cpuTensor([1, c.planes, c.height, c.width], this.planes),
      mask: cpuTensor([1, c.moves], this.mask),
      policyTarget: null,
      valueTarget: null,
    }, null);
    const priors = new Float32Array(legal.length);
    let sum = 0;
    for (let i = 0; i < legal.length; i++) {
      priors[i] = out.probs.data[hiveMoveIndex(g, legal[i])];
      sum += priors[i];
    }
    for (let i = 0; i < legal.length; i++) priors[i] = sum > 0 ? priors[i] / sum : 1 / legal.length;
    return { priors, value: out.value.data[0] };
  }
}

class Node {
  n = 0;
  /** Summed value from the view of the player who moved into this node. */
  w = 0;
  children: Node[] | null = null;
  /**
   * Exact result from this node's side to move once proven: a finished game, or (MCTS-Solver) a
   * node with a winning child, or whose children are all proven.
   */
  terminal: number | null = null;
  /** Plies to the end of the game under best play once proven (0 at a finished game). */
  dist = 0;
  constructor(readonly move: number, readonly prior: number) {}
}

/**
 * MCTS-Solver's proof step (Winands, Björnsson and Saito 2008) at one node: proven won when a
 * child is lost for its side to move, proven when every child is (the best of their results),
 * else unchanged. A win keeps the shortest distance, a loss or draw the longest. Returns whether
 * the node is proven now.
 */
export function proveNode(node: {
  terminal: number | null;
  dist: number;
  children: { terminal: number | null; dist: number }[] | null;
}): boolean {
  const kids = node.children;
  if (node.terminal !== null) return true;
  if (!kids || kids.length === 0) return false;
  let best = -2, bestDist = 0, open = false;
  for (const k of kids) {
    if (k.terminal === null) {
      open = true;
      continue;
    }
    const v = -k.terminal, d = k.dist + 1;
    const better = v > best ||
      (v === best && (v > 0 ? d < bestDist : d > bestDist));
    if (better) (best = v), (bestDist = d);
  }
  if (best === 1 || (!open && best > -2)) {
    node.terminal = best;
    node.dist = bestDist;
    return true;
  }
  return false;
}

/** What a search did: the move, playouts, root value and time. */
export interface MctsResult {
  move: number;
  playouts: number;
  value: number;
  ms: number;
  /** The root's proven result for the side to move (1, 0, -1) and its distance, when proven. */
  proven?: { result: number; plies: number };
}

/** Settings of the UHP MCTS player. */
export interface MctsPlayerConfig {
  cPuct: number;
  /** First-play urgency: an unvisited child's Q is the parent's Q minus this. */
  fpuReduction: number;
  /** Playouts when neither depth nor time is given. */
  defaultPlayouts: number;
  /**
   * Immediate-win check at each expansion: when a legal move ends the game in the mover's favour
   * the node keeps only that move (the side to move would play it), so the search sees every
   * win in one ply and every loss it allows in two exactly, whatever the priors. Costs one
   * play/undo per legal move per expansion, a small fraction of a network evaluation.
   */
  winCheck: boolean;
  /**
   * MCTS-Solver: proven results (finished games, wins found by the win check) are propagated up
   * the tree (a node with a won child is won; one whose children are all proven takes the best),
   * selection never enters a child proven lost for the chooser, and the root plays a proven win
   * by the shortest way, avoids proven losses, and stops searching once it is proven itself.
   */
  solver: boolean;
}

/** Seed 003's c_puct and src/mcts's first-play urgency. */
export const MCTS_PLAYER_DEFAULTS: MctsPlayerConfig = {
  cPuct: 2.5,
  fpuReduction: 0.25,
  defaultPlayouts: 200,
  winCheck: true,
  solver: true,
};

/** PUCT search with the network: the most visited root move after the playout or time budget. */
export class MctsPlayer implements UhpPlayer {
  last: MctsResult | null = null;

  constructor(
    readonly net: HiveEvaluator,
    readonly config: MctsPlayerConfig = MCTS_PLAYER_DEFAULTS,
  ) {}

  /** UhpPlayer: depth N means N x PLAYOUTS_PER_DEPTH playouts; timeMs bounds the wall time. */
  bestMove(game: HiveGame, limits: { depth?: number; timeMs?: number }): number {
    const playouts = limits.depth !== undefined
      ? limits.depth * PLAYOUTS_PER_DEPTH
      : limits.timeMs !== undefined
      ? Infinity
      : this.config.defaultPlayouts;
    return this.search(game, playouts, limits.timeMs).move;
  }

  /** Searches `game` (not modified) for up to `playouts` playouts and `timeMs` milliseconds. */
  search(game: HiveGame, playouts: number, timeMs?: number): MctsResult {
    const t0 = performance.now();
    const deadline = timeMs !== undefined ? t0 + Math.max(1, timeMs - TIME_MARGIN_MS) : Infinity;
    const g = game.clone();
    const root = new Node(PASS, 1);
    const rootMoves = g.validMoves();
    if (rootMoves.length <= 1) {
      this.last = { move: rootMoves[0] ?? PASS, playouts: 0, value: 0, ms: 0 };
      return this.last;
    }
    let done = 0, slowest = 0;
    const solver = this.config.solver;
    const path: Node[] = [];
    // Stop when the slowest playout so far would no longer fit before the deadline, or (with the
    // win check or the solver) once the root is proven.
    while (
      root.terminal === null && done < playouts &&
      (done === 0 || performance.now() + slowest < deadline)
    ) {
      const p0 = performance.now();
      path.length = 0;
      let node = root;
      path.push(node);
      let plies = 0;
      while (node.children && node.terminal === null) {
        node = this.select(node);
        g.play(node.move);
        plies++;
        path.push(node);
      }
      let value: number;
      if (node.terminal === null && !node.children) node.terminal = hiveOutcome(g);
      if (node.terminal !== null) value = node.terminal;
      else {
        const legal = node === root ? rootMoves : g.validMoves();
        const win = this.config.winCheck ? winningMove(g, legal) : null;
        if (win !== null) {
          // Proven: the side to move wins by playing `win`.
          node.children = [new Node(win, 1)];
          node.children[0].terminal = -1;
          node.terminal = 1;
          node.dist = 1;
          value = 1;
        } else {
          const e = this.net.evaluate(g, legal);
          node.children = legal.map((m, i) => new Node(m, e.priors[i]));
          value = e.value;
        }
      }
      for (let i = 0; i < plies; i++) g.undo();
      // `value` is from the leaf's side to move; each node stores its mover's view.
      for (let i = path.length - 1; i >= 0; i--) {
        path[i].n++;
        path[i].w -= value;
        value = -value;
      }
      // A proof at the leaf may prove its ancestors (the path is the only way to them).
      if (solver) { for (let i = path.length - 2; i >= 0 && proveNode(path[i]); i--); }
      done++;
      slowest = Math.max(slowest, performance.now() - p0);
    }
    const best = solver ? solvedChoice(root) : mostVisited(root.children!);
    this.last = {
      move: best.move,
      playouts: done,
      value: root.terminal ?? (root.n > 0 ? -root.w / root.n : 0),
      ms: performance.now() - t0,
      ...(root.terminal !== null ? { proven: { result: root.terminal, plies: root.dist } } : {}),
    };
    return this.last;
  }

  private select(node: Node): Node {
    const kids = node.children!, c = this.config;
    const sqrtN = Math.sqrt(Math.max(1, node.n));
    const fpu = (node.n > 0 ? -node.w / node.n : 0) - c.fpuReduction;
    let best = kids[0], bestScore = -Infinity;
    for (const k of kids) {
      // A child won for its side to move is lost for the chooser (solver: never entered while
      // the node is unproven, and some child is then not proven lost).
      if (k.terminal === 1 && c.solver) continue;
      const q = k.n > 0 ? k.w / k.n : fpu;
      const score = q + c.cPuct * k.prior * sqrtN / (1 + k.n);
      if (score > bestScore) {
        bestScore = score;
        best = k;
      }
    }
    return best;
  }
}

/** The most visited child (ties to the higher prior, then the first). */
function mostVisited(kids: Node[]): Node {
  let best = kids[0];
  for (const k of kids) {
    if (k.n > best.n || (k.n === best.n && k.prior > best.prior)) best = k;
  }
  return best;
}

/**
 * The root's move under MCTS-Solver: when the root is proven, the child that gives its result at
 * its distance (the quickest win, the longest defence); else the most visited child that is not
 * proven lost for the root's side.
 */
function solvedChoice(root: Node): Node {
  const kids = root.children!;
  if (root.terminal !== null) {
    for (const k of kids) {
      if (k.terminal !== null && -k.terminal === root.terminal && k.dist + 1 === root.dist) {
        return k;
      }
    }
  }
  const open = kids.filter((k) => k.terminal !== 1);
  return mostVisited(open.length > 0 ? open : kids);
}

/** A legal move after which the side that played it has won, or null. */
export function winningMove(g: HiveGame, legal: number[]): number | null {
  for (const m of legal) {
    g.play(m);
    const r = hiveOutcome(g);
    g.undo();
    if (r === -1) return m;
  }
  return null;
}

/**
 * The network's most probable legal move, no search (the ladder's policy-only player). With
 * `winCheck` (a tactical variant, not the pure network) a move that wins at once is played first.
 */
export class PolicyPlayer implements UhpPlayer {
  constructor(readonly net: HiveEvaluator, readonly winCheck = false) {}

  /** Ignores the limits: one network evaluation. */
  bestMove(game: HiveGame): number {
    const legal = game.validMoves();
    if (legal.length <= 1) return legal[0] ?? PASS;
    if (this.winCheck) {
      const g = game.clone();
      const win = winningMove(g, legal);
      if (win !== null) return win;
    }
    const e = this.net.evaluate(game, legal);
    let best = 0;
    for (let i = 1; i < legal.length; i++) if (e.priors[i] > e.priors[best]) best = i;
    return legal[best];
  }
}

/** The shipped network that `deno task uhp` loads by default. */
export const DEFAULT_HIVE_MODEL: string = new URL(
  "../../models/hive-default.kbhz",
  import.meta.url,
).pathname;

/** Loads a model file (or checkpoint) as the engine's MCTS player, named by its metadata. */
export async function loadUhpModel(path: string): Promise<UhpModel & { mcts: MctsPlayer }> {
  const m = await loadHiveModel(path);
  const base = path.slice(path.lastIndexOf("/") + 1);
  const name = typeof m.meta.name === "string" ? m.meta.name : base;
  const c = m.weights.config;
  const mcts = new MctsPlayer(new SyncHiveNet(m.weights));
  return { name: `${name} ${c.blocks}x${c.filters}`, player: mcts, mcts };
}
