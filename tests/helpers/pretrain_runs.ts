// A tiny pretraining run's options (the tiny net, 3 epochs of 8 positions, batches of 4) on the
// engine games of a store, for the tests that compare runs with one another.
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { playEngineGame } from "../../src/hiveplayer/engine_games.ts";
import type { PretrainRun } from "../../src/hiveplayer/pretrain_run.ts";
import type { StoredGame } from "../../src/sgf/store.ts";

/** The engine games' settings: 6 random plies, then depth-1 alpha-beta, 10 plies at most. */
export const ENGINE_GAME_OPTS = {
  gameType: "Base+MLP",
  randomPlies: 6,
  depth: 1,
  timeMs: 0,
  maxPlies: 10,
  otherDepth: 0,
};

/** `n` short seeded engine games (ENGINE_GAME_OPTS). */
export function engineGames(n: number): StoredGame[] {
  return Array.from({ length: n }, (_, i) => playEngineGame(i + 1, ENGINE_GAME_OPTS));
}

/** Writes `n` engine games as a store in `dir`; returns its path. */
export async function engineStore(dir: string, n = 4): Promise<string> {
  const store = `${dir}/games.jsonl`;
  await Deno.writeTextFile(store, engineGames(n).map((g) => JSON.stringify(g)).join("\n") + "\n");
  return store;
}

/** The tiny run on `store` writing `out` (its log beside it), with `extra` on top. */
export function tinyRun(store: string, out: string, extra: Partial<PretrainRun>): PretrainRun {
  return {
    stores: [store],
    out,
    log: `${out}.log.jsonl`,
    net: { ...HIVE_NETS.tiny },
    netName: "tiny",
    init: null,
    model: null,
    modelName: "test-net",
    epochs: 3,
    batch: 4,
    positionsPerEpoch: 8,
    valFraction: 0.25,
    valPositions: 4,
    maxGames: 0,
    finishedOnly: false,
    lrMax: 0.01,
    lrMin: 0.001,
    augment: true,
    backend: "cpu",
    seed: 1,
    say: () => {},
    step: () => {},
    epoch: () => {},
    ...extra,
  };
}
