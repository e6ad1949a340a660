import { intOption, numberOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { Progress } from "../src/cli/progress.ts";
import { HIVE_NETS } from "../src/alphazero/hive.ts";
import { releaseGpu } from "../src/gpu/mod.ts";
import { runPretrain } from "../src/hiveplayer/pretrain_run.ts";
import { HIVE_CELLS } from "../src/hive/move_cells.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task hive-pretrain --store FILE[,FILE...] --out CHECKPOINT [--net cpu|small|default|tiny] [--head fc|cells] [--epochs N] [--resume]",
    "Supervised warm start of the Hive network (seed 003, section 6): positions of stored games\n" +
      "(JSON lines from `deno task ingest` or `deno task hive-games`) -> 24 planes; policy target =\n" +
      "the move played, value target = the final result for the side to move. Validation games are\n" +
      "split off by game; training positions get a random one of the 12 hex symmetries per game and\n" +
      "epoch. Prints per epoch the validation policy loss, top-1/top-5 accuracy and value MSE beside\n" +
      "the uniform policy's, appends them to --log, and saves the checkpoint after every epoch.",
    {
      store: {
        type: "string",
        help: "game stores, comma-separated (.gz stores are read compressed)",
      },
      "val-store": {
        type: "string",
        help: "validation games from these stores (comma-separated) instead of a split of --store",
      },
      out: { type: "string", help: "checkpoint to write (after every epoch)" },
      log: { type: "string", help: "JSON-lines log of the epochs (default: OUT.log.jsonl)" },
      net: {
        type: "string",
        default: "cpu",
        help: `network size: ${Object.keys(HIVE_NETS).join(", ")}`,
      },
      head: {
        type: "string",
        help: "policy head: fc (piece-indexed, every shipped model) or cells (scores each move " +
          "from per-cell planes at its destination and origin); default: the --net preset's",
      },
      "value-head": {
        type: "string",
        help: "value head: board (a fully connected layer over the whole value plane, every " +
          "shipped model) or pool[:V] (V channels, default 32, each averaged over the board); " +
          "default: the --net preset's",
      },
      model: { type: "string", help: "also write a compact model file (int8 + gzip, .kbhz)" },
      name: { type: "string", default: "kibitz-hive", help: "model name shown by UHP info" },
      init: {
        type: "string",
        help: "checkpoint or model to start from (default: fresh weights); of another shape, " +
          "its tensors whose name and shape match (e.g. the tower)",
      },
      compare: {
        type: "string",
        help: "also evaluate this model on the same validation positions (printed per epoch)",
      },
      epochs: { type: "string", default: "3", help: "passes over the training games" },
      resume: {
        type: "boolean",
        help: "continue the run whose checkpoint is at --out (the same arguments and stores): " +
          "the epochs it trained are skipped, the rest train as they would have",
      },
      "stop-after": {
        type: "string",
        default: "0",
        help: "stop after this epoch, the learning-rate schedule still spanning --epochs (0: none)",
      },
      batch: { type: "string", default: "32", help: "positions per SGD step" },
      "positions-per-epoch": { type: "string", default: "0", help: "cap per epoch (0: all)" },
      "val-fraction": { type: "string", default: "0.1", help: "share of games for validation" },
      "val-positions": { type: "string", default: "400", help: "validation positions at most" },
      "max-games": { type: "string", default: "0", help: "read at most this many games (0: all)" },
      "lr-max": { type: "string", default: "0.02", help: "cosine schedule start" },
      "lr-min": { type: "string", default: "0.0005", help: "cosine schedule end" },
      "finished-only": { type: "boolean", help: "skip games without a result" },
      "winner-moves": {
        type: "boolean",
        help: "policy targets only from the side that won (values from every position)",
      },
      "engine-values": {
        type: "string",
        default: "0",
        help: "distil the alpha-beta score into the value targets: LAMBDA x tanh(score / " +
          "--engine-scale) + (1 - LAMBDA) x result for training positions (0: results only)",
      },
      "engine-depth": { type: "string", default: "1", help: "alpha-beta depth of those scores" },
      "engine-scale": { type: "string", default: "200", help: "score scale of the tanh squash" },
      oversample: {
        type: "string",
        default: "1",
        help:
          "positions whose move wins at once or brings the enemy queen to 5 neighbours appear " +
          "K times per epoch",
      },
      "no-augment": { type: "boolean", help: "train on the boards as played (no symmetries)" },
      backend: {
        type: "string",
        default: "cpu-fast",
        help: "cpu-fast (fast CPU ops), cpu (reference ops), gpu or auto",
      },
      seed: { type: "string", default: "1", help: "seed of weights, split and order" },
    },
  );
  if (!args) return;
  const v = args.values;
  if (v.store === undefined) {
    throw new KibitzError("bad_args", "--store: a game store file is required");
  }
  if (v.out === undefined) {
    throw new KibitzError("bad_args", "--out: a checkpoint file is required");
  }
  const netName = String(v.net);
  if (!HIVE_NETS[netName]) {
    throw new KibitzError("bad_args", `--net must be one of ${Object.keys(HIVE_NETS).join(", ")}`);
  }
  const net = { ...HIVE_NETS[netName] };
  if (v.head !== undefined) {
    const head = String(v.head);
    if (head !== "fc" && head !== "cells") {
      throw new KibitzError("bad_args", `--head must be fc or cells: got ${head}`);
    }
    if (head === "cells") net.cells = { ...HIVE_CELLS };
    else delete net.cells;
  }
  if (v["value-head"] !== undefined) {
    const vh = String(v["value-head"]);
    const m = /^pool(?::(\d+))?$/.exec(vh);
    if (vh === "board") delete net.valuePool;
    else if (m && (m[1] === undefined || Number(m[1]) > 0)) net.valuePool = Number(m[1] ?? 32);
    else {
      throw new KibitzError(
        "bad_args",
        `--value-head must be board, pool or pool:V (V > 0): got ${vh}`,
      );
    }
  }
  const out = String(v.out);
  const lambda = numberOption(v, "engine-values", 0);
  if (lambda < 0 || lambda > 1) {
    throw new KibitzError("bad_args", `--engine-values must be in [0, 1]: got ${lambda}`);
  }
  const scale = numberOption(v, "engine-scale", 200);
  if (!(scale > 0)) throw new KibitzError("bad_args", `--engine-scale must be positive`);
  const progress = new Progress("hive-pretrain");
  const fmt = (x: number) => x.toFixed(3);
  const stop = stopOnSignal(
    "hive-pretrain: stopping after this epoch's checkpoint; --resume continues",
  );
  await runPretrain({
    shouldStop: () => stop.stopped,
    stores: String(v.store).split(",").filter((s) => s !== ""),
    valStores: v["val-store"] === undefined
      ? undefined
      : String(v["val-store"]).split(",").filter((s) => s !== ""),
    out,
    log: v.log === undefined ? `${out}.log.jsonl` : String(v.log),
    net,
    netName,
    init: v.init === undefined ? null : String(v.init),
    model: v.model === undefined ? null : String(v.model),
    compare: v.compare === undefined ? null : String(v.compare),
    modelName: String(v.name),
    epochs: intOption(v, "epochs", 3, 1),
    stopAfter: intOption(v, "stop-after", 0, 0),
    resume: v.resume === true,
    batch: intOption(v, "batch", 32, 1, 4096),
    positionsPerEpoch: intOption(v, "positions-per-epoch", 0, 0),
    valFraction: numberOption(v, "val-fraction", 0.1),
    valPositions: intOption(v, "val-positions", 400, 1),
    maxGames: intOption(v, "max-games", 0, 0),
    finishedOnly: v["finished-only"] === true,
    winnerMovesOnly: v["winner-moves"] === true,
    engineValues: {
      lambda,
      depth: intOption(v, "engine-depth", 1, 1, 4),
      scale,
    },
    oversample: intOption(v, "oversample", 1, 1, 100),
    lrMax: numberOption(v, "lr-max", 0.02),
    lrMin: numberOption(v, "lr-min", 0.0005),
    augment: v["no-augment"] !== true,
    backend: String(v.backend),
    seed: intOption(v, "seed", 1, 0),
    say: (t) => console.log(t),
    step: (t) => progress.update(t),
    epoch: (r) =>
      progress.done(
        `epoch ${r.epoch}: train policy ${fmt(r.trainPolicyLoss)} value ${
          fmt(r.trainValueLoss)
        } | val policy loss ${fmt(r.val.policyLoss)} (uniform ${fmt(r.uniform.policyLoss)}) ` +
          `top-1 ${fmt(r.val.top1)} (${fmt(r.uniform.top1)}) top-5 ${fmt(r.val.top5)} (${
            fmt(r.uniform.top5)
          }) value MSE ${fmt(r.val.valueMse)} (${fmt(r.uniform.valueMse)})${
            r.reference
              ? ` | reference policy loss ${fmt(r.reference.policyLoss)} top-1 ${
                fmt(r.reference.top1)
              } top-5 ${fmt(r.reference.top5)}`
              : ""
          } in ${r.seconds.toFixed(0)} s`,
      ),
  }).finally(stop.release);
  if (stop.stopped) {
    console.log(`stopped: deno task hive-pretrain with the same arguments and --resume continues`);
  }
  await releaseGpu();
});
