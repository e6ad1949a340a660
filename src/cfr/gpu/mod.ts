export * from "./solver.ts";
export { buildTables, isPokerSource, MAX_DENSE_BYTES } from "./tables.ts";
export { type ChunkPlan, cutOf, planChunks, type Segment } from "./chunks.ts";
