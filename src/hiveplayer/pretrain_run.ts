// The whole warm-start run behind `deno task hive-pretrain`: read stores, split by game, train,
// log every epoch (JSON lines) and save the checkpoint after each one.
import { writeFileAtomic } from "../cli/atomic.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import { encodeHiveModel, loadHiveModel } from "../nn/model_file.ts";
import type { NetWeights } from "../nn/params.ts";
import { type Checkpoint, loadCheckpoint, saveCheckpoint } from "../nn/checkpoint.ts";
import type { NetConfig } from "../nn/config.ts";
import { LOST_DEVICE_RETRIES, lostDeviceSummary } from "../gpu/device.ts";
import { createNet } from "../nn/create.ts";
import { countParams, initWeights } from "../nn/params.ts";
import { readGameStore, type StoredGame } from "../sgf/store.ts";
import { isLabelled } from "./dagger.ts";
import {
  type EpochReport,
  evaluateBatches,
  markTactical,
  mixEngineValues,
  prepareGames,
  pretrain,
  type PretrainGame,
  pretrainSteps,
  splitByGame,
  validationBatches,
} from "./pretrain.ts";

/** Everything `runPretrain` needs (the task's parsed flags). */
export interface PretrainRun {
  stores: string[];
  /** Validation games from these stores instead of a split of `stores` (ids in both: training). */
  valStores?: string[];
  out: string;
  log: string;
  net: NetConfig;
  netName: string;
  init: string | null;
  /** Compact model file (int8, gzip) written beside the checkpoint after every epoch, or null. */
  model: string | null;
  /** The model's name (its metadata; `info` shows it). */
  modelName: string;
  epochs: number;
  batch: number;
  positionsPerEpoch: number;
  valFraction: number;
  valPositions: number;
  maxGames: number;
  /** Skip games without a result (stopped at a ply cap: often long shuffles that teach little). */
  finishedOnly: boolean;
  lrMax: number;
  lrMin: number;
  augment: boolean;
  /** Imitate only the moves of the side that won (values still from every position). */
  winnerMovesOnly?: boolean;
  /** Stop after this epoch of the `epochs`-long schedule (0: none). */
  stopAfter?: number;
  /** Polled after each epoch's checkpoint: true stops the run there, to `resume` later (Ctrl-C). */
  shouldStop?: () => boolean;
  /**
   * Continue the run whose last epoch's checkpoint is at `out` (same games and settings): the
   * epochs it trained are skipped, later ones get the samples and schedule they would have had.
   */
  resume?: boolean;
  /**
   * Engine-value distillation for the training games (validation keeps the results):
   * lambda x tanh(alpha-beta score at `depth` / `scale`) + (1 - lambda) x result.
   */
  engineValues?: { lambda: number; depth: number; scale: number };
  /** Training positions whose move wins or threatens to (markTactical) appear this many times. */
  oversample?: number;
  /**
   * A model evaluated once on the same validation batches (e.g. the shipped network, to compare a
   * new head with it); its figures go into every epoch report as `reference`.
   */
  compare?: string | null;
  backend: string;
  seed: number;
  say: (text: string) => void;
  step: (text: string) => void;
  epoch: (r: EpochReport) => void;
}

