// Kibitz public API: re-exports only.
export * from "./src/errors.ts";
export * from "./src/gpu/mod.ts";
export * from "./src/quant/mod.ts";
export * from "./src/hive/mod.ts";
export * from "./src/uhp/mod.ts";
export * from "./src/sgf/mod.ts";
export * from "./src/cfr/mod.ts";
export * from "./src/games/mod.ts";
export * from "./src/poker/mod.ts";
export * from "./src/nn/mod.ts";
export * from "./src/mcts/mod.ts";
export * from "./src/alphazero/mod.ts";
export * from "./src/hiveplayer/mod.ts";
