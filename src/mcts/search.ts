// PUCT Monte Carlo tree search (seed 003): priors from an evaluator over the legal moves, values
// negated at each ply, exact terminal values, Dirichlet noise at the root, first-play urgency,
// virtual loss so one search gathers several leaves per evaluator round, and tree reuse.
import type { Evaluation, Evaluator } from "./evaluator.ts";
import type { Game, Outcome } from "./game.ts";
import { dirichlet, mulberry32, sampleIndex } from "./random.ts";

/** Search settings; `defaultSearchConfig` gives seed 003's numbers. */
export interface SearchConfig {
  /** Exploration constant of PUCT (seed 003: 2.5). */
  cPuct: number;
  /** Root Dirichlet noise on (self-play) or off (evaluation). */
  noise: boolean;
  /** Dirichlet alpha (seed 003: 0.15 for Hive). */
  dirichletAlpha: number;
  /** Weight of the noise in the root priors (seed 003: 0.25). */
  dirichletEpsilon: number;
  /** First-play urgency: an unvisited child's Q is the parent's Q minus this. */
  fpuReduction: number;
  /** Leaves collected (under virtual loss) per evaluator round; 1 = plain sequential search. */
  leavesPerRound: number;
  /** Visits of virtual loss added to each node on a pending path. */
  virtualLoss: number;
}

/** Seed 003's search settings (noise off: turn it on for self-play). */
export function defaultSearchConfig(over: Partial<SearchConfig> = {}): SearchConfig {
  return {
    cPuct: 2.5,
    noise: false,
    dirichletAlpha: 0.15,
    dirichletEpsilon: 0.25,
    fpuReduction: 0.25,
    leavesPerRound: 8,
    virtualLoss: 1,
    ...over,
  };
}

/**
 * A tree node. `n` and `w` are visits and the summed value from the view of the player who moved
 * into this node (so the parent maximizes w / n over its children); `vl` is pending virtual loss.
 */
class Node<M> {
  n = 0;
  w = 0;
  vl = 0;
  children: Node<M>[] | null = null;
  /** Exact result from this node's side to move, once known terminal. */
  terminal: Outcome | null = null;
  pending = false;
  constructor(readonly move: M | null, public prior: number) {}
}

/** Visit statistics of the root's children. */
export interface RootStats<M> {
  moves: M[];
  visits: number[];
  /** Mean value of each child from the root's side to move (NaN when unvisited). */
  q: number[];
  priors: number[];
}

/** Counters of a search's work. */
export interface SearchCounters {
  playouts: number;
  evaluations: number;
  terminals: number;
  collisions: number;
  /** Milliseconds spent selecting, expanding and backing up (tree work, game logic included). */
  treeMs: number;
  /** Milliseconds waiting for evaluations. */
  waitMs: number;
}

interface Leaf<M> {
  path: Node<M>[];
  moves: M[];
  eval: Promise<Evaluation>;
}

/**
 * A search over one game: `run` adds playouts to the current tree, `pickMove` chooses by visit
 * count with a temperature, `advance` plays a move and keeps its subtree (tree reuse).
 */
export class Search<M> {
  private root = new Node<M>(null, 1);
  private noisedRoot: Node<M> | null = null;
  private readonly game: Game<M>;
  private readonly rand: () => number;
  readonly counters: SearchCounters = {
    playouts: 0,
    evaluations: 0,
    terminals: 0,
    collisions: 0,
    treeMs: 0,
    waitMs: 0,
  };

  constructor(
    game: Game<M>,
    readonly evaluator: Evaluator<M>,
    readonly config: SearchConfig = defaultSearchConfig(),
    seed = 1,
  ) {
    this.game = game.clone();
    this.rand = mulberry32(seed);
  }

  /** The searched position (a private copy; do not mutate). */
  position(): Game<M> {
    return this.game;
  }

  /** Root visits so far (reused subtree included). */
  rootVisits(): number {
    return this.root.n;
  }

  /** The root's value for its side to move: exact when terminal, else the mean of its playouts. */
  rootValue(): number {
    if (this.root.terminal !== null) return this.root.terminal;
    return this.root.n > 0 ? -this.root.w / this.root.n : 0;
  }

  /** Adds `playouts` playouts (the root's first evaluation counts as one). */
  async run(playouts: number): Promise<void> {
    let done = 0;
    if (this.gameOver()) return;
    if (!this.root.children) {
      await this.runRound(1);
      done++;
    }
    this.addNoise();
    while (done < playouts) {
      done += await this.runRound(Math.min(this.config.leavesPerRound, playouts - done));
    }
  }

  private gameOver(): boolean {
    if (this.root.terminal === null) this.root.terminal = this.game.result();
    return this.root.terminal !== null;
  }

  private addNoise(): void {
    const kids = this.root.children;
    if (!this.config.noise || !kids || this.noisedRoot === this.root || kids.length === 0) return;
    const eta = dirichlet(kids.length, this.config.dirichletAlpha, this.rand);
    const e = this.config.dirichletEpsilon;
    for (let i = 0; i < kids.length; i++) kids[i].prior = (1 - e) * kids[i].prior + e * eta[i];
    this.noisedRoot = this.root;
  }