/** Runs a pretraining and returns its epoch reports. */
export async function runPretrain(o: PretrainRun): Promise<EpochReport[]> {
  const read = async (paths: string[]): Promise<StoredGame[]> => {
    const stored: StoredGame[] = [];
    for (const path of paths) {
      try {
        for await (const g of readGameStore(path)) {
          if (o.maxGames > 0 && stored.length >= o.maxGames) break;
          // Labelled games keep their positions: their targets do not depend on the result.
          if (o.finishedOnly && g.result === "Unfinished" && !isLabelled(g)) continue;
          stored.push(g);
        }
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) {
          throw new KibitzError("not_found", `game store ${path}: no such file`);
        }
        throw e;
      }
    }
    return stored;
  };
  const { games, skipped } = prepareGames(await read(o.stores));
  if (games.length < 2) {
    throw new KibitzError("no_data", `need at least 2 replayable games, found ${games.length}`);
  }
  let train: PretrainGame[], val: PretrainGame[];
  if (o.valStores && o.valStores.length > 0) {
    // Validation games from their own stores (e.g. games no earlier stage trained on).
    train = games;
    val = prepareGames(await read(o.valStores)).games;
    const ids = new Set(train.map((g) => g.id));
    val = val.filter((g) => !ids.has(g.id));
    if (val.length === 0) throw new KibitzError("no_data", "no validation games outside training");
  } else ({ train, val } = splitByGame(games, o.valFraction, o.seed));
  // Positions with a training sample (a labelled game's unlabelled plies have none).
  const trainPositions = train.reduce(
    (a, g) => a + (g.labels ? g.labels.filter((l) => l >= 0).length : g.moves.length),
    0,
  );
  if (o.engineValues && o.engineValues.lambda > 0) {
    const ev = o.engineValues;
    o.say(
      `value targets: ${ev.lambda} x tanh(alpha-beta depth ${ev.depth} score / ${ev.scale}) + ` +
        `${1 - ev.lambda} x result, ${trainPositions} training positions`,
    );
    mixEngineValues(train, ev, (k) => o.step(`engine values: ${k}/${train.length} games`));
  }
  if ((o.oversample ?? 1) > 1) {
    const marked = markTactical(train);
    o.say(`oversampling ${marked} tactical positions (wins in one, threats) x ${o.oversample}`);
  }
  const cells = o.net.cells !== undefined;
  const valBatches = validationBatches(val, o.valPositions, o.batch, o.seed, cells);
  const steps = pretrainSteps(trainPositions, o.epochs, o.batch, o.positionsPerEpoch);
  // What the run trains on and how, kept in every epoch's checkpoint: a resumed run must match it.
  const run = JSON.stringify({
    stores: o.stores,
    valStores: o.valStores ?? null,
    net: o.net,
    init: o.init,
    games: games.length,
    trainPositions,
    epochs: o.epochs,
    batch: o.batch,
    positionsPerEpoch: o.positionsPerEpoch,
    valFraction: o.valFraction,
    valPositions: o.valPositions,
    maxGames: o.maxGames,
    finishedOnly: o.finishedOnly,
    winnerMovesOnly: o.winnerMovesOnly ?? false,
    engineValues: o.engineValues ?? null,
    oversample: o.oversample ?? 1,
    lrMax: o.lrMax,
    lrMin: o.lrMin,
    augment: o.augment,
    seed: o.seed,
  });
  const first = o.resume ? await resumable(o.out, o.net, run) : null;
  const last = o.stopAfter ? Math.min(o.stopAfter, o.epochs) : o.epochs;
  if (first && Number(first.meta.epoch) >= last) {
    o.say(`${o.out} is trained through epoch ${first.meta.epoch}: nothing to resume`);
    return [];
  }
  let reference: EpochReport["reference"];
  const dir = o.out.includes("/") ? o.out.slice(0, o.out.lastIndexOf("/")) : "";
  if (dir) await Deno.mkdir(dir, { recursive: true });
  const sgd = {
    momentum: 0.9,
    weightDecay: 1e-4,
    lrMax: o.lrMax,
    lrMin: o.lrMin,
    totalSteps: steps,
  };
  // The epochs this call trained (and saved), over every attempt.
  const reports: EpochReport[] = [];
  for (let lost = 0;; lost++) {
    // After a lost device: from the last epoch's checkpoint where this run saved one (or started
    // from one), else from the start.
    const resumed = lost === 0
      ? first
      : o.resume || reports.length > 0
      ? await resumable(o.out, o.net, run)
      : null;
    const resumeAfter = resumed ? Number(resumed.meta.epoch) : 0;
    const weights = resumed
      ? resumed.weights
      : o.init
      ? await initFrom(o.init, o.net, o.seed, o.say)
      : initWeights(o.net, o.seed);
    const net = await createNet(weights, o.backend);
    try {
      if (resumed?.velocity) net.setVelocity(resumed.velocity);
      if (resumed) o.say(`resuming ${o.out} after epoch ${resumeAfter} of ${o.epochs}`);
      if (lost === 0) {
        o.say(
          `${games.length} games (${skipped} skipped): ${train.length} training (${trainPositions} ` +
            `positions), ${val.length} validation (${valBatches.reduce((a, b) => a + b.size, 0)} ` +
            `positions used); net ${o.netName} ${o.net.blocks} x ${o.net.filters} (${
              countParams(o.net)
            } parameters, ${cells ? "cells" : "FC"} policy head, ${
              o.net.valuePool ? `pooled value head of ${o.net.valuePool}` : "board-wide value head"
            }) on ${net.backend}; ${steps} steps of ${o.batch}${
              o.augment ? ", 12 symmetries" : ""
            }`,
        );
        if (o.compare) {
          const ref = await createNet((await loadHiveModel(o.compare)).weights, o.backend);
          try {
            reference = await evaluateBatches(ref, valBatches);
          } finally {
            ref.dispose();
          }
          const f = (x: number) => x.toFixed(3);
          o.say(
            `reference ${o.compare} on the same validation positions: policy loss ${
              f(reference.policyLoss)
            } top-1 ${f(reference.top1)} top-5 ${f(reference.top5)} value MSE ${
              f(reference.valueMse)
            }`,
          );
        }
      }
      await pretrain(
        net,
        train,
        valBatches,
        {
          epochs: o.epochs,
          batch: o.batch,
          augment: o.augment,
          winnerMovesOnly: o.winnerMovesOnly ?? false,
          stopAfter: o.stopAfter ?? 0,
          shouldStop: o.shouldStop,
          oversample: o.oversample ?? 1,
          seed: o.seed,
          sgd,
          positionsPerEpoch: o.positionsPerEpoch,
          resumeAfter,
        },
        async (r) => {
          if (reference) r.reference = reference;
          const meta = {
            name: o.modelName,
            kind: "hive-pretrain",
            net: o.netName,
            epoch: r.epoch,
            games: games.length,
            stores: o.stores.join(","),
          };
          const w = await net.weights();
          await saveCheckpoint(o.out, w, { ...meta, run }, await net.velocity());
          if (o.model) await writeFileAtomic(o.model, encodeHiveModel(w, meta));
          await Deno.writeTextFile(o.log, JSON.stringify(r) + "\n", { append: true });
          reports.push(r);
          o.epoch(r);
        },
        o.step,
      );
      return reports;
    } catch (e) {
      if (!isKibitzError(e, "gpu_lost") || lost >= LOST_DEVICE_RETRIES) throw e;
      o.say(
        `${lostDeviceSummary(e)}; ${
          o.resume || reports.length > 0
            ? "resuming from the last epoch's checkpoint"
            : "starting over"
        } on a new device (${lost + 1} of at most ${LOST_DEVICE_RETRIES})`,
      );
    } finally {
      net.dispose();
    }
  }
}

