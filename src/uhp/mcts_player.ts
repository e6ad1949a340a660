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
  hiveCellPositions,
  hiveLegalMask,
  hiveMoveIndex,
} from "../hive/encoding.ts";
import type { HiveGame } from "../hive/game.ts";
import { PASS } from "../hive/move.ts";
import { hiveMoveCellRows, hiveMoveCells } from "../hive/move_cells.ts";
import { CpuBackend } from "../nn/cpu_backend.ts";
import { type NetTensors, runPass } from "../nn/graph.ts";
import type { NetWeights } from "../nn/params.ts";
import { type CpuTensor, cpuTensor } from "../nn/tensor.ts";
import { loadHiveModel } from "../nn/model_file.ts";
import { FastInference } from "../nn/cpu/fast_infer.ts";
import type { UhpModel, UhpPlayer } from "./engine.ts";
import { evaluate as staticScore } from "./alphabeta.ts";
import { forcedWin, winningMove } from "./forced_win.ts";

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

/**
 * An evaluator that also takes positions in batches: `stage` encodes a position (read at once, so
 * the caller may play on), `flush` evaluates every staged position as one network call, in stage
 * order, and empties the stage. The search collects several leaves under virtual loss this way.
 */
export interface HiveBatchEvaluator extends HiveEvaluator {
  stage(g: HiveGame, legal: number[]): void;
  flush(): HiveEvaluation[];
}

