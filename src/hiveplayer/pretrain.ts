// Supervised warm start (seed 003, section 6): positions of stored games -> the 24 input planes,
// the move played as the policy target and the final result from the side to move as the value
// target. Validation games are split off by game (never by position); training positions are seen
// through one of the 12 hex symmetries, drawn per game and epoch, applied to the moves' hex
// coordinates before encoding.
import { KibitzError } from "../errors.ts";
import { mulberry32 } from "../mcts/random.ts";
import type { PolicyValueNet, TrainBatch } from "../nn/net.ts";
import { Trainer } from "../nn/train.ts";
import { runTrainSteps } from "../nn/train_steps.ts";
import type { SgdConfig } from "../nn/optimizer.ts";
import { gamePositions, valueForPly } from "../sgf/positions.ts";
import type { StoredGame } from "../sgf/store.ts";
import {
  encodeHivePosition,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveCellPositions,
  hiveLegalMask,
  hiveMoveIndex,
} from "../hive/encoding.ts";
import { HiveGame } from "../hive/game.ts";
import { HEX_SYMMETRIES, transformMove } from "../hive/symmetry.ts";
import { hiveMoveCellRows, packMoveCells } from "../hive/move_cells.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import { isLabelled, MATCH_LABELLER, squashScore } from "./dagger.ts";

/** A stored game replayed to packed moves, with its value target per ply. */
export interface PretrainGame {
  id: string;
  gameType: string;
  moves: number[];
  /** The final result from the side to move at each ply (1, 0, -1). */
  values: number[];
  /** Value targets used instead of `values` in training when set (see mixEngineValues). */
  targets?: number[];
  /** Plies whose move is oversampled in training (see markTactical), when marked. */
  tactical?: Uint8Array;
  /**
   * Labelled games (see LabelledGame): the expert's move per ply (-1: not labelled, no sample), the
   * policy target instead of the move played; `targets` then holds the expert's values.
   */
  labels?: Int32Array;
  /**
   * The labels are the moves played (match games, labeller MATCH_LABELLER), not an expert's: with
   * winner moves only, they are imitated only where the side to move went on to win, as in
   * unlabelled games.
   */
  played?: boolean;
}

/**
 * Marks the plies whose move wins at once or brings the enemy queen from fewer than five neighbours
 * to five (a new win threat) for the mover: the positions a policy trained on whole games sees too rarely (wins in one
 * are 0.65 % of the shipped network's training positions). Returns how many were marked.
 */
export function markTactical(games: PretrainGame[]): number {
  let marked = 0;
  for (const pg of games) {
    const g = new HiveGame(pg.gameType);
    pg.tactical = new Uint8Array(pg.moves.length);
    if (pg.labels) continue; // the labels are the targets there, not the moves played
    pg.moves.forEach((m, ply) => {
      const me = g.turn & 1, before = g.queenNeighbors(1 - me);
      g.play(m);
      const won = g.outcomeForSideToMove() === -1;
      if (won || (!g.isOver() && before < 5 && g.queenNeighbors(1 - me) === 5)) {
        pg.tactical![ply] = 1;
        marked++;
      }
    });
  }
  return marked;
}

/** The samples plus `k - 1` more copies of each one on a marked (tactical) ply. */
export function oversampleTactical(
  games: PretrainGame[],
  samples: PretrainSample[],
  k: number,
): PretrainSample[] {
  if (k <= 1) return samples;
  const out = [...samples];
  for (const s of samples) {
    if (games[s.game].tactical?.[s.ply]) { for (let c = 1; c < k; c++) out.push({ ...s }); }
  }
  return out;
}

/**
 * Replays stored games to packed moves; games that do not replay (a move or label that is not
 * legal, labels not aligned with the moves) are counted and skipped. A labelled game's expert
 * moves become its policy targets and its expert values its value targets.
 */
export function prepareGames(games: StoredGame[]): { games: PretrainGame[]; skipped: number } {
  const out: PretrainGame[] = [];
  let skipped = 0;
  for (const g of games) {
    try {
      const moves: number[] = [];
      const labelled = isLabelled(g);
      if (
        labelled && (g.labels.length !== g.moves.length || g.labelValues.length !== g.moves.length)
      ) {
        throw new Error("labels not aligned with moves");
      }
      const labels = labelled ? new Int32Array(g.moves.length).fill(-1) : undefined;
      const targets: number[] = [];
      for (const p of gamePositions(g)) {
        moves.push(p.moveCode);
        if (!labelled) continue;
        const l = g.labels[p.ply], v = g.labelValues[p.ply];
        targets.push(typeof v === "number" && Number.isFinite(v) ? v : 0);
        if (l === null) continue;
        const code = p.game.parseMove(l);
        if (!p.game.isValid(code) || typeof v !== "number") throw new Error("bad label");
        labels![p.ply] = code;
      }
      if (moves.length === 0) continue;
      out.push({
        id: g.id,
        gameType: g.gameType,
        moves,
        values: moves.map((_, ply) => valueForPly(g.result, ply)),
        ...(labelled ? { labels, targets, played: g.labeller === MATCH_LABELLER } : {}),
      });
    } catch {
      skipped++;
    }
  }
  return { games: out, skipped };
}

