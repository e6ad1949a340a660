/// <reference lib="deno.worker" />
// Entry point of a worker thread of the threaded Wasm walk (started by cfr/parallel.ts WorkerPool
// with PostflopWalk.workerEntry): an instance of the walk module on the shared memory and the task
// loop, nothing of the solver, so that an idle worker stays small.
import type { WorkerTaskSetup } from "../../cfr/parallel.ts";
import type { WalkTaskExports, WalkTaskLayout } from "./walk_tasks.ts";

/** What PostflopWalk.workerEntry sends, with the pool's control words. */
export interface WalkWorkerSetup extends WorkerTaskSetup {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  /** Setup block of worker slot w: cfgBase + cfgStride * (w + 1) (slot 0 is the main thread's). */
  cfgBase: number;
  cfgStride: number;
  layout: WalkTaskLayout;
}

self.onmessage = async (e: MessageEvent<WalkWorkerSetup>) => {
  const m = e.data;
  try {
    const { serveTasks } = await import("../../cfr/parallel.ts");
    const { WalkTaskRunner } = await import("./walk_tasks.ts");
    const inst = new WebAssembly.Instance(m.module, { env: { memory: m.memory } });
    const x = inst.exports as unknown as WalkTaskExports;
    x.setup(m.cfgBase + m.cfgStride * (m.slot + 1));
    const runner = new WalkTaskRunner(x, m.memory.buffer, m.layout);
    serveTasks(runner, m.slot, m.ctrl, m.visits, m.idleExitMs);
  } catch (err) {
    console.error(err);
    Atomics.store(m.ctrl, m.failFlag, 1);
    Atomics.notify(m.ctrl, m.failWake);
  }
  self.close();
};
