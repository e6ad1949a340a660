// The batched network evaluator: every search (many self-play games, or one search collecting
// leaves under virtual loss) hands its positions here; they are gathered into batches of up to
// `maxBatch` and the network is called once per batch, never once per position.
import { KibitzError } from "../errors.ts";
import type { Evaluation, Evaluator } from "../mcts/evaluator.ts";
import { type Game, type GameSpec, inputSize } from "../mcts/game.ts";
import type { NetBatch, NetOutputs } from "../nn/net.ts";
import { allocPlanes, isHalfPlanes, type Planes } from "../nn/planes.ts";

/**
 * The one thing the evaluator needs from a network: outputs for a batch. `PolicyValueNet` fits;
 * a pipelined GPU runner (several batches in flight) can slot in behind the same call.
 */
export interface BatchInfer {
  readonly backend: "cpu" | "gpu";
  /** The network's shape; with `cells` (the cells policy head) batches carry move tables. */
  readonly config?: { readonly cells?: unknown };
  /** The network takes f16 planes as they are (PolicyValueNet.halfPlanes): batches are encoded so. */
  readonly halfPlanes?: boolean;
  infer(batch: NetBatch): Promise<NetOutputs>;
  /** Readies these batch sizes ahead of the first calls (optional; see PolicyValueNet). */
  prepare?(sizes: readonly number[]): Promise<void>;
}

/** Work done by an evaluator. */
export interface EvaluatorStats {
  batches: number;
  positions: number;
  /** Milliseconds inside network calls (wall time, overlapping calls counted once each). */
  netMs: number;
  /** Milliseconds encoding positions into input planes. */
  encodeMs: number;
}

interface Request {
  indices: Int32Array;
  /** Cells nets: the position's move-table entries (moveIndex, a, b, slot) per move. */
  rows: Float32Array | null;
  resolve: (e: Evaluation) => void;
  reject: (e: unknown) => void;
}

/**
 * Every size a GPU batch of at most `max` positions is padded to: powers of two from 8, capped at
 * `max`, so the network records a few plans rather than one per size.
 */
export function paddedSizes(max: number): number[] {
  const out: number[] = [];
  for (let p = 8;; p *= 2) {
    out.push(Math.min(p, max));
    if (p >= max) return out;
  }
}

interface Pending {
  planes: Planes;
  mask: Float32Array;
  reqs: Request[];
}

/**
 * Gathers evaluation requests into batches. A batch goes to the network when it is full, or when
 * every caller has queued what it can (the flush runs as a task, after all pending microtasks).
 * At most `maxInFlight` network calls run at once (1 by default: while one batch is on the device
 * the next one fills up; a pipelined network can take more). Call `close` when done (it releases
 * the scheduling channel).
 */
export class BatchEvaluator<M> implements Evaluator<M> {
  readonly stats: EvaluatorStats = { batches: 0, positions: 0, netMs: 0, encodeMs: 0 };
  private current: Pending;
  private readonly ready: Pending[] = [];
  private inFlight = 0;
  private readonly channel = new MessageChannel();
  private scheduled = false;
  private readonly per: number;
  /** The network has the cells policy head: each position's move table goes with its batch. */
  private readonly cells: boolean;
  /** The sizes GPU batches are padded to (paddedSizes). */
  private readonly padded: number[];

  constructor(
    readonly net: BatchInfer,
    readonly spec: GameSpec<M>,
    readonly maxBatch = 256,
    readonly maxInFlight = 1,
  ) {
    this.per = inputSize(spec);
    this.cells = net.config?.cells !== undefined;
    this.padded = paddedSizes(maxBatch);
    this.current = this.fresh();
    this.channel.port1.onmessage = () => {
      this.scheduled = false;
      if (this.inFlight < this.maxInFlight) this.flush();
    };
  }

  private fresh(): Pending {
    return {
      planes: allocPlanes(this.maxBatch * this.per, this.net.halfPlanes === true),
      mask: new Float32Array(this.maxBatch * this.spec.moves),
      reqs: [],
    };
  }

  /**
   * Readies the network for every batch size this evaluator sends (GPU: the padded sizes' plans,
   * tuned and compiled now rather than in the first calls); returns the seconds it took.
   */
  async prepare(): Promise<number> {
    const net = this.net;
    if (net.backend !== "gpu" || !net.prepare) return 0;
    const t0 = performance.now();
    await net.prepare(this.padded);
    return (performance.now() - t0) / 1000;
  }

  /** Mean positions per network call so far. */
  averageBatch(): number {
    return this.stats.batches > 0 ? this.stats.positions / this.stats.batches : 0;
  }