/**
 * The alpha-beta player's view of every position of a game: its search score at `depth` from the
 * side to move, squashed to tanh(score / scale) (a found win or loss is +-1).
 */
export function engineValues(game: PretrainGame, depth: number, scale: number): number[] {
  const g = new HiveGame(game.gameType);
  return game.moves.map((m) => {
    const s = searchBestMove(g, { depth }).score;
    g.play(m);
    return squashScore(s, scale);
  });
}

/**
 * Denser value targets (engine-evaluation distillation): each training position's target becomes
 * lambda x the engine's squashed score + (1 - lambda) x the game's result, so positions of one game
 * no longer share a single noisy label. `onGame` hears progress (the searches take milliseconds
 * per position).
 */
export function mixEngineValues(
  games: PretrainGame[],
  o: { lambda: number; depth: number; scale: number },
  onGame: (done: number) => void = () => {},
): void {
  games.forEach((pg, i) => {
    if (pg.labels) return onGame(i + 1); // already the expert's values
    const e = engineValues(pg, o.depth, o.scale);
    pg.targets = pg.values.map((v, k) => o.lambda * e[k] + (1 - o.lambda) * v);
    onGame(i + 1);
  });
}

/**
 * Splits games into training and validation by game id (seeded shuffle of the sorted ids):
 * `fraction` of the games, at least one when there are two or more, go to validation.
 */
export function splitByGame(
  games: PretrainGame[],
  fraction: number,
  seed: number,
): { train: PretrainGame[]; val: PretrainGame[] } {
  const sorted = [...games].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rand = mulberry32(seed);
  for (let i = sorted.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [sorted[i], sorted[j]] = [sorted[j], sorted[i]];
  }
  let nv = Math.round(sorted.length * fraction);
  if (fraction > 0 && nv === 0 && sorted.length >= 2) nv = 1;
  return { val: sorted.slice(0, nv), train: sorted.slice(nv) };
}

/** One sample: game, ply, symmetry. */
export interface PretrainSample {
  game: number;
  ply: number;
  symmetry: number;
}

/** An encoded batch of samples: the network's inputs and targets, the legal counts and target indices. */
export type EncodedBatch = TrainBatch & { legalCounts: number[]; targets: number[] };

/**
 * Encodes samples into a training batch (planes, legal mask, one-hot move, value). With
 * `winnerMovesOnly`, positions whose side to move did not go on to win get an all-zero policy
 * target (no policy loss or gradient: only the winners' moves are imitated); values are kept.
 * With `cells` (a net with the cells policy head) the batch carries the legal moves' cell table
 * (NetBatch.moveCells, src/hive/move_cells.ts).
 */
export function encodeSamples(
  games: PretrainGame[],
  samples: PretrainSample[],
  winnerMovesOnly = false,
  cells = false,
): EncodedBatch {
  const n = samples.length;
  const planes = new Float32Array(n * HIVE_PLANE_SIZE);
  const mask = new Float32Array(n * HIVE_POLICY_SIZE);
  const policy = new Float32Array(n * HIVE_POLICY_SIZE);
  const value = new Float32Array(n);
  const legalCounts: number[] = [], targets: number[] = [];
  const rows: Float32Array[] = [];
  samples.forEach((s, i) => {
    const pg = games[s.game];
    const g = new HiveGame(pg.gameType);
    for (let k = 0; k < s.ply; k++) g.play(transformMove(pg.moves[k], s.symmetry));
    const legal = g.validMoves();
    const pos = hiveCellPositions(g);
    encodeHivePosition(g, planes, i * HIVE_PLANE_SIZE, legal, pos);
    hiveLegalMask(g, mask, i * HIVE_POLICY_SIZE, legal);
    if (cells) rows.push(hiveMoveCellRows(g, legal, pos));
    const label = pg.labels ? pg.labels[s.ply] : pg.moves[s.ply];
    const move = label < 0 ? -1 : transformMove(label, s.symmetry);
    if (!legal.includes(move)) {
      throw new KibitzError("bad_store", `game ${pg.id} ply ${s.ply + 1}: target is not legal`);
    }
    const t = hiveMoveIndex(g, move);
    // A labelled position's target is the expert's move whoever won the game.
    const expert = pg.labels !== undefined && !pg.played;
    if (expert || !winnerMovesOnly || pg.values[s.ply] > 0) policy[i * HIVE_POLICY_SIZE + t] = 1;
    value[i] = pg.targets?.[s.ply] ?? pg.values[s.ply];
    targets.push(t);
    let distinct = 0;
    for (let k = 0; k < HIVE_POLICY_SIZE; k++) if (mask[i * HIVE_POLICY_SIZE + k] > 0) distinct++;
    legalCounts.push(distinct);
  });
  return {
    size: n,
    planes,
    mask,
    policy,
    value,
    legalCounts,
    targets,
    ...(cells ? packMoveCells(rows) : {}),
  };
}

