export * from "./game.ts";
export * from "./tree.ts";
export * from "./schedule.ts";
export * from "./evaluate.ts";
export * from "./solver.ts";
export * from "./warmstart.ts";
export * from "./threads.ts";
export * from "./warmstart_values.ts";
