// Public API of the Hold'em postflop solver.
export * from "./cards.ts";
export * from "./hand_eval.ts";
export { enumerateSevenCardCategories } from "./eval_enum.ts";
export * from "./range.ts";
export * from "./bet_size.ts";
export * from "./action_tree.ts";
export * from "./memory.ts";
export * from "./config.ts";
export {
  PostflopGame,
  type PostflopOptions,
  type PostflopState,
  WorkerPostflopGame,
} from "./game.ts";
export * from "./solve.ts";
// The threaded Wasm walk's worker task loop (in a browser bundle its workers import it from here).
export { serveWalkTasks } from "./wasm/walk_worker.ts";
export * from "./results.ts";
export * from "./checkpoint.ts";
export * from "./isomorphism.ts";
export * from "./warmstart.ts";
export * from "./warmstart_values.ts";
export * from "./warmstart_solve.ts";
