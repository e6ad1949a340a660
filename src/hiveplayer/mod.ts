// Public API of the learning Hive player (issue 17): symmetries, engine games, pretraining, model
// files, the Hive adapter of the AlphaZero engine, the UHP network player and the strength ladder.
export {
  HEX_SYMMETRIES,
  hexTransform,
  inverseSymmetry as inverseHexSymmetry,
  transformCell as transformHexCell,
  transformGame as transformHiveGame,
  transformMove as transformHiveMove,
} from "../hive/symmetry.ts";
export {
  ENGINE_GAME_DEFAULTS as HIVE_ENGINE_GAME_DEFAULTS,
  type EngineGameOptions as HiveEngineGameOptions,
  playEngineGame as playHiveEngineGame,
} from "./engine_games.ts";
export { playEngineGames as playHiveEngineGames } from "./engine_games_pool.ts";
export {
  DAGGER_DEFAULTS as HIVE_DAGGER_DEFAULTS,
  type DaggerOptions as HiveDaggerOptions,
  isLabelled as isLabelledHiveGame,
  type LabelledGame as LabelledHiveGame,
  playDaggerGame as playHiveDaggerGame,
} from "./dagger.ts";
export {
  playDaggerGames as playHiveDaggerGames,
  playMatchGames as playHiveMatchGames,
} from "./net_games_pool.ts";
export {
  MATCH_GAME_DEFAULTS as HIVE_MATCH_GAME_DEFAULTS,
  type MatchGameOptions as HiveMatchGameOptions,
  playMatchGame as playHiveMatchGame,
} from "./match_games.ts";
export {
  type EncodedBatch as EncodedHiveBatch,
  encodeSamples as encodeHiveSamples,
  type EpochReport as HivePretrainEpoch,
  type PolicyMetrics as HivePolicyMetrics,
  prepareGames as prepareHivePretrainGames,
  pretrain as pretrainHive,
  splitByGame as splitHiveGamesByGame,
  uniformMetrics as hiveUniformMetrics,
} from "./pretrain.ts";
export {
  initFrom as initHiveNetFrom,
  type PretrainRun as HivePretrainRun,
  runPretrain as runHivePretrain,
} from "./pretrain_run.ts";
export {
  decodeHiveModel,
  encodeHiveModel,
  type HiveModel,
  loadHiveModel,
} from "../nn/model_file.ts";
export {
  alphaBetaLadderPlayer as hiveAlphaBetaLadderPlayer,
  eloFromScore,
  type LadderPlayer as HiveLadderPlayer,
  type MatchResult as HiveMatchResult,
  mctsLadderPlayer as hiveMctsLadderPlayer,
  playMatch as playHiveMatch,
  policyLadderPlayer as hivePolicyLadderPlayer,
  randomPlayer as hiveRandomPlayer,
  scoreStats as matchScoreStats,
} from "./strength.ts";
export {
  HIVE_NETS,
  HIVE_SELFPLAY_RULES,
  HiveAzGame,
  hiveCellsCpuPreset,
  hiveCpuPreset,
  hiveOutcome,
  hivePreset,
  type HiveRules,
  hiveSpec,
  hiveTinyPreset,
  warmStart as hiveWarmStart,
} from "../alphazero/hive.ts";
export {
  DEFAULT_HIVE_MODEL,
  type HiveEvaluator,
  loadUhpModel,
  MctsPlayer as HiveMctsPlayer,
  PLAYOUTS_PER_DEPTH as HIVE_PLAYOUTS_PER_DEPTH,
  PolicyPlayer as HivePolicyPlayer,
  SyncHiveNet,
  uniformHiveEvaluator,
} from "../uhp/mcts_player.ts";
