/// <reference lib="deno.worker" />
// Entry point of a CFR worker thread (started by WorkerPool in parallel.ts). The engine modules are
// imported dynamically so that a module that fails to load is reported to the waiting main thread.
import type { WorkerEntrySetup, WorkerSetup } from "./parallel.ts";
import type { CfrGame } from "./game.ts";

self.onmessage = async (e: MessageEvent<WorkerSetup | WorkerEntrySetup | { preload: string }>) => {
  const m = e.data;
  if ("preload" in m) {
    // Started ahead (parallel.ts prestartWorkers): load the modules now, the setup comes later
    // (a failure shows then, where it is reported).
    try {
      await (m.preload ? import(m.preload) : import("./solver.ts"));
    } catch { /* reported when the setup imports it */ }
    return;
  }
  try {
    if ("entry" in m) {
      // A game's own task loop (the threaded Wasm walk): only its modules load here.
      const mod = await import(m.entry.module);
      const serve = mod[m.entry.name] as ((m: WorkerEntrySetup) => void) | undefined;
      if (typeof serve !== "function") {
        throw new Error(`${m.entry.module} exports no ${m.entry.name}`);
      }
      serve(m);
    } else {
      const { serveTasks } = await import("./parallel.ts");
      const { CfrSolver } = await import("./solver.ts");
      const mod = await import(m.game.module);
      const Game = mod[m.game.name] as (new (...args: never[]) => CfrGame) | undefined;
      if (typeof Game !== "function") throw new Error(`${m.game.module} exports no ${m.game.name}`);
      // The game's own fields arrive as a structured clone; its methods come from the prototype.
      // Reflect.construct (without running the constructor) gives the object the class's instance
      // layout, so the fields land in-object as in a constructed game (Object.create costs ~10 %).
      const shell = Reflect.construct(Object, [], Game) as CfrGame;
      const game = Object.assign(shell, m.game.fields);
      const solver = new CfrSolver(m.tree, game, m.options, { ...m.stores, tasks: m.tasks });
      serveTasks(solver, m.slot, m.ctrl, m.visits, m.idleExitMs, m.stamps);
    }
  } catch (err) {
    console.error(err);
    // Flag the failure where the main thread looks while it waits for this worker to start.
    Atomics.store(m.ctrl, m.failFlag, 1);
    Atomics.notify(m.ctrl, m.failWake);
  }
  self.close();
};