/**
 * Every position of `games` as samples under symmetry `symmetry` (or a random one per game); in
 * labelled games only the labelled positions.
 */
export function samplesOf(
  games: PretrainGame[],
  symmetry: number | "random",
  rand: () => number,
): PretrainSample[] {
  const out: PretrainSample[] = [];
  games.forEach((g, i) => {
    const s = symmetry === "random" ? Math.floor(rand() * HEX_SYMMETRIES) : symmetry;
    for (let ply = 0; ply < g.moves.length; ply++) {
      if (!g.labels || g.labels[ply] >= 0) out.push({ game: i, ply, symmetry: s });
    }
  });
  return out;
}

/** Validation figures of a network, or of the uniform policy with value 0. */
export interface PolicyMetrics {
  positions: number;
  /** Mean cross-entropy of the move played. */
  policyLoss: number;
  top1: number;
  top5: number;
  /** Mean squared error of the value against the final result. */
  valueMse: number;
}

/** The uniform policy's figures on samples (1 / legal moves each, value 0). */
export function uniformMetrics(legalCounts: number[], values: ArrayLike<number>): PolicyMetrics {
  const n = legalCounts.length;
  let pl = 0, t1 = 0, t5 = 0, v = 0;
  for (let i = 0; i < n; i++) {
    const l = legalCounts[i];
    pl += Math.log(l);
    t1 += 1 / l;
    t5 += Math.min(5, l) / l;
    v += values[i] * values[i];
  }
  return { positions: n, policyLoss: pl / n, top1: t1 / n, top5: t5 / n, valueMse: v / n };
}

/** Accumulates a network's figures batch by batch. */
export class MetricsSum {
  private n = 0;
  private pl = 0;
  private t1 = 0;
  private t5 = 0;
  private v = 0;

  /** Adds a batch's outputs against its targets. */
  add(probs: Float32Array, value: Float32Array, batch: EncodedBatch): void {
    const M = HIVE_POLICY_SIZE;
    for (let i = 0; i < batch.size; i++) {
      const t = batch.targets[i], pt = probs[i * M + t];
      this.pl -= Math.log(Math.max(pt, 1e-12));
      // Rank: legal moves with a strictly higher probability than the target.
      let above = 0;
      for (let k = 0; k < M; k++) {
        if (batch.mask[i * M + k] > 0 && probs[i * M + k] > pt) above++;
      }
      if (above < 1) this.t1++;
      if (above < 5) this.t5++;
      this.v += (value[i] - batch.value[i]) ** 2;
      this.n++;
    }
  }

  /** The means so far. */
  result(): PolicyMetrics {
    const n = Math.max(1, this.n);
    return {
      positions: this.n,
      policyLoss: this.pl / n,
      top1: this.t1 / n,
      top5: this.t5 / n,
      valueMse: this.v / n,
    };
  }
}

/** Validation samples, encoded once in batches. */
export function validationBatches(
  games: PretrainGame[],
  maxPositions: number,
  batch: number,
  seed: number,
  cells = false,
): EncodedBatch[] {
  let s = samplesOf(games, 0, () => 0);
  if (s.length > maxPositions) {
    const rand = mulberry32(seed);
    for (let i = s.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [s[i], s[j]] = [s[j], s[i]];
    }
    s = s.slice(0, maxPositions);
  }
  const out: EncodedBatch[] = [];
  for (let i = 0; i < s.length; i += batch) {
    out.push(encodeSamples(games, s.slice(i, i + batch), false, cells));
  }
  return out;
}

/** A network's figures on encoded validation batches. */
export async function evaluateBatches(
  net: PolicyValueNet,
  batches: EncodedBatch[],
): Promise<PolicyMetrics> {
  const sum = new MetricsSum();
  for (const b of batches) {
    const out = await net.infer({
      size: b.size,
      planes: b.planes,
      mask: b.mask,
      ...(b.moveCells ? { moveCells: b.moveCells, moveCellsWidth: b.moveCellsWidth } : {}),
    });
    sum.add(out.probs, out.value, b);
  }
  return sum.result();
}

