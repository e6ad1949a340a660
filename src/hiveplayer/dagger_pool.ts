// Plays labelled (DAgger) games on worker threads, each loading the learner network once.
import { loadHiveModel } from "../nn/model_file.ts";
import type { StoredGame } from "../sgf/store.ts";
import { SyncHiveNet } from "../uhp/mcts_player.ts";
import { type DaggerOptions, playDaggerGame } from "./dagger.ts";
import { runGameWorkers } from "./engine_games_pool.ts";

/**
 * Plays `count` labelled games with seeds `firstSeed ..`, the network of `model` as the learner,
 * on `workers` threads (0: on this thread).
 */
export async function playDaggerGames(
  count: number,
  firstSeed: number,
  workers: number,
  model: string,
  options: DaggerOptions,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  const seeds = Array.from({ length: count }, (_, i) => firstSeed + i);
  const loaded = await loadHiveModel(model);
  const base = model.slice(model.lastIndexOf("/") + 1);
  const netName = typeof loaded.meta.name === "string" ? loaded.meta.name : base;
  if (workers <= 0) {
    const net = new SyncHiveNet(loaded.weights);
    for (const s of seeds) await onGame(playDaggerGame(s, net, netName, options));
    return;
  }
  const url = new URL("./dagger_worker.ts", import.meta.url).href;
  await runGameWorkers(url, seeds, workers, { model, netName, options }, onGame);
}
