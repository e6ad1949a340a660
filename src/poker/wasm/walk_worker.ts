// The worker side of the threaded Wasm walk: cfr/worker.ts calls serveWalkTasks (named by
// PostflopWalk.workerEntry) with an instance of the walk module to make on the shared memory; it
// runs the task loop and imports nothing of the solver, so that a worker stays small.
import { serveTasks, type WorkerEntrySetup } from "../../cfr/parallel.ts";
import { type WalkTaskExports, type WalkTaskLayout, WalkTaskRunner } from "./walk_tasks.ts";

/** The data of PostflopWalk.workerEntry. */
export interface WalkWorkerData {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  /** Setup block of worker slot w: cfgBase + cfgStride * (w + 1) (slot 0 is the main thread's). */
  cfgBase: number;
  cfgStride: number;
  layout: WalkTaskLayout;
}

/** Serves the walk's tasks on this worker thread until the pool closes or it idles out. */
export function serveWalkTasks(m: WorkerEntrySetup): void {
  const d = m.entry.data as unknown as WalkWorkerData;
  const inst = new WebAssembly.Instance(d.module, { env: { memory: d.memory } });
  const x = inst.exports as unknown as WalkTaskExports;
  x.setup(d.cfgBase + d.cfgStride * (m.slot + 1));
  serveTasks(
    new WalkTaskRunner(x, d.memory.buffer, d.layout),
    m.slot,
    m.ctrl,
    m.visits,
    m.idleExitMs,
    m.stamps,
  );
}
