// `deno task bench hive-selfplay [net=default|cells-default|small|cpu|cells-cpu|tiny|cells-tiny]
// [seconds=N] [playouts=N] [concurrency=N] [batch=N] [inflight=N] [uhp=0|1] [profile=1]`: Hive
// self-play throughput with a network of the given size (random weights: speed does not depend on
// them). Measures network evaluations per second at fixed batch sizes (profile=1, GPU: and where
// each plan's GPU time goes, by kernel), the UHP engine's one-position CPU evaluation (reference
// ops vs the fast path; uhp=0 skips it), then runs self-play (seed 003's search, root noise,
// batched evaluator, `inflight` network calls at once on the GPU, 2 by default as in the AlphaZero
// loop) for a fixed wall time and reports moves/s, evaluations/s, mean batch and games/hour at the
// mean game length seen. Cells nets get move tables.
import {
  benchFlag,
  benchKeyValues,
  benchPositiveInt,
  type BenchReport,
  type BenchSuite,
  newReport,
} from "../bench/report.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, getGpu } from "../gpu/device.ts";
import {
  encodeHivePosition,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveLegalMask,
} from "../hive/encoding.ts";
import type { HiveGame } from "../hive/game.ts";
import { hiveMoveCellRows, packMoveCells } from "../hive/move_cells.ts";
import type { NetBatch } from "../nn/net.ts";
import { allocPlanes } from "../nn/planes.ts";
import { randomGame } from "../hive/playout.ts";
import { CachedEvaluator } from "../mcts/evaluator.ts";
import { defaultSearchConfig, Search } from "../mcts/search.ts";
import { createNet } from "../nn/create.ts";
import { profilePlan } from "../nn/bench_profile.ts";
import { GpuNet } from "../nn/net.ts";
import { initWeights } from "../nn/params.ts";
import type { NetConfig } from "../nn/config.ts";
import { ReferenceHiveNet, SyncHiveNet } from "../uhp/mcts_player.ts";
import { BatchEvaluator, paddedSizes } from "./evaluator.ts";
import { HIVE_NETS, HIVE_SELFPLAY_RULES, hiveSpec } from "./hive.ts";

/**
 * Kernels per batch size in the profile table: every kernel of a small plan (the cells-tiny plan
 * at batch 1 has 9, the cells head's among the fastest), the largest of a big one.
 */
const PROFILE_KERNELS = 12;

/**
 * One-position CPU evaluation as the UHP engine's MCTS does it (encode, legal moves' priors,
 * value): the reference ops (ReferenceHiveNet) against the fast path (SyncHiveNet), same weights.
 */
function uhpLatency(
  cfg: NetConfig,
  positions: HiveGame[],
  seconds: number,
  log: (s: string) => void,
) {
  const w = initWeights(cfg, 1);
  const rows: (string | number)[][] = [];
  let refMs = 0;
  for (const ev of [new ReferenceHiveNet(w), new SyncHiveNet(w)]) {
    const name = ev instanceof SyncHiveNet ? "fast (SyncHiveNet)" : "reference (ReferenceHiveNet)";
    const legal = positions.map((g) => g.validMoves());
    ev.evaluate(positions[0], legal[0]); // warm-up
    let n = 0;
    const t0 = performance.now();
    while (n < positions.length || performance.now() - t0 < Math.min(5000, seconds * 100)) {
      ev.evaluate(positions[n % positions.length], legal[n % positions.length]);
      n++;
      if (n >= 4 * positions.length) break;
    }
    const ms = (performance.now() - t0) / n;
    if (!refMs) refMs = ms;
    log(`UHP evaluation, ${name}: ${ms.toFixed(2)} ms`);
    rows.push([name, n, ms, 1000 / ms, refMs / ms]);
  }
  return {
    title: `One-position CPU evaluation as UHP's MCTS runs it (${cfg.blocks} x ${cfg.filters})`,
    columns: ["evaluator", "evaluations", "ms per evaluation", "evaluations/s", "speed-up"],
    rows,
  };
}

