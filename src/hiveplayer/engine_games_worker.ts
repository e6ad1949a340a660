// Worker for `deno task hive-games`: plays the seeds it is given and posts each game back.
import { type EngineGameOptions, playEngineGame } from "./engine_games.ts";

interface Job {
  seeds: number[];
  options: EngineGameOptions;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Job>) => void) | null;
  postMessage(m: unknown): void;
};
scope.onmessage = (e) => {
  for (const seed of e.data.seeds) {
    scope.postMessage({ game: playEngineGame(seed, e.data.options) });
  }
  scope.postMessage({ done: true });
};