/** Settings of a pretraining run. */
export interface PretrainOptions {
  epochs: number;
  batch: number;
  /** Augment training positions with a random hex symmetry per game and epoch. */
  augment: boolean;
  seed: number;
  sgd: SgdConfig;
  /** Stop an epoch after this many positions (0: all). */
  positionsPerEpoch: number;
  /** Policy targets only where the side to move won the game (see encodeSamples). */
  winnerMovesOnly?: boolean;
  /** Stop after this epoch (the schedule still spans `epochs`); 0 or absent: run them all. */
  stopAfter?: number;
  /** Polled after each epoch's report (its checkpoint saved): true stops the run there (Ctrl-C). */
  shouldStop?: () => boolean;
  /** Each marked (markTactical) position appears this many times per epoch (1 or absent: once). */
  oversample?: number;
  /**
   * Epochs a resumed run has already trained: their samples and shuffles are drawn again without
   * training, so later epochs get the same ones as an uninterrupted run, and the schedule moves on.
   */
  resumeAfter?: number;
}

/** One epoch's report. */
export interface EpochReport {
  epoch: number;
  trainPositions: number;
  trainPolicyLoss: number;
  trainValueLoss: number;
  lr: number;
  val: PolicyMetrics;
  uniform: PolicyMetrics;
  /** A reference model's figures on the same validation positions (PretrainRun.compare). */
  reference?: PolicyMetrics;
  seconds: number;
}

/** Steps a run of `trainPositions` positions per epoch takes (the cosine schedule's length). */
export function pretrainSteps(
  trainPositions: number,
  epochs: number,
  batch: number,
  positionsPerEpoch: number,
): number {
  const per = positionsPerEpoch > 0 ? Math.min(positionsPerEpoch, trainPositions) : trainPositions;
  return Math.ceil(per / batch) * epochs;
}

/**
 * Trains `net` for `o.epochs` epochs on the training games, evaluating the validation batches after
 * each epoch; `onEpoch` receives each report (logging, checkpoints), `onStep` the running losses.
 */
export async function pretrain(
  net: PolicyValueNet,
  train: PretrainGame[],
  val: EncodedBatch[],
  o: PretrainOptions,
  onEpoch: (r: EpochReport) => Promise<void> | void,
  onStep: (text: string) => void = () => {},
): Promise<EpochReport[]> {
  const trainer = new Trainer(net, o.sgd);
  const cells = net.config.cells !== undefined;
  const rand = mulberry32(o.seed);
  const uniform = uniformMetrics(
    val.flatMap((b) => b.legalCounts),
    val.flatMap((b) => [...b.value]),
  );
  const reports: EpochReport[] = [];
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    const t0 = performance.now();
    const s = oversampleTactical(
      train,
      samplesOf(train, o.augment ? "random" : 0, rand),
      o.oversample ?? 1,
    );
    for (let i = s.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [s[i], s[j]] = [s[j], s[i]];
    }
    const take = o.positionsPerEpoch > 0 ? Math.min(o.positionsPerEpoch, s.length) : s.length;
    if (epoch <= (o.resumeAfter ?? 0)) {
      trainer.step += Math.ceil(take / o.batch);
      continue;
    }
    let pl = 0, vl = 0, seen = 0, lr = 0;
    // The epoch's batches as steps first + 0, 1, ...: the next one trains while one is reported.
    const first = trainer.step;
    const start = (step: number) => (step - first) * o.batch;
    await runTrainSteps(trainer, {
      until: first + Math.ceil(take / o.batch),
      batch: (step) =>
        encodeSamples(
          train,
          s.slice(start(step), Math.min(take, start(step) + o.batch)),
          o.winnerMovesOnly,
          cells,
        ),
      onStep: (step, st) => {
        const size = Math.min(take, start(step - 1) + o.batch) - start(step - 1);
        pl += st.policyLoss * size;
        vl += st.valueLoss * size;
        seen += size;
        lr = st.lr;
        onStep(
          `epoch ${epoch}/${o.epochs} ${seen}/${take} positions, policy ${
            (pl / seen).toFixed(3)
          } value ${(vl / seen).toFixed(3)} lr ${lr.toExponential(2)}`,
        );
      },
    });
    const r: EpochReport = {
      epoch,
      trainPositions: seen,
      trainPolicyLoss: pl / Math.max(1, seen),
      trainValueLoss: vl / Math.max(1, seen),
      lr,
      val: await evaluateBatches(net, val),
      uniform,
      seconds: (performance.now() - t0) / 1000,
    };
    reports.push(r);
    await onEpoch(r);
    if ((o.stopAfter && epoch >= o.stopAfter) || o.shouldStop?.()) break;
  }
  return reports;
}
