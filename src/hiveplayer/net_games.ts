// The kinds of labelled games played with a network: which game function a seed goes to.
import type { HiveEvaluator } from "../uhp/mcts_player.ts";
import { type DaggerOptions, type LabelledGame, playDaggerGame } from "./dagger.ts";
import { type MatchGameOptions, playMatchGame } from "./match_games.ts";

/** A labelled-game job: DAgger games or match games, with their options. */
export type NetGameJob =
  | { kind: "dagger"; options: DaggerOptions }
  | { kind: "match"; options: MatchGameOptions };

/** Plays the seeded game of `job` with `net` (named `netName` in the record). */
export function playNetGame(
  job: NetGameJob,
  seed: number,
  net: HiveEvaluator,
  netName: string,
): LabelledGame {
  return job.kind === "dagger"
    ? playDaggerGame(seed, net, netName, job.options)
    : playMatchGame(seed, net, netName, job.options);
}
