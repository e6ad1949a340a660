// Plays labelled games that need the network (DAgger games, match games) on worker threads, each
// loading the network once.
import { loadHiveModel } from "../nn/model_file.ts";
import type { StoredGame } from "../sgf/store.ts";
import { SyncHiveNet } from "../uhp/mcts_player.ts";
import { type NetGameJob, playNetGame } from "./net_games.ts";
import { runGameWorkers } from "./engine_games_pool.ts";
import type { DaggerOptions } from "./dagger.ts";
import type { MatchGameOptions } from "./match_games.ts";

/**
 * Plays `count` games of `job` with seeds `firstSeed ..`, the network of `model` loaded once per
 * thread, on `workers` threads (0: on this thread).
 */
export async function playNetGames(
  count: number,
  firstSeed: number,
  workers: number,
  model: string,
  job: NetGameJob,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  const seeds = Array.from({ length: count }, (_, i) => firstSeed + i);
  const loaded = await loadHiveModel(model);
  const base = model.slice(model.lastIndexOf("/") + 1);
  const netName = typeof loaded.meta.name === "string" ? loaded.meta.name : base;
  if (workers <= 0) {
    const net = new SyncHiveNet(loaded.weights);
    for (const s of seeds) await onGame(playNetGame(job, s, net, netName));
    return;
  }
  const url = new URL("./net_games_worker.ts", import.meta.url).href;
  await runGameWorkers(url, seeds, workers, { model, netName, job }, onGame);
}

/** Plays `count` DAgger games (see playDaggerGame) with the network of `model` as the learner. */
export function playDaggerGames(
  count: number,
  firstSeed: number,
  workers: number,
  model: string,
  options: DaggerOptions,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  return playNetGames(count, firstSeed, workers, model, { kind: "dagger", options }, onGame);
}

/** Plays `count` match games (see playMatchGame) with the network of `model` searching. */
export function playMatchGames(
  count: number,
  firstSeed: number,
  workers: number,
  model: string,
  options: MatchGameOptions,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  return playNetGames(count, firstSeed, workers, model, { kind: "match", options }, onGame);
}