function canBatch(e: HiveEvaluator): e is HiveBatchEvaluator {
  return typeof (e as Partial<HiveBatchEvaluator>).stage === "function";
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
export class SyncHiveNet implements HiveBatchEvaluator {
  private readonly fast: FastInference;
  private planes = new Float32Array(HIVE_PLANE_SIZE);
  private staged: Int32Array[] = [];
  /** The staged positions' move cells (a cells-head net only; see hiveMoveCells). */
  private stagedCells: Int32Array[] = [];
  private readonly cells: boolean;
  /** Positions evaluated so far. */
  evaluations = 0;
  /** Network calls so far (a batch counts once). */
  calls = 0;

  /**
   * `sparseStem`: see FastInference (false only to measure the dense stem); `plainStem`: the
   * sparse stem without its shortcut (FastInference.plainStem: the same bits, for tests and the
   * throughput bench's "before" row); `denseTower`: the residual tower at every cell
   * (FastInference.denseTower: the same bits, for the same uses).
   */
  constructor(weights: NetWeights, sparseStem = true, plainStem = false, denseTower = false) {
    this.fast = new FastInference(weights, sparseStem);
    this.fast.plainStem = plainStem;
    this.fast.denseTower = denseTower;
    this.cells = weights.config.cells !== undefined;
  }

  /** Evaluates `g` for its legal moves `legal` (priors aligned with `legal`, summing to 1). */
  evaluate(g: HiveGame, legal: number[]): HiveEvaluation {
    if (this.staged.length > 0) throw new Error("SyncHiveNet.evaluate: positions are staged");
    this.stage(g, legal);
    return this.flush()[0];
  }

  /** Encodes `g` and its legal moves' policy indices into the next batch slot. */
  stage(g: HiveGame, legal: number[]): void {
    const slot = this.staged.length;
    if (this.planes.length < (slot + 1) * HIVE_PLANE_SIZE) {
      const grown = new Float32Array(this.planes.length * 2);
      grown.set(this.planes);
      this.planes = grown;
    }
    const pos = hiveCellPositions(g);
    encodeHivePosition(g, this.planes, slot * HIVE_PLANE_SIZE, legal, pos);
    const idx = new Int32Array(legal.length);
    for (let i = 0; i < legal.length; i++) idx[i] = hiveMoveIndex(g, legal[i]);
    this.staged.push(idx);
    if (this.cells) this.stagedCells.push(hiveMoveCells(g, legal, undefined, pos));
  }

  /** Evaluates the staged positions in one batch (FastInference.evaluateBatch). */
  flush(): HiveEvaluation[] {
    const n = this.staged.length;
    if (n === 0) return [];
    const priors = this.staged.map((idx) => new Float32Array(idx.length));
    const values = new Float32Array(n);
    const cells = this.cells ? this.stagedCells : undefined;
    this.fast.evaluateBatch(this.planes, 0, n, this.staged, priors, values, cells);
    this.staged = [];
    this.stagedCells = [];
    this.evaluations += n;
    this.calls++;
    return priors.map((p, i) => ({ priors: p, value: values[i] }));
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
    const pos = hiveCellPositions(g);
    encodeHivePosition(g, this.planes, 0, legal, pos);
    hiveLegalMask(g, this.mask, 0, legal);
    const out = runPass(this.backend, this.net, {
      x: cpuTensor([1, c.planes, c.height, c.width], this.planes),
      mask: cpuTensor([1, c.moves], this.mask),
      moveCells: c.cells
        ? cpuTensor([1, Math.max(1, legal.length), 4], padRows(hiveMoveCellRows(g, legal, pos)))
        : null,
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

// A table of at least one entry (an empty one padded with an ignored -1 entry).
function padRows(rows: Float32Array): Float32Array {
  return rows.length > 0 ? rows : new Float32Array(4).fill(-1);
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
  /** Pending visits of leaves collected for the current batch below (or at) this node. */
  vl = 0;
  /** Collected for the current batch and not yet evaluated. */
  pending = false;
  /** Expanded with equal priors and a static value; the network has not seen it yet (netVisits). */
  lazy = false;
  constructor(readonly move: number, public prior: number) {}
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
  /** Root visits kept from the previous search (tree reuse), when any. */
  reused?: number;
  /** The root's proven result for the side to move (1, 0, -1) and its distance, when proven. */
  proven?: { result: number; plies: number };
  /** Root moves the loss check proved lost (they were the search's choice at the time). */
  lossesFound?: number;
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
  /**
   * Leaves collected per network call: each descent adds a virtual loss along its path (a pending
   * visit counted as a loss for the chooser) so the next descents spread out, and the batch is
   * evaluated at once (the batched convolutions cost less per position than one at a time).
   * 1 = the plain sequential search.
   */
  batch: number;
  /**
   * Keeps the tree between moves: when the next position is the last searched one plus the
   * moves played since (our move and the reply), the search starts from that subtree, visits and
   * proofs included.
   */
  reuseTree: boolean;
  /**
   * Per-ply discount of backed-up values: a value moves up the path multiplied by (1 - discount)
   * at each ply, and a proven node counts its distance to the end too, so of two wins the
   * shorter scores higher (and of two losses the longer): the search finishes won games instead of
   * wandering while its estimate stays positive.
   */
  discount: number;
  /**
   * Ply (HiveGame.turn) at which the game is scored a draw (a match's ply cap), so the search sees
   * that a capped game is worth 0, not its estimate; Infinity when there is no cap (UHP play).
   */
  maxPlies: number;
  /**
   * Evaluations kept by position (hash, side to move, last piece moved, ply count) for the next
   * time the search reaches it: transpositions in the tree and positions of the previous moves'
   * searches outside the kept subtree (about a tenth of the evaluations in play). 0 = none; the
   * oldest entry goes first.
   */
  cacheSize: number;
  /**
   * Hybrid leaf values: a leaf's value is (1 - valueMix) x the network's value + valueMix x
   * tanh(s / valueScale), where s is the alpha-beta player's static score (queen surround x 100 +
   * mobility, side to move's view). 0 = the network alone (the learned player); above 0 the player
   * is a hybrid with a hand-written evaluation inside, and is labelled so in the ladder.
   */
  valueMix: number;
  /** Score scale of the hybrid value's tanh (200: one queen neighbour = tanh(0.5)). */
  valueScale: number;
  /**
   * Lazy network calls (0 = off: every new leaf is evaluated by the network). Above 0 a new leaf
   * below the root is expanded with equal priors and the static value tanh(score / valueScale)
   * alone, and the network is called for a node's priors only once the search has visited it
   * this many times: the expensive evaluation goes to the nodes the search keeps coming back to,
   * and the rest of the tree costs a static score each (tens of times cheaper). A hybrid player;
   * leaves are then taken one at a time (batch 1).
   */
  netVisits: number;
  /**
   * Surround priors (0 = off): each expanded node's priors are multiplied by
   * exp(surroundPrior x gain) and renormalized, where gain is how much the move changes (enemy
   * queen's neighbours - own queen's neighbours) for the mover. The search then looks first at
   * the moves that close in on a queen or free one, which a weak policy ranks low. Hand-written
   * knowledge: a hybrid player.
   */
  surroundPrior: number;
  /**
   * Loss check (0 = off): before playing the chosen root move, a bounded proof search
   * (forced_win.ts) asks whether the opponent can then force a win within this many plies (odd);
   * a move that loses by force is marked proven lost and the next choice is checked, up to
   * LOSS_CHECK_CANDIDATES moves. Exact results only, no evaluation: it sees the short forced wins
   * that a search spread over many moves can miss. With a time limit the search keeps
   * LOSS_CHECK_RESERVE_MS of it for the check.
   */
  lossCheck: number;
}

/** Seed 003's c_puct and src/mcts's first-play urgency. */
export const MCTS_PLAYER_DEFAULTS: MctsPlayerConfig = {
  cPuct: 2.5,
  fpuReduction: 0.25,
  defaultPlayouts: 200,
  winCheck: true,
  solver: true,
  batch: 1,
  reuseTree: true,
  discount: 0.01,
  maxPlies: Infinity,
  cacheSize: 50_000,
  valueMix: 0,
  valueScale: 200,
  netVisits: 0,
  surroundPrior: 0,
  lossCheck: 0,
};

/** Root moves the loss check examines at most per search. */
export const LOSS_CHECK_CANDIDATES = 4;
/** Move generations the loss check may spend per search. */
export const LOSS_CHECK_NODES = 3000;
/** Milliseconds of a timed search kept for the loss check (at most 15 % of the time). */
export const LOSS_CHECK_RESERVE_MS = 120;

/**
 * The hybrid search's settings (UHP option Hybrid 1, ladder players hybrid-time with mix=0.5
 * surround=2): leaf values half network, half tanh(static score / 200), and priors tilted by
 * exp(2 x surround gain).
 */
export const HYBRID_SEARCH: Partial<MctsPlayerConfig> = {
  valueMix: 0.5,
  valueScale: 200,
  surroundPrior: 2,
};

/** One leaf collected for a batch: its path from the root and its legal moves. */
interface PendingLeaf {
  path: Node[];
  legal: number[];
  /** The evaluation cache's key ("" when the cache is off). */
  key: string;
  /** The evaluation when the evaluator cannot batch (taken at once). */
  eval: HiveEvaluation | null;
  /** The hybrid value's static part, tanh(score / valueScale) (0 when valueMix is 0). */
  stat: number;
}

/** PUCT search with the network: the most visited root move after the playout or time budget. */
export class MctsPlayer implements UhpPlayer {
  last: MctsResult | null = null;
  /** The last search's tree and the move history of its root position (tree reuse). */
  private tree: { root: Node; history: number[] } | null = null;
  private readonly cache = new Map<string, HiveEvaluation>();
  private readonly scoreBuf = new Int32Array(2048);
  /** Evaluations taken from the cache so far. */
  cacheHits = 0;

  constructor(
    readonly net: HiveEvaluator,
    public config: MctsPlayerConfig = MCTS_PLAYER_DEFAULTS,
  ) {}

  /** Changes settings between searches; the tree and the evaluation cache start afresh. */
  configure(over: Partial<MctsPlayerConfig>): void {
    this.config = { ...this.config, ...over };
    this.tree = null;
    this.cache.clear();
  }

  /** UhpPlayer: depth N means N x PLAYOUTS_PER_DEPTH playouts; timeMs bounds the wall time. */
  bestMove(game: HiveGame, limits: { depth?: number; timeMs?: number }): number {
    const playouts = limits.depth !== undefined
      ? limits.depth * PLAYOUTS_PER_DEPTH
      : limits.timeMs !== undefined
      ? Infinity
      : this.config.defaultPlayouts;
    return this.search(game, playouts, limits.timeMs).move;
  }

  /**
   * Visits of the kept tree's node reached from the last searched root by `moves` (0 when there
   * is none): what tree reuse would start from after those moves.
   */
  keptVisits(moves: number[]): number {
    let node: Node | null = this.tree?.root ?? null;
    for (const m of moves) node = node?.children?.find((k) => k.move === m) ?? null;
    return node?.n ?? 0;
  }

  /** The last search's root moves and their priors (as the search used them). */
  rootPriors(): { moves: number[]; priors: number[] } {
    const kids = this.tree?.root.children ?? [];
    return { moves: kids.map((k) => k.move), priors: kids.map((k) => k.prior) };
  }

  /** The last search's root moves and their visits (self-play draws its opening moves by them). */
  rootVisits(): { moves: number[]; visits: number[] } {
    const kids = this.tree?.root.children ?? [];
    return { moves: kids.map((k) => k.move), visits: kids.map((k) => k.n) };
  }

  /** Forgets the kept tree (the next search starts afresh). */
  resetTree(): void {
    this.tree = null;
  }

  /**
   * The kept subtree for `history` (the position about to be searched): the last root followed
   * down the moves played since, when they are at most two and it is expanded; else null.
   */
  private reusedRoot(history: number[]): Node | null {
    const t = this.tree;
    if (!this.config.reuseTree || !t) return null;
    const h0 = t.history;
    if (history.length < h0.length || history.length - h0.length > 2) return null;
    for (let i = 0; i < h0.length; i++) if (history[i] !== h0[i]) return null;
    let node: Node | null = t.root;
    for (let i = h0.length; i < history.length && node; i++) {
      node = node.children?.find((k) => k.move === history[i]) ?? null;
    }
    return node && node.children ? node : null;
  }

  /** Searches `game` (not modified) for up to `playouts` playouts and `timeMs` milliseconds. */
  search(game: HiveGame, playouts: number, timeMs?: number): MctsResult {
    const t0 = performance.now();
    const hard = timeMs !== undefined ? t0 + Math.max(1, timeMs - TIME_MARGIN_MS) : Infinity;
    const reserve = this.config.lossCheck > 0 && timeMs !== undefined
      ? Math.min(LOSS_CHECK_RESERVE_MS, 0.15 * timeMs)
      : 0;
    const deadline = Math.max(t0 + 1, hard - reserve);
    const g = game.clone();
    const rootMoves = g.validMoves();
    const history = g.history();
    if (rootMoves.length <= 1) {
      this.tree = null;
      this.last = { move: rootMoves[0] ?? PASS, playouts: 0, value: 0, ms: 0 };
      return this.last;
    }
    const root = this.reusedRoot(history) ?? new Node(PASS, 1);
    const reused = root.n;
    this.tree = { root, history };
    let done = 0, slowest = 0;
    const batch = this.config.netVisits > 0 ? 1 : Math.max(1, Math.floor(this.config.batch));
    // Stop when the slowest round so far would no longer fit before the deadline, or (with the
    // win check or the solver) once the root is proven.
    while (
      root.terminal === null && done < playouts &&
      (done === 0 || performance.now() + slowest < deadline)
    ) {
      const p0 = performance.now();
      done += this.round(g, root, rootMoves, Math.min(batch, playouts - done));
      slowest = Math.max(slowest, performance.now() - p0);
    }
    let best = this.config.solver ? solvedChoice(root) : mostVisited(root.children!);
    let lossesFound = 0;
    if (this.config.lossCheck > 0 && root.terminal === null) {
      const budget = { nodes: LOSS_CHECK_NODES, deadline: hard };
      for (let i = 0; i < LOSS_CHECK_CANDIDATES && best.terminal === null; i++) {
        g.play(best.move);
        const lost = forcedWin(g, this.config.lossCheck, budget);
        g.undo();
        if (!lost) break;
        // Proven: the opponent wins within lossCheck plies (an upper bound on the distance).
        best.terminal = 1;
        best.dist = this.config.lossCheck;
        lossesFound++;
        proveNode(root);
        best = solvedChoice(root);
      }
    }
    this.last = {
      move: best.move,
      playouts: done,
      value: root.terminal ?? (root.n > 0 ? -root.w / root.n : 0),
      ms: performance.now() - t0,
      ...(reused > 0 ? { reused } : {}),
      ...(root.terminal !== null ? { proven: { result: root.terminal, plies: root.dist } } : {}),
      ...(lossesFound > 0 ? { lossesFound } : {}),
    };
    return this.last;
  }

  /**
   * One round: up to `want` descents; exact leaves (finished games, capped games, wins in one,
   * proven nodes) are backed up at once, the others collected under virtual loss and evaluated as
   * one batch, then expanded and backed up. Returns the playouts done.
   */
  private round(g: HiveGame, root: Node, rootMoves: number[], want: number): number {
    const c = this.config, batching = canBatch(this.net);
    const pending: PendingLeaf[] = [];
    let done = 0;
    for (let b = 0; b < want && root.terminal === null; b++) {
      const path: Node[] = [root];
      let node = root;
      while (node.children && node.terminal === null) {
        if (node.lazy && node.n >= c.netVisits) this.netPriors(g, node);
        node = this.select(node);
        g.play(node.move);
        path.push(node);
      }
      const plies = path.length - 1;
      if (node.pending) {
        // A collision with a leaf of this batch: evaluate what was collected.
        for (let i = 0; i < plies; i++) g.undo();
        break;
      }
      if (node.terminal === null && !node.children) {
        node.terminal = g.turn >= c.maxPlies && !g.isOver() ? 0 : hiveOutcome(g);
      }
      let exact: number | null = null;
      if (node.terminal !== null) exact = node.terminal * (1 - c.discount) ** node.dist;
      else {
        const legal = node === root ? rootMoves : g.validMoves();
        const win = c.winCheck ? winningMove(g, legal) : null;
        if (win !== null) {
          // Proven: the side to move wins by playing `win`.
          node.children = [new Node(win, 1)];
          node.children[0].terminal = -1;
          node.terminal = 1;
          node.dist = 1;
          exact = 1 - c.discount;
        } else if (c.netVisits > 0 && node !== root) {
          // Lazy: equal priors and the static value now, the network once visited enough.
          node.children = legal.map((m) => new Node(m, 1 / legal.length));
          if (c.surroundPrior > 0) tiltPriors(g, node.children, c.surroundPrior);
          node.lazy = true;
          exact = Math.tanh(staticScore(g, this.scoreBuf, 0) / c.valueScale);
        } else {
          const key = c.cacheSize > 0 ? `${g.hashKey()}:${g.turn}` : "";
          const hit = key ? this.cache.get(key) : undefined;
          if (hit && hit.priors.length === legal.length) {
            this.cacheHits++;
            node.children = legal.map((m, j) => new Node(m, hit.priors[j]));
            if (c.surroundPrior > 0) tiltPriors(g, node.children, c.surroundPrior);
            exact = hit.value;
          } else {
            let ev: HiveEvaluation | null = null;
            if (batching) (this.net as HiveBatchEvaluator).stage(g, legal);
            else ev = this.net.evaluate(g, legal);
            const stat = c.valueMix > 0
              ? Math.tanh(staticScore(g, this.scoreBuf, 0) / c.valueScale)
              : 0;
            node.pending = true;
            for (const p of path) p.vl++;
            pending.push({ path, legal, key, eval: ev, stat });
          }
        }
      }
      for (let i = 0; i < plies; i++) g.undo();
      if (exact !== null) {
        // Finished or proven (exact), or a cached evaluation: backed up at once.
        this.backup(path, exact);
        // A proof at the leaf may prove its ancestors (the path is the only way to them).
        if (c.solver) { for (let i = path.length - 2; i >= 0 && proveNode(path[i]); i--); }
        done++;
      }
    }
    if (pending.length > 0) {
      const evals = batching
        ? (this.net as HiveBatchEvaluator).flush()
        : pending.map((l) => l.eval!);
      for (let i = 0; i < pending.length; i++) {
        const { path, legal, key, stat } = pending[i];
        const mix = c.valueMix;
        const e = mix > 0
          ? { priors: evals[i].priors, value: (1 - mix) * evals[i].value + mix * stat }
          : evals[i];
        if (key) {
          if (this.cache.size >= c.cacheSize) this.cache.delete(this.cache.keys().next().value!);
          this.cache.set(key, e);
        }
        const leaf = path[path.length - 1];
        leaf.children = legal.map((m, j) => new Node(m, e.priors[j]));
        if (c.surroundPrior > 0) {
          // The leaf's position again (the batch was collected with the game undone).
          for (let j = 1; j < path.length; j++) g.play(path[j].move);
          tiltPriors(g, leaf.children, c.surroundPrior);
          for (let j = 1; j < path.length; j++) g.undo();
        }
        leaf.pending = false;
        for (const p of path) p.vl--;
        this.backup(path, e.value);
        done++;
      }
    }
    return done;
  }

  /** Lazy mode: the network's priors for an expanded node (cached like leaf evaluations). */
  private netPriors(g: HiveGame, node: Node): void {
    const kids = node.children!, legal = kids.map((k) => k.move);
    // Its own keys: these entries hold the network's raw value, leaf entries the blended one.
    const key = this.config.cacheSize > 0 ? `${g.hashKey()}:${g.turn}:p` : "";
    let e = key ? this.cache.get(key) : undefined;
    if (!e || e.priors.length !== legal.length) {
      e = this.net.evaluate(g, legal);
      if (key) {
        if (this.cache.size >= this.config.cacheSize) {
          this.cache.delete(this.cache.keys().next().value!);
        }
        this.cache.set(key, e);
      }
    } else this.cacheHits++;
    for (let j = 0; j < kids.length; j++) kids[j].prior = e.priors[j];
    if (this.config.surroundPrior > 0) tiltPriors(g, kids, this.config.surroundPrior);
    node.lazy = false;
  }

  /** Backs `value` (from the leaf's side to move) up `path`, discounted per ply. */
  private backup(path: Node[], value: number): void {
    const keep = 1 - this.config.discount;
    // Each node stores its mover's view.
    for (let i = path.length - 1; i >= 0; i--) {
      path[i].n++;
      path[i].w -= value;
      value = -value * keep;
    }
  }

  private select(node: Node): Node {
    const kids = node.children!, c = this.config;
    const sqrtN = Math.sqrt(Math.max(1, node.n + node.vl));
    const fpu = (node.n > 0 ? -node.w / node.n : 0) - c.fpuReduction;
    let best = kids[0], bestScore = -Infinity;
    for (const k of kids) {
      // A child won for its side to move is lost for the chooser (solver: never entered while
      // the node is unproven, and some child is then not proven lost).
      if (k.terminal === 1 && c.solver) continue;
      // Virtual loss: each pending visit counts as a loss for the chooser.
      const visits = k.n + k.vl;
      const q = visits > 0 ? (k.w - k.vl) / visits : fpu;
      const score = q + c.cPuct * k.prior * sqrtN / (1 + visits);
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

/**
 * For each move of the side to move: the change it makes to (enemy queen's neighbours - own
 * queen's neighbours), the mover's view (a queen not yet placed counts 0 neighbours).
 */
export function surroundGains(g: HiveGame, moves: number[]): Int8Array {
  const me = g.turn & 1;
  const before = g.queenNeighbors(1 - me) - g.queenNeighbors(me);
  const out = new Int8Array(moves.length);
  for (let i = 0; i < moves.length; i++) {
    g.play(moves[i]);
    out[i] = g.queenNeighbors(1 - me) - g.queenNeighbors(me) - before;
    g.undo();
  }
  return out;
}

/** Multiplies the children's priors by exp(k x surround gain) and renormalizes them. */
function tiltPriors(g: HiveGame, kids: Node[], k: number): void {
  const gains = surroundGains(g, kids.map((c) => c.move));
  let sum = 0;
  for (let i = 0; i < kids.length; i++) sum += kids[i].prior *= Math.exp(k * gains[i]);
  if (sum > 0) { for (const c of kids) c.prior /= sum; }
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
export async function loadUhpModel(
  path: string,
): Promise<
  UhpModel & { mcts: MctsPlayer; setHybrid(on: boolean): void; setLossCheck(n: number): void }
> {
  const m = await loadHiveModel(path);
  const base = path.slice(path.lastIndexOf("/") + 1);
  const name = typeof m.meta.name === "string" ? m.meta.name : base;
  const c = m.weights.config;
  const mcts = new MctsPlayer(new SyncHiveNet(m.weights));
  let hybrid = false;
  const setHybrid = (on: boolean) => {
    if (on === hybrid) return;
    hybrid = on;
    const d = MCTS_PLAYER_DEFAULTS;
    mcts.configure(
      on ? HYBRID_SEARCH : { valueMix: d.valueMix, valueScale: d.valueScale, surroundPrior: 0 },
    );
  };
  // Odd plies (the opponent moves last); 0 is off. Changes only the check, not the kept tree.
  const setLossCheck = (n: number) => {
    const plies = n > 0 ? n | 1 : 0;
    if (plies !== mcts.config.lossCheck) mcts.config = { ...mcts.config, lossCheck: plies };
  };
  const head = (c.cells ? " cells" : "") + (c.valuePool ? ` pool${c.valuePool}` : "");
  return {
    name: `${name} ${c.blocks}x${c.filters}${head}`,
    player: mcts,
    mcts,
    setHybrid,
    setLossCheck,
  };
}
