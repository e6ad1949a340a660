// Plays engine games on worker threads and hands each finished game to a callback, in finishing
// order. Seeds are dealt round-robin, so the set of games depends only on the seeds and options.
import { KibitzError } from "../errors.ts";
import type { StoredGame } from "../sgf/store.ts";
import { type EngineGameOptions, playEngineGame } from "./engine_games.ts";

/**
 * Runs `workers` (at least 1) threads of the worker module `url`, each sent `{ seeds, ...job }`
 * with its round-robin share of `seeds`; each game it posts back goes to `onGame`, in order.
 */
export async function runGameWorkers(
  url: string,
  seeds: number[],
  workers: number,
  job: Record<string, unknown>,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  const n = Math.min(workers, seeds.length);
  let chain = Promise.resolve();
  await Promise.all(Array.from({ length: n }, (_, w) =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(url, { type: "module" });
      worker.onmessage = (e: MessageEvent<{ game?: StoredGame; done?: boolean }>) => {
        if (e.data.game) {
          const g = e.data.game;
          chain = chain.then(() => onGame(g));
        }
        if (e.data.done) {
          worker.terminate();
          chain.then(resolve, reject);
        }
      };
      worker.onerror = (e) => {
        e.preventDefault();
        worker.terminate();
        reject(new KibitzError("worker_failed", `game worker ${w}: ${e.message}`));
      };
      worker.postMessage({ ...job, seeds: seeds.filter((_, i) => i % n === w) });
    })));
  await chain;
}

/** Plays `count` games with seeds `firstSeed ..` on `workers` threads (0: on this thread). */
export async function playEngineGames(
  count: number,
  firstSeed: number,
  workers: number,
  options: EngineGameOptions,
  onGame: (g: StoredGame) => void | Promise<void>,
): Promise<void> {
  const seeds = Array.from({ length: count }, (_, i) => firstSeed + i);
  if (workers <= 0) {
    for (const s of seeds) await onGame(playEngineGame(s, options));
    return;
  }
  const url = new URL("./engine_games_worker.ts", import.meta.url).href;
  await runGameWorkers(url, seeds, workers, { options }, onGame);
}
