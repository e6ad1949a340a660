export * from "./solver.ts";
export { buildTables, isPokerSource, MAX_DENSE_BYTES } from "./tables.ts";
