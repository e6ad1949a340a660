// Imitation of the alpha-beta player on the positions the network itself reaches (DAgger: Ross,
// Gordon and Bagnell 2011). The learner (the network's policy, greedy or sampled, sometimes
// replaced by the expert's move) plays games against the uniform random player or itself; at
// every position where the learner is to move the alpha-beta player's move is recorded as the
// policy target and its search score, squashed to [-1, 1], as the value target. The games are
// written in the game-store format (JSON lines) with the labels as extra fields, so the
// pretraining reads them beside engine and human games.
import { mulberry32 } from "../mcts/random.ts";
import type { StoredGame } from "../sgf/store.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import type { HiveEvaluator } from "../uhp/mcts_player.ts";
import { HiveGame } from "../hive/game.ts";
import { playedGame } from "./engine_games.ts";

/** A stored game whose positions carry the expert's move and value (labelled game). */
export interface LabelledGame extends StoredGame {
  /** Who labelled the positions, e.g. `kibitz-alphabeta-d2`. */
  labeller: string;
  /** The expert's move (UHP string) at the position before `moves[i]`; null: not labelled. */
  labels: (string | null)[];
  /** The expert's value for the side to move at that position, in [-1, 1]; null: not labelled. */
  labelValues: (number | null)[];
}

/**
 * The labeller of match games (match_games.ts): their labels are the moves played and their values
 * the game's result, not an expert's move and score.
 */
export const MATCH_LABELLER = "result";

/** True when a stored game carries per-position labels (see LabelledGame). */
export function isLabelled(g: StoredGame): g is LabelledGame {
  const l = g as Partial<LabelledGame>;
  return Array.isArray(l.labels) && Array.isArray(l.labelValues);
}

/** Alpha-beta scores beyond this are wins or losses found by the search (WIN - plies). */
export const ENGINE_MATE = 999_000;

/** The alpha-beta score squashed to [-1, 1]: tanh(score / scale), a found win or loss +-1. */
export function squashScore(score: number, scale: number): number {
  return Math.abs(score) > ENGINE_MATE ? Math.sign(score) : Math.tanh(score / scale);
}

/** How labelled (DAgger) games are played. */
export interface DaggerOptions {
  gameType: string;
  /** Alpha-beta depth of the expert's labels. */
  labelDepth: number;
  /** Score scale of the value labels' tanh squash. */
  scale: number;
  /** Uniformly random plies at the start (not labelled). */
  randomPlies: number;
  /** Plies after which a game is stopped (stored as Unfinished; its labels are still used). */
  maxPlies: number;
  /** Share of games (by seed) against the uniform random player; the rest are learner vs itself. */
  vsRandom: number;
  /** Probability that the expert's move is played instead of the learner's (DAgger's beta). */
  beta: number;
  /** Probability that the learner plays its top move; otherwise it samples its policy. */
  greedy: number;
  /** Softmax temperature of sampled learner moves (priors ^ (1 / T)). */
  temperature: number;
}

/** The defaults of `deno task hive-games --dagger MODEL`. */
export const DAGGER_DEFAULTS: DaggerOptions = {
  gameType: "Base+MLP",
  labelDepth: 2,
  scale: 200,
  randomPlies: 2,
  maxPlies: 200,
  vsRandom: 0.5,
  beta: 0.2,
  greedy: 0.7,
  temperature: 1,
};

/** The labeller's name, e.g. `kibitz-alphabeta-d2`. */
export function labellerName(o: DaggerOptions): string {
  return `kibitz-alphabeta-d${o.labelDepth}`;
}

/** Index of the learner's move among `legal`: the top prior, or a sample at `temperature`. */
export function learnerChoice(
  priors: Float32Array,
  greedy: boolean,
  temperature: number,
  u: number,
): number {
  let best = 0;
  for (let i = 1; i < priors.length; i++) if (priors[i] > priors[best]) best = i;
  if (greedy || temperature <= 0) return best;
  const w = new Float64Array(priors.length);
  let sum = 0;
  for (let i = 0; i < priors.length; i++) {
    w[i] = Math.pow(Math.max(priors[i], 0), 1 / temperature);
    sum += w[i];
  }
  if (!(sum > 0)) return best;
  let x = u * sum;
  for (let i = 0; i < w.length; i++) {
    x -= w[i];
    if (x < 0) return i;
  }
  return w.length - 1;
}

/**
 * Plays one seeded labelled game with `net` as the learner (`netName` names it in the record).
 * Each distinct position where the learner moves with more than one legal move is labelled once
 * (repeated positions of a shuffle are not labelled again).
 */
export function playDaggerGame(
  seed: number,
  net: HiveEvaluator,
  netName: string,
  o: DaggerOptions,
): LabelledGame {
  const rand = mulberry32(seed * 2654435761 + 29);
  const vsRandom = rand() < o.vsRandom;
  // Against random play the learner is White on even seeds, Black on odd ones.
  const learnerColor = seed % 2;
  const g = new HiveGame(o.gameType);
  const moves: string[] = [], labels: (string | null)[] = [], values: (number | null)[] = [];
  const seen = new Set<string>();
  while (!g.isOver() && g.turn < o.maxPlies) {
    const legal = g.validMoves();
    let m: number, label: string | null = null, value: number | null = null;
    if (g.turn < o.randomPlies || (vsRandom && g.colorToMove !== learnerColor)) {
      m = legal[Math.floor(rand() * legal.length)];
    } else if (legal.length <= 1) {
      m = legal[0];
    } else {
      const key = `${g.hashLo},${g.hashHi}`;
      const fresh = !seen.has(key), useExpert = rand() < o.beta;
      let expert = -1;
      if (fresh || useExpert) {
        const r = searchBestMove(g, { depth: o.labelDepth });
        expert = r.move;
        if (fresh) {
          seen.add(key);
          label = g.moveString(r.move);
          value = squashScore(r.score, o.scale);
        }
      }
      if (useExpert) m = expert;
      else {
        const e = net.evaluate(g, legal);
        m = legal[learnerChoice(e.priors, rand() < o.greedy, o.temperature, rand())];
      }
    }
    const s = g.moveString(m);
    moves.push(s);
    labels.push(label);
    values.push(value);
    g.play(m, s);
  }
  const labeller = labellerName(o);
  const learner = `kibitz-policy-${netName}`;
  return {
    ...playedGame(g, {
      gameName: `dagger-${netName}-${labeller}-seed${seed}`,
      source: `dagger:${netName}+${labeller}`,
      index: seed,
      gameType: o.gameType,
      variant: "dagger",
      white: vsRandom && learnerColor !== 0 ? "kibitz-random" : learner,
      black: vsRandom && learnerColor !== 1 ? "kibitz-random" : learner,
      moves,
      maxPlies: o.maxPlies,
    }),
    labeller,
    labels,
    labelValues: values,
  };
}