/**
 * The checkpoint a resumed run continues from: the last epoch's at `out`, saved by a run with the
 * same games and settings (`run`), else a clear error naming what to do.
 */
async function resumable(out: string, net: NetConfig, run: string): Promise<Checkpoint> {
  let ck: Checkpoint;
  try {
    ck = await loadCheckpoint(out, net);
  } catch (e) {
    if (!isKibitzError(e, "not_found")) throw e;
    throw new KibitzError("bad_args", `--resume: no checkpoint at ${out} yet (start without it)`);
  }
  if (ck.meta.kind !== "hive-pretrain" || !(Number(ck.meta.epoch) >= 1)) {
    throw new KibitzError("bad_args", `--resume: ${out} is not a hive-pretrain epoch checkpoint`);
  }
  if (ck.meta.run !== run) {
    throw new KibitzError(
      "bad_args",
      `--resume: ${out} was trained on other games or settings; resume with the arguments ` +
        "(and stores) it started with, or start over without --resume",
    );
  }
  return ck;
}

/**
 * Weights to start from: a checkpoint or a compact model file (int8 rows, dequantized). A file of
 * the same shape is taken whole; otherwise every tensor whose name and shape match is copied into
 * fresh weights (e.g. the tower of an FC-head net into a cells-head net), and `say` hears which
 * tensors were copied and which stay fresh.
 */
export async function initFrom(
  path: string,
  net: NetConfig,
  seed: number,
  say: (text: string) => void = () => {},
): Promise<NetWeights> {
  const w = (await loadHiveModel(path)).weights;
  const same = (a: NetConfig, b: NetConfig) =>
    (Object.keys(b) as (keyof NetConfig)[]).every((k) =>
      JSON.stringify(a[k]) === JSON.stringify(b[k])
    ) && (Object.keys(a) as (keyof NetConfig)[]).every((k) => k in b || a[k] === undefined);
  if (same(w.config, net)) return w;
  const out = initWeights(net, seed);
  const copied: string[] = [], fresh: string[] = [];
  for (const s of out.specs) {
    const t = w.tensors.get(s.name);
    if (t && t.shape.length === s.shape.length && t.shape.every((d, i) => d === s.shape[i])) {
      out.tensors.get(s.name)!.data.set(t.data);
      copied.push(s.name);
    } else fresh.push(s.name);
  }
  // Without the tower the file is no start at all: the old shape check's error.
  if (!copied.some((n) => !n.startsWith("policy.") && !n.startsWith("value."))) {
    throw new KibitzError(
      "shape_mismatch",
      `${path} is a ${w.config.blocks} x ${w.config.filters} network; --net needs ${net.blocks} x ${net.filters}`,
    );
  }
  say(`init from ${path}: copied ${copied.length} tensors (${copied.join(", ")})`);
  say(`fresh: ${fresh.length} tensors (${fresh.join(", ") || "none"})`);
  return out;
}
