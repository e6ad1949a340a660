// PUCT Monte Carlo tree search over a small game interface (seed 003), game-agnostic.
export type { Game, GameSpec, Outcome } from "./game.ts";
export { inputSize } from "./game.ts";
export { CachedEvaluator, type Evaluation, type Evaluator, UniformEvaluator } from "./evaluator.ts";
export {
  defaultSearchConfig,
  type RootStats,
  Search,
  type SearchConfig,
  type SearchCounters,
} from "./search.ts";
export { dirichlet, gammaSample, mulberry32, sampleIndex } from "./random.ts";
