// The AlphaZero engine: batched network evaluation, self-play, replay buffer, training, arena
// gating and the loop over a state folder; small solved games for its oracles.
export { BatchEvaluator, type BatchInfer, type EvaluatorStats } from "./evaluator.ts";
export { encodeChunk, type Position, ReplayBuffer } from "./buffer.ts";
export {
  defaultSelfPlayConfig,
  type GameRecord,
  gameSeed,
  playSelfPlayGame,
  selfPlay,
  type SelfPlayConfig,
} from "./selfplay.ts";
export {
  type ArenaConfig,
  type ArenaGame,
  type ArenaResult,
  arenaTotals,
  defaultArenaConfig,
  playArenaGame,
  runArena,
} from "./arena.ts";
export {
  defaultTrainConfig,
  type TrainConfig,
  trainFromBuffer,
  type TrainSummary,
} from "./train.ts";
export { checkAgainstPerfect, ExactSolver, type PerfectCheck } from "./solver.ts";
export {
  azGames,
  type AzPreset,
  azPreset,
  netFor,
  registerAzGame,
  seed003Preset,
} from "./presets.ts";
export {
  arenaStage,
  type IterationLog,
  type NetPlayer,
  netPlayer,
  readJsonLines,
  type RunHooks,
  runLoop,
  selfPlayStage,
  type SelfPlayStats,
} from "./loop.ts";
export { TICTACTOE, TicTacToe } from "./games/tictactoe.ts";
export { ConnectFour, connectFourSpec } from "./games/connect4.ts";
