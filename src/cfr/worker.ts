/// <reference lib="deno.worker" />
// Entry point of a CFR worker thread (started by WorkerPool in parallel.ts).
import { reportStartFailure, serveTasks, type WorkerSetup } from "./parallel.ts";
import { CfrSolver } from "./solver.ts";
import type { CfrGame } from "./game.ts";

self.onmessage = async (e: MessageEvent<WorkerSetup>) => {
  const m = e.data;
  try {
    const mod = await import(m.game.module);
    const Game = mod[m.game.name] as { prototype: object } | undefined;
    if (!Game) throw new Error(`${m.game.module} exports no ${m.game.name}`);
    // The game's own fields arrive as a structured clone; its methods come from the prototype.
    const game = Object.assign(Object.create(Game.prototype), m.game.fields) as CfrGame;
    const solver = new CfrSolver(m.tree, game, m.options, { ...m.stores, tasks: m.tasks });
    serveTasks(solver, m.slot, m.ctrl, m.visits);
  } catch (err) {
    console.error(err);
    reportStartFailure(m.ctrl, m.slot);
  }
  self.close();
};
