import type { QuantStore } from "../quant/mod.ts";
import type { CfrGame } from "./game.ts";
import type { SolverOptions } from "./options.ts";
import { CFR_CHANCE, type PublicTree } from "./tree.ts";

// The tasks of a multi-threaded traversal and what a thread needs of the solver to run them; the
// solver, the evaluator and the worker pool all import these from here (none imports another).

/** What a round of tasks computes: training, or values of the average strategy (profile, best response). */
export const TASK_TRAIN = 0, TASK_PROFILE = 1, TASK_BEST_RESPONSE = 2;

/**
 * The unit of parallel work: the subtrees hanging below the first chance nodes of the tree (the
 * chance nodes with no chance node above them). One task per outcome node; a task's subtree owns
 * its storage blocks alone, so threads running different tasks never write the same block. Inputs
 * and outputs live in SharedArrayBuffers, one row of `stride` hands per task.
 */
export interface ChanceTasks {
  /** Number of tasks. */
  count: number;
  /** Row length (the larger hand count). */
  stride: number;
  /** Outcome node of each task. */
  node: Int32Array;
  /** Task of each tree node (-1 for nodes that are not such outcomes). */
  index: Int32Array;
  /** Opponent reach arriving at the outcome (blocked hands zeroed). */
  opp: Float32Array;
  /** Traverser's own reach at the outcome. */
  self: Float32Array;
  /** Traverser's active hands at the outcome. */
  act: Uint8Array;
  /** Active-hand count per task this traversal; -1 when the traversal does not reach it. */
  cn: Int32Array;
  /** The traverser's values of the outcome's subtree (unnormalized, as `visit` writes them). */
  out: Float32Array;
}

/** The rows of a ChanceTasks that threads read and write (see ChanceTasks). */
export type TaskRows = Pick<ChanceTasks, "opp" | "self" | "act" | "cn" | "out">;

/** Task rows, each in its own SharedArrayBuffer. */
function sharedRows(count: number, stride: number): TaskRows {
  const f32 = () => new Float32Array(new SharedArrayBuffer(4 * count * stride));
  return {
    opp: f32(),
    self: f32(),
    act: new Uint8Array(new SharedArrayBuffer(count * stride)),
    cn: new Int32Array(new SharedArrayBuffer(4 * Math.max(1, count))),
    out: f32(),
  };
}

/**
 * Finds the outcome nodes of the first chance nodes and allocates the shared task rows (with
 * `rows`, where the caller wants them: the threaded Wasm walk lays them out in its memory).
 */
export function chanceTasks(
  tree: PublicTree,
  rows: (count: number, stride: number) => TaskRows = sharedRows,
): ChanceTasks {
  const { size, kind, parent } = tree;
  // Nodes at or below a chance node (breadth-first order: parents come first).
  const below = new Uint8Array(size);
  // Shared, as the rows below: each worker would get a structured-clone copy (F1: 2 MB a worker).
  const index = new Int32Array(new SharedArrayBuffer(4 * size)).fill(-1);
  const nodes: number[] = [];
  for (let n = 1; n < size; n++) {
    const par = parent[n];
    if (below[par]) below[n] = 1;
    else if (kind[par] === CFR_CHANCE) {
      below[n] = 1;
      index[n] = nodes.length;
      nodes.push(n);
    }
  }
  const count = nodes.length, stride = Math.max(tree.numHands[0], tree.numHands[1]);
  return { count, stride, node: Int32Array.from(nodes), index, ...rows(count, stride) };
}

/** Engine-internal: the stores a worker thread shares with the main solver. */
export interface SharedStores {
  regrets: QuantStore;
  strategy: QuantStore;
  predicted: QuantStore | null;
  tasks: ChanceTasks;
}

/** What a thread needs to take tasks from the shared counter (parallel.ts serveTasks). */
export interface TaskRunner {
  readonly tasks: { readonly count: number } | null;
  /** Sets the discounts and rounding keys of iteration t. */
  beginIteration(t: number): void;
  /** Runs training task k for traverser p; returns the node-hand visits. */
  runTask(k: number, p: 0 | 1): number;
  /** Runs evaluation task k of the average strategy. */
  runEvalTask(k: number, p: 0 | 1, br: boolean): void;
}

/**
 * What a worker thread runs instead of rebuilding a solver (worker.ts), for a game whose walk runs
 * tasks itself: the export `name` of `module`, called with the pool's setup (parallel.ts
 * WorkerTaskSetup) and `data`; it serves tasks until told to quit. In a browser bundle `module`
 * is the bundle, which must then export `name` (as a game class for worker.ts).
 */
export interface WorkerEntry {
  module: string;
  name: string;
  data: Record<string, unknown>;
}

/** What the worker pool needs of a solver: its stores and tasks, and a way to run one task. */
export interface TaskSolver {
  readonly tree: PublicTree;
  readonly game: CfrGame;
  readonly options: SolverOptions;
  readonly regrets: QuantStore;
  readonly strategy: QuantStore;
  readonly predicted: QuantStore | null;
  readonly tasks: ChanceTasks | null;
  /** Sets the discounts and rounding keys of iteration t. */
  beginIteration(t: number): void;
  /** Runs training task k for traverser p; returns the node-hand visits. */
  runTask(k: number, p: 0 | 1): number;
  /** Runs evaluation task k of the average strategy. */
  runEvalTask(k: number, p: 0 | 1, br: boolean): void;
}