/** The `hive-selfplay` benchmark suite. */
export const suite: BenchSuite = {
  description: "Hive self-play throughput: network evaluations/s and self-play games/hour",
  async run(opts): Promise<BenchReport> {
    const a = benchKeyValues("hive-selfplay", opts.args);
    const netName = a.get("net") ?? "default";
    const cfg = HIVE_NETS[netName];
    if (!cfg) throw new KibitzError("bad_args", `net must be one of ${Object.keys(HIVE_NETS)}`);
    const seconds = Number(a.get("seconds") ?? 60);
    const playouts = Number(a.get("playouts") ?? 800);
    const concurrency = benchPositiveInt("hive-selfplay", a, "concurrency", 256);
    const maxBatch = benchPositiveInt("hive-selfplay", a, "batch", 256);
    // Network calls in flight during self-play: as the AlphaZero loop runs them (2 on the GPU).
    const inFlight = benchPositiveInt(
      "hive-selfplay",
      a,
      "inflight",
      opts.backend === "cpu" ? 1 : 2,
    );
    const net = await createNet(initWeights(cfg, 1), opts.backend);
    const gpu = net.backend === "gpu" ? await getGpu() : null;
    const report = newReport("hive-selfplay", gpu ? describeAdapter(gpu.report) : null);

    // 1. Raw network speed on encoded mid-game positions (`profile=1`: and each plan's GPU time by
    // kernel, GPU only).
    const profile = benchFlag(a, "profile");
    const profileRows: (string | number | null)[][] = [];
    let profileTimer = "";
    const rows: (string | number)[][] = [];
    const positions: HiveGame[] = [];
    for (let s = 1; positions.length < 64; s++) {
      const g = randomGame("Base+MLP", 20 + (s % 40), s);
      if (!g.isOver()) positions.push(g);
    }
    for (const size of [1, 16, 64, 256].filter((b) => b <= maxBatch)) {
      // Encoded as the evaluator encodes them: f16 where the net takes halves (halfPlanes).
      const planes = allocPlanes(size * HIVE_PLANE_SIZE, net.halfPlanes);
      const mask = new Float32Array(size * HIVE_POLICY_SIZE);
      const tables: Float32Array[] = [];
      for (let i = 0; i < size; i++) {
        const g = positions[i % positions.length];
        encodeHivePosition(g, planes, i * HIVE_PLANE_SIZE);
        hiveLegalMask(g, mask, i * HIVE_POLICY_SIZE);
        if (cfg.cells) tables.push(hiveMoveCellRows(g, g.validMoves()));
      }
      // A cells net's batch carries its move table (built once, outside the timing).
      const batch: NetBatch = { size, planes, mask, ...(cfg.cells ? packMoveCells(tables) : {}) };
      await net.infer(batch); // warm-up (plans, kernels)
      let n = 0;
      const t0 = performance.now();
      while (n < 3 || performance.now() - t0 < Math.min(5000, seconds * 100)) {
        await net.infer(batch);
        n++;
      }
      const s = (performance.now() - t0) / 1000;
      opts.log(`batch ${size}: ${(n * size / s).toFixed(0)} positions/s`);
      rows.push([size, n, s, (n * size) / s, (s / n) * 1000]);
      if (profile && gpu && net instanceof GpuNet) {
        // The plan this batch ran (its move-table width included), dispatch by dispatch.
        const p = await profilePlan(gpu, await net.planFor(size, false));
        profileRows.push([size, "whole plan, warm", "-", p.planMs, p.backToBackMs]);
        for (const r of p.rows.toSorted((a, b) => b.ms - a.ms).slice(0, PROFILE_KERNELS)) {
          profileRows.push([size, `${r.phase}: ${r.kernel}`, r.dispatches, r.ms, null]);
        }
        profileTimer = p.timer;
      }
    }
    report.tables.push({
      title: `Network ${netName} (${cfg.blocks} x ${cfg.filters}${
        cfg.cells ? ", cells head" : ""
      }) inference on ${net.backend}`,
      columns: ["batch", "calls", "seconds", "positions/s", "ms per call"],
      rows,
    });
    if (profileRows.length) {
      report.tables.push({
        title: `Where each batch size's plan spends its GPU time (${profileTimer}; the ` +
          `${PROFILE_KERNELS} largest kernels; whole plan: one replay alone / back to back)`,
        columns: ["batch", "kernel", "dispatches", "ms", "ms back to back"],
        rows: profileRows,
      });
    }
    if (a.get("uhp") !== "0") report.tables.push(uhpLatency(cfg, positions, seconds, opts.log));

    // 2. Self-play for a fixed wall time: `concurrency` games, each with its own search.
    const spec = hiveSpec(HIVE_SELFPLAY_RULES, true);
    const batcher = new BatchEvaluator(net, spec, maxBatch, net.backend === "gpu" ? inFlight : 1);
    // Every padded batch size's plan (GPU: tuned and compiled) before the clock starts.
    const prepareSeconds = await batcher.prepare();
    if (prepareSeconds > 0) {
      opts.log(`self-play batch sizes readied in ${prepareSeconds.toFixed(2)} s`);
    }
    const evaluator = new CachedEvaluator(batcher, 200_000);
    const search = defaultSearchConfig({ noise: true });
    const deadline = performance.now() + seconds * 1000;
    let moves = 0, finished = 0, finishedPlies = 0, seed = 1, totalPlayouts = 0;
    const t0 = performance.now();
    // Playouts go in chunks so that every search stops close to the deadline, mid-move if need be.
    const chunk = Math.max(1, Math.min(playouts, 32));
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const s = new Search(spec.create(), evaluator, search, seed++);
        let counted = 0;
        while (performance.now() < deadline) {
          const g = s.position();
          if (g.result() !== null) {
            finished++;
            finishedPlies += g.ply();
            break;
          }
          let done = 0;
          while (done < playouts && performance.now() < deadline) {
            await s.run(Math.min(chunk, playouts - done));
            done += Math.min(chunk, playouts - done);
          }
          totalPlayouts += s.counters.playouts - counted;
          counted = s.counters.playouts;
          if (done < playouts) break;
          const m = s.pickMove(g.ply() < 15 ? 1 : 0.1);
          s.advance(m);
          moves++;
        }
      }
    }));
    const secs = (performance.now() - t0) / 1000;
    batcher.close();
    net.dispose();
    const meanPlies = finished > 0 ? finishedPlies / finished : HIVE_SELFPLAY_RULES.maxPlies;
    const movesPerSec = moves / secs;
    report.tables.push({
      title:
        `Self-play, ${playouts} playouts per move, ${concurrency} games in flight, ${seconds} s, ${
          net.backend === "gpu" ? inFlight : 1
        } network call(s) in flight`,
      columns: [
        "moves",
        "moves/s",
        "playouts/s",
        "evaluations/s",
        "mean batch",
        "network time / wall",
        "games finished",
        "mean plies",
        "games/hour (est.)",
      ],
      rows: [[
        moves,
        movesPerSec,
        totalPlayouts / secs,
        batcher.stats.positions / secs,
        batcher.averageBatch(),
        batcher.stats.netMs / 1000 / secs,
        finished,
        meanPlies,
        (3600 * totalPlayouts / secs) / (playouts * meanPlies),
      ]],
    });
    report.notes.push(
      "games/hour = 3600 x playouts/s / (playouts per move x mean plies per game: the mean of the games finished in the " +
        `run, or the ${HIVE_SELFPLAY_RULES.maxPlies}-ply cap when none finished). Random weights.`,
    );
    if (prepareSeconds > 0) {
      report.notes.push(
        `Before the self-play clock started, the network readied its padded batch sizes (${
          paddedSizes(maxBatch).join(", ")
        }: plans recorded, kernels tuned and compiled on a hardware adapter) in ${
          prepareSeconds.toFixed(2)
        } s.`,
      );
    }
    return report;
  },
};
