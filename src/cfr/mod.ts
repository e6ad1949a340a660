export * from "./game.ts";
export * from "./tree.ts";
export * from "./schedule.ts";
