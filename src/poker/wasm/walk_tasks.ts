import type { TaskRunner } from "../../cfr/tasks.ts";
import { KibitzError } from "../../errors.ts";

// The task loop's side of the threaded Wasm walk: runs chance-subtree tasks on one thread's
// instance of the walk module over the memory all threads share. Imported by the tiny worker
// (walk_worker.ts) as well as the main thread, so it imports nothing of the solver.

/** Byte offsets of the task data in the walk's shared memory (PostflopWalk lays them out). */
export interface WalkTaskLayout {
  count: number;
  /** Hands per task row. */
  stride: number;
  /**
   * i32 per task: the task the k-th claim runs (the largest subtrees first, so that the last
   * tasks to finish are small), outcome node, its depth, evaluation's 1 or -1 (visited or
   * skipped), its first chance node's index.
   */
  order: number;
  node: number;
  depth: number;
  cn: number;
  par: number;
  /** Task rows: the subtree's values (f32; evaluation: the best response's), the profile's (f32). */
  out: number;
  outE: number;
  /** First chance nodes (the tasks' parents; asm/walk.ts tOut). */
  chances: number;
  /**
   * i32 per first chance node: its node, active count (-1: not reached), outcomes left; rows:
   * opponent reach (f32), active flags (u8), values (f32), evaluation's profile values (f32).
   */
  jNode: number;
  jCn: number;
  jLeft: number;
  jOpp: number;
  jAct: number;
  jOut: number;
  jOutE: number;
  /** The iteration's discounts: alphaPos, betaNeg, gamma (f32). */
  disc: number;
  /** The block of row offsets asm/walk.ts setTasks reads. */
  block: number;
}

/** The walk module's task export (asm/walk.ts `task`). */
export interface WalkTaskExports {
  setup(cfg: number): void;
  setTasks(at: number): void;
  task(n: number, d: number, p: number, alphaPos: number, betaNeg: number, gamma: number): number;
  evalTask(n: number, d: number, p: number): void;
  evaluateAt(n: number, d: number, p: number, opp: number, outB: number, outE: number): void;
}

/** One thread's runner of the walk's tasks (cfr/parallel.ts serveTasks takes tasks with it). */
export class WalkTaskRunner implements TaskRunner {
  readonly tasks: { readonly count: number };
  private readonly i32: Int32Array;
  private readonly f32: Float32Array;

  constructor(
    private readonly x: WalkTaskExports,
    buffer: ArrayBufferLike,
    private readonly at: WalkTaskLayout,
  ) {
    this.tasks = { count: at.count };
    this.i32 = new Int32Array(buffer);
    this.f32 = new Float32Array(buffer);
    x.setTasks(at.block);
  }

  /** The discounts are in the shared memory (PostflopWalk.setDiscounts): nothing to set here. */
  beginIteration(_t: number): void {}

  /**
   * Runs the `claim`-th training task for traverser p on this thread's instance (nothing where
   * its chance node was not reached); returns the visits.
   */
  runTask(claim: number, p: 0 | 1): number {
    const at = this.at, i32 = this.i32, f32 = this.f32;
    const k = i32[(at.order >> 2) + claim], dk = at.disc >> 2;
    const v = this.x.task(
      i32[(at.node >> 2) + k],
      i32[(at.depth >> 2) + k],
      p,
      f32[dk],
      f32[dk + 1],
      f32[dk + 2],
    );
    if (v < 0) {
      throw new KibitzError(
        "non_finite",
        "a regret or strategy update gave a value that is not finite (Wasm walk): values must be finite",
      );
    }
    return v;
  }

  /**
   * Runs the `claim`-th evaluation task for p: both modes at once (best response and profile values, see
   * PostflopWalk.rootValues), whichever `_br` asks for.
   */
  runEvalTask(claim: number, p: 0 | 1, _br: boolean): void {
    const at = this.at, k = this.i32[(at.order >> 2) + claim];
    this.x.evalTask(this.i32[(at.node >> 2) + k], this.i32[(at.depth >> 2) + k], p);
  }
}
