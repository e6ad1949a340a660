// Public API of the UHP engine.
export { alphaBetaPlayer, parseUhpTime, UHP_ENGINE_ID, UhpEngine } from "./engine.ts";
export type { UhpPlayer } from "./engine.ts";
export { runUhpLoop } from "./loop.ts";
export {
  evaluate as evaluateHivePosition,
  searchBestMove as searchHiveBestMove,
  terminalScore as hiveTerminalScore,
} from "./alphabeta.ts";
export type {
  SearchLimits as HiveSearchLimits,
  SearchResult as HiveSearchResult,
} from "./alphabeta.ts";
