// Per-game presets of the AlphaZero loop: the game, the network shape and every number of the
// loop. Small games get numbers that finish on a laptop CPU; `seed003Preset` holds the seed's
// numbers for a full-size game (the Hive adapter registers itself with it).
import { KibitzError } from "../errors.ts";
import type { GameSpec } from "../mcts/game.ts";
import { defaultSearchConfig } from "../mcts/search.ts";
import { NET_PRESETS, type NetConfig } from "../nn/config.ts";
import { type ArenaConfig, defaultArenaConfig } from "./arena.ts";
import { connectFourSpec } from "./games/connect4.ts";
import { TICTACTOE } from "./games/tictactoe.ts";
import { defaultSelfPlayConfig, type SelfPlayConfig } from "./selfplay.ts";
import { defaultTrainConfig, type TrainConfig } from "./train.ts";

/** Everything one run of the loop needs. */
export interface AzPreset {
  game: GameSpec<unknown>;
  net: NetConfig;
  selfplay: SelfPlayConfig;
  train: TrainConfig;
  arena: ArenaConfig;
  /** Self-play games per iteration (seed 003: 256). */
  gamesPerIteration: number;
  /** Iterations of the loop (0: until stopped). */
  iterations: number;
  /** Replay buffer capacity in positions (seed 003: 500,000). */
  bufferCapacity: number;
  /** Arena score at or above which the candidate becomes the best (seed 003: 0.55). */
  promoteAt: number;
  /** Positions per network call at most (default 256). */
  maxBatch: number;
  /** Evaluation-cache entries per network (0: no cache). */
  cacheSize: number;
  /** Playouts of the perfect-play check after each iteration (solved games only; 0: none). */
  perfectCheckPlayouts: number;
  seed: number;
}

/** Seed 003's numbers for a game, with the default 19 x 256 network shaped to the game. */
export function seed003Preset(game: GameSpec<unknown>): AzPreset {
  return {
    game,
    net: netFor(game, NET_PRESETS.default),
    // A cap on game length (scored a draw) so a game that cycles cannot stall an iteration.
    selfplay: defaultSelfPlayConfig({ maxPlies: 500 }),
    train: defaultTrainConfig(),
    arena: defaultArenaConfig({ maxPlies: 500 }),
    gamesPerIteration: 256,
    iterations: 0,
    bufferCapacity: 500_000,
    promoteAt: 0.55,
    maxBatch: 256,
    cacheSize: 200_000,
    perfectCheckPlayouts: 0,
    seed: 1,
  };
}

/** A network shape with a game's input planes, board and policy size. */
export function netFor(game: GameSpec<unknown>, base: NetConfig): NetConfig {
  return {
    ...base,
    planes: game.planes,
    height: game.height,
    width: game.width,
    moves: game.moves,
  };
}

function tictactoe(): AzPreset {
  const base = seed003Preset(TICTACTOE as GameSpec<unknown>);
  return {
    ...base,
    net: netFor(TICTACTOE as GameSpec<unknown>, {
      ...NET_PRESETS.tiny,
      blocks: 2,
      filters: 16,
      valueHidden: 32,
    }),
    selfplay: defaultSelfPlayConfig({
      playouts: 100,
      concurrency: 32,
      temperatureMoves: 4,
      search: defaultSearchConfig({ noise: true, dirichletAlpha: 1.0, leavesPerRound: 4 }),
    }),
    train: defaultTrainConfig({ batch: 128, steps: 150, lrMax: 0.05, lrMin: 0.001 }),
    arena: defaultArenaConfig({ games: 40, playouts: 50, openingMoves: 2, concurrency: 40 }),
    gamesPerIteration: 128,
    iterations: 6,
    bufferCapacity: 20_000,
    cacheSize: 10_000,
    perfectCheckPlayouts: 200,
  };
}

function connect4Small(): AzPreset {
  const game = connectFourSpec(5, 4, 4) as GameSpec<unknown>;
  const base = seed003Preset(game);
  return {
    ...base,
    net: netFor(game, { ...NET_PRESETS.tiny, blocks: 1, filters: 16, valueHidden: 32 }),
    selfplay: defaultSelfPlayConfig({
      playouts: 64,
      concurrency: 32,
      temperatureMoves: 6,
      search: defaultSearchConfig({ noise: true, dirichletAlpha: 1.0, leavesPerRound: 4 }),
    }),
    train: defaultTrainConfig({ batch: 128, steps: 200, lrMax: 0.05, lrMin: 0.001 }),
    arena: defaultArenaConfig({ games: 40, playouts: 50, openingMoves: 2, concurrency: 40 }),
    gamesPerIteration: 128,
    iterations: 8,
    bufferCapacity: 40_000,
    cacheSize: 50_000,
  };
}

function connect3Small(): AzPreset {
  const game = connectFourSpec(5, 4, 3) as GameSpec<unknown>;
  const base = connect4Small();
  return {
    ...base,
    game,
    net: netFor(game, base.net),
    train: defaultTrainConfig({ batch: 64, steps: 80, lrMax: 0.05, lrMin: 0.001 }),
    gamesPerIteration: 64,
    iterations: 3,
    bufferCapacity: 20_000,
    perfectCheckPlayouts: 0,
  };
}

/** Connect Four 7 x 6: sized for a GPU or a long CPU run (hours on the CPU reference network). */
function connect4(): AzPreset {
  const game = connectFourSpec(7, 6, 4) as GameSpec<unknown>;
  const base = seed003Preset(game);
  return {
    ...base,
    net: netFor(game, { ...NET_PRESETS.small, blocks: 4, filters: 32, valueHidden: 64 }),
    selfplay: defaultSelfPlayConfig({
      playouts: 200,
      concurrency: 64,
      temperatureMoves: 10,
      search: defaultSearchConfig({ noise: true, dirichletAlpha: 1.0, leavesPerRound: 4 }),
    }),
    train: defaultTrainConfig({ batch: 256, steps: 500 }),
    arena: defaultArenaConfig({ games: 100, playouts: 100, openingMoves: 4 }),
    gamesPerIteration: 256,
    iterations: 20,
    bufferCapacity: 200_000,
  };
}

const REGISTRY = new Map<string, () => AzPreset>([
  ["tictactoe", tictactoe],
  ["connect4-5x4", connect4Small],
  ["connect3-5x4", connect3Small],
  ["connect4", connect4],
]);

/** Adds a game to the loop's presets (the Hive adapter calls this with `seed003Preset`). */
export function registerAzGame(name: string, make: () => AzPreset): void {
  REGISTRY.set(name, make);
}

/** Names of the games with a preset. */
export function azGames(): string[] {
  return [...REGISTRY.keys()];
}

/** A fresh copy of a game's preset, or a clear error listing the known games. */
export function azPreset(name: string): AzPreset {
  const make = REGISTRY.get(name);
  if (!make) {
    throw new KibitzError(
      "bad_args",
      `game "${name}": unknown (expected ${azGames().join(", ")})`,
    );
  }
  return make();
}
