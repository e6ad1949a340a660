// Worker for `deno task hive-games --dagger|--match MODEL`: loads the network once, plays the
// seeds it is given and posts each labelled game back.
import { loadHiveModel } from "../nn/model_file.ts";
import { SyncHiveNet } from "../uhp/mcts_player.ts";
import { type NetGameJob, playNetGame } from "./net_games.ts";

interface Job {
  seeds: number[];
  model: string;
  netName: string;
  job: NetGameJob;
}

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Job>) => void) | null;
  postMessage(m: unknown): void;
};
scope.onmessage = async (e) => {
  const { seeds, model, netName, job } = e.data;
  const net = new SyncHiveNet((await loadHiveModel(model)).weights);
  for (const seed of seeds) scope.postMessage({ game: playNetGame(job, seed, net, netName) });
  scope.postMessage({ done: true });
};
