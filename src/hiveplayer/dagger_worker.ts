// Worker for `deno task hive-games --dagger MODEL`: loads the learner network once, plays the
// seeds it is given and posts each labelled game back.
import { loadHiveModel } from "../nn/model_file.ts";
import { SyncHiveNet } from "../uhp/mcts_player.ts";
import { type DaggerOptions, playDaggerGame } from "./dagger.ts";

interface Job {
  seeds: number[];
  model: string;
  netName: string;
  options: DaggerOptions;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Job>) => void) | null;
  postMessage(m: unknown): void;
};
scope.onmessage = async (e) => {
  const { seeds, model, netName, options } = e.data;
  const net = new SyncHiveNet((await loadHiveModel(model)).weights);
  for (const seed of seeds) {
    scope.postMessage({ game: playDaggerGame(seed, net, netName, options) });
  }
  scope.postMessage({ done: true });
};