  /** One round: up to `want` leaves under virtual loss, their evaluations, then the backups. */
  private async runRound(want: number): Promise<number> {
    const t0 = performance.now();
    const leaves: Leaf<M>[] = [];
    let exact = 0;
    for (let i = 0; i < want; i++) {
      const r = this.descend();
      if (r === null) {
        this.counters.collisions++;
        break;
      }
      if ("value" in r) {
        this.backup(r.path, r.value, false);
        exact++;
      } else leaves.push(r);
    }
    const t1 = performance.now();
    this.counters.treeMs += t1 - t0;
    if (leaves.length === 0) return Math.max(exact, 1);
    const evals = await Promise.all(leaves.map((l) => l.eval));
    const t2 = performance.now();
    this.counters.waitMs += t2 - t1;
    leaves.forEach((l, i) => {
      const leaf = l.path[l.path.length - 1];
      const pr = evals[i].priors;
      let sum = 0;
      for (let k = 0; k < pr.length; k++) sum += pr[k];
      const norm = sum > 0 ? 1 / sum : 0, flat = 1 / Math.max(1, pr.length);
      leaf.children = l.moves.map((m, k) => new Node<M>(m, sum > 0 ? pr[k] * norm : flat));
      leaf.pending = false;
      this.backup(l.path, evals[i].value, true);
    });
    this.counters.evaluations += leaves.length;
    this.counters.treeMs += performance.now() - t2;
    return exact + leaves.length;
  }

  /**
   * Walks from the root to a leaf by PUCT, adding virtual loss along the path, and returns either
   * an exact value (terminal leaf), a pending evaluation, or null when it hit a leaf already
   * pending in this round (a collision: the round ends there).
   */
  private descend(): Leaf<M> | { path: Node<M>[]; value: number } | null {
    const g = this.game, vl = this.config.virtualLoss;
    const path: Node<M>[] = [this.root];
    let node = this.root;
    while (node.children && node.terminal === null) {
      node = this.select(node);
      g.play(node.move as M);
      path.push(node);
    }
    let out: Leaf<M> | { path: Node<M>[]; value: number } | null;
    if (node.pending) out = null;
    else {
      if (node.terminal === null && !node.children) node.terminal = g.result();
      if (node.terminal !== null) {
        this.counters.terminals++;
        out = { path, value: node.terminal };
      } else {
        const moves = g.legalMoves();
        node.pending = true;
        out = { path, moves, eval: this.evaluator.evaluate(g, moves) };
      }
    }
    for (let i = path.length - 1; i > 0; i--) g.undo();
    if (out && !("value" in out)) { for (const p of path) p.vl += vl; }
    return out;
  }

  private select(node: Node<M>): Node<M> {
    const kids = node.children!;
    const c = this.config;
    const parentN = node.n + node.vl;
    const sqrtN = Math.sqrt(Math.max(1, parentN));
    const parentQ = node.n > 0 ? -node.w / node.n : 0;
    const fpu = parentQ - c.fpuReduction;
    let best = kids[0], bestScore = -Infinity;
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i];
      const visits = k.n + k.vl;
      // Virtual loss counts each pending visit as a loss for the player choosing this child.
      const q = visits > 0 ? (k.w - k.vl) / visits : fpu;
      const score = q + c.cPuct * k.prior * sqrtN / (1 + visits);
      if (score > bestScore) {
        bestScore = score;
        best = k;
      }
    }
    return best;
  }

  private backup(path: Node<M>[], leafValue: number, pending: boolean): void {
    const vl = this.config.virtualLoss;
    // `leafValue` is from the leaf's side to move; each node stores the view of the player who moved into it.
    let v = leafValue;
    for (let i = path.length - 1; i >= 0; i--) {
      const node = path[i];
      node.n++;
      node.w -= v;
      if (pending) node.vl -= vl;
      v = -v;
    }
    this.counters.playouts++;
  }

  /** Visit counts, values and priors of the root's children. */
  rootStats(): RootStats<M> {
    const kids = this.root.children ?? [];
    return {
      moves: kids.map((k) => k.move as M),
      visits: kids.map((k) => k.n),
      q: kids.map((k) => (k.n > 0 ? k.w / k.n : NaN)),
      priors: kids.map((k) => k.prior),
    };
  }

  /**
   * Chooses a root move by visit count: with probability N^(1/T) / sum N^(1/T) for T > 0, the most
   * visited (ties to the higher prior, then the first) for T = 0.
   */
  pickMove(temperature: number): M {
    const kids = this.root.children;
    if (!kids || kids.length === 0) throw new Error("pickMove: the root has no moves");
    let best = 0;
    for (let i = 1; i < kids.length; i++) {
      const a = kids[i], b = kids[best];
      if (a.n > b.n || (a.n === b.n && a.prior > b.prior)) best = i;
    }
    if (temperature <= 0 || kids[best].n === 0) return kids[best].move as M;
    const max = kids[best].n, inv = 1 / temperature;
    const w = kids.map((k) => Math.pow(k.n / max, inv));
    return kids[sampleIndex(w, this.rand)].move as M;
  }

  /** Plays `move` on the searched position and keeps its subtree as the new root. */
  advance(move: M): void {
    const idx = this.game.moveIndex(move);
    const child = this.root.children?.find((k) => this.game.moveIndex(k.move as M) === idx);
    this.game.play(move);
    this.root = child ?? new Node<M>(null, 1);
  }

  /** Starts over from the current position with an empty tree. */
  resetTree(): void {
    this.root = new Node<M>(null, 1);
  }
}