  /** Encodes the position now; the promise resolves when its batch has been evaluated. */
  evaluate(game: Game<M>, moves: M[]): Promise<Evaluation> {
    if (this.cells) requireMoveCells(game, this.spec.name);
    const t0 = performance.now();
    const cur = this.current;
    const row = cur.reqs.length;
    game.encode(cur.planes, row * this.per);
    const indices = new Int32Array(moves.length);
    const base = row * this.spec.moves;
    for (let i = 0; i < moves.length; i++) {
      const k = game.moveIndex(moves[i]);
      indices[i] = k;
      cur.mask[base + k] = 1;
    }
    const rows = this.cells ? moveTableRows(game, moves, indices, this.spec.name) : null;
    this.stats.encodeMs += performance.now() - t0;
    const p = new Promise<Evaluation>((resolve, reject) =>
      cur.reqs.push({ indices, rows, resolve, reject })
    );
    if (cur.reqs.length >= this.maxBatch) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      this.channel.port2.postMessage(0);
    }
    return p;
  }

  /** Closes the batch being filled and sends what the in-flight limit allows to the network. */
  flush(): void {
    if (this.current.reqs.length > 0) {
      this.ready.push(this.current);
      this.current = this.fresh();
    }
    while (this.inFlight < this.maxInFlight && this.ready.length > 0) {
      this.dispatch(this.ready.shift()!);
    }
  }

  private dispatch(b: Pending): void {
    const reqs = b.reqs, n = reqs.length;
    const size = this.net.backend === "gpu" ? this.padded.find((p) => p >= n) ?? n : n;
    const moves = this.spec.moves;
    let planes = b.planes.subarray(0, n * this.per), mask = b.mask.subarray(0, n * moves);
    if (size > n) {
      planes = allocPlanes(size * this.per, isHalfPlanes(b.planes));
      planes.set(b.planes.subarray(0, n * this.per));
      mask = new Float32Array(size * moves).fill(1);
      mask.set(b.mask.subarray(0, n * moves));
    }
    const batch: NetBatch = { size, planes, mask };
    if (this.cells) {
      // Padding rows (GPU) repeat the first position's mask and table: every mask-1 move needs an
      // entry, and an all-legal padding row would have none.
      let width = 1;
      for (const r of reqs) width = Math.max(width, r.rows!.length / 4);
      const table = new Float32Array(size * width * 4).fill(-1);
      for (let r = 0; r < size; r++) table.set(reqs[r < n ? r : 0].rows!, r * width * 4);
      if (size > n) {
        for (let r = n; r < size; r++) mask.copyWithin(r * moves, 0, moves);
      }
      batch.moveCells = table;
      batch.moveCellsWidth = width;
    }
    this.inFlight++;
    const t0 = performance.now();
    this.net.infer(batch).then((out) => {
      this.stats.netMs += performance.now() - t0;
      this.stats.batches++;
      this.stats.positions += n;
      for (let r = 0; r < n; r++) {
        const { indices, resolve } = reqs[r];
        const priors = new Float32Array(indices.length);
        for (let i = 0; i < indices.length; i++) priors[i] = out.probs[r * moves + indices[i]];
        resolve({ priors, value: out.value[r] });
      }
    }, (e) => {
      for (const r of reqs) r.reject(e);
    }).finally(() => {
      this.inFlight--;
      // What queued up while this batch ran goes next.
      this.flush();
    });
  }

  /** Releases the scheduling channel (pending requests are flushed first). */
  close(): void {
    this.flush();
    this.channel.port1.close();
    this.channel.port2.close();
  }
}

/**
 * A position's move-table entries for a cells-head network: (moveIndex, a, b, slot) per move from
 * the game's `moveCells` hook (an error for a game without one).
 */
export function moveTableRows<M>(
  game: Game<M>,
  moves: M[],
  indices: ArrayLike<number>,
  name: string,
): Float32Array {
  const cells = requireMoveCells(game, name)(moves);
  const rows = new Float32Array(moves.length * 4);
  for (let i = 0; i < moves.length; i++) {
    rows[i * 4] = indices[i];
    rows[i * 4 + 1] = cells[i * 3];
    rows[i * 4 + 2] = cells[i * 3 + 1];
    rows[i * 4 + 3] = cells[i * 3 + 2];
  }
  return rows;
}

/** The game's moveCells hook (bound), or a clear error: a cells-head network cannot play without. */
export function requireMoveCells<M>(game: Game<M>, name: string): (moves: M[]) => Int32Array {
  if (!game.moveCells) {
    throw new KibitzError(
      "bad_config",
      `${name}: a cells-head network needs the game's moveCells hook, which ${name} lacks`,
    );
  }
  return game.moveCells.bind(game);
}
