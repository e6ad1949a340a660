// `deno task bench mcts`: playouts per second of the PUCT search with the batched network
// evaluator, for one search (leaves gathered under virtual loss) and for many concurrent self-play
// games sharing batches; CPU with a small network, GPU with the default 19 x 256 network (shaped
// like Hive's: 24 planes of 26 x 26, 5,489 moves). Reports the average batch and the share of
// time in the network, the tree and the game logic.
import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { describeAdapter, getGpu, resolveBackend } from "../gpu/device.ts";
import type { Game, GameSpec, Outcome } from "../mcts/game.ts";
import { defaultSearchConfig, Search } from "../mcts/search.ts";
import { HIVE_MOVES, NET_PRESETS, type NetConfig } from "../nn/config.ts";
import { createNet } from "../nn/create.ts";
import { initWeights } from "../nn/params.ts";
import { BatchEvaluator } from "./evaluator.ts";
import { connectFourSpec } from "./games/connect4.ts";
import { netFor } from "./presets.ts";

/** Milliseconds spent inside game calls, shared by every wrapped position. */
interface Clock {
  ms: number;
}

/**
 * A game wrapped to time its calls and, optionally, to present a larger network shape (its planes
 * embedded in a bigger board, its moves spread over a bigger policy), so a small game can drive a
 * Hive-sized network.
 */
class TimedGame<M> implements Game<M> {
  constructor(
    readonly g: Game<M>,
    readonly clock: Clock,
    readonly outer: GameSpec<M> | null,
    readonly inner: GameSpec<M>,
  ) {}
  private t<T>(f: () => T): T {
    const t0 = performance.now();
    const r = f();
    this.clock.ms += performance.now() - t0;
    return r;
  }
  toMove(): 0 | 1 {
    return this.g.toMove();
  }
  ply(): number {
    return this.g.ply();
  }
  legalMoves(): M[] {
    return this.t(() => this.g.legalMoves());
  }
  play(m: M): void {
    this.t(() => this.g.play(m));
  }
  undo(): void {
    this.t(() => this.g.undo());
  }
  result(): Outcome | null {
    return this.t(() => this.g.result());
  }
  hash(): number {
    return this.t(() => this.g.hash());
  }
  encode(out: Float32Array | Float16Array, offset: number): void {
    this.t(() => {
      const o = this.outer, i = this.inner;
      if (!o) return this.g.encode(out, offset);
      const tmp = new Float32Array(i.planes * i.height * i.width);
      this.g.encode(tmp, 0);
      for (let p = 0; p < i.planes; p++) {
        for (let y = 0; y < i.height; y++) {
          for (let x = 0; x < i.width; x++) {
            out[offset + (p * o.height + y + 10) * o.width + x + 9] =
              tmp[(p * i.height + y) * i.width + x];
          }
        }
      }
    });
  }
  moveIndex(m: M): number {
    const k = this.g.moveIndex(m);
    return this.outer ? k * 701 % this.outer.moves : k;
  }
  moveText(m: M): string {
    return this.g.moveText(m);
  }
  clone(): Game<M> {
    return new TimedGame(this.g.clone(), this.clock, this.outer, this.inner);
  }
}

function timedSpec(inner: GameSpec<number>, clock: Clock, hiveShaped: boolean): GameSpec<number> {
  const outer: GameSpec<number> | null = hiveShaped
    ? {
      ...inner,
      name: `${inner.name}-hive-shaped`,
      planes: 24,
      height: 26,
      width: 26,
      moves: HIVE_MOVES,
    }
    : null;
  const spec = outer ?? inner;
  return { ...spec, create: () => new TimedGame(inner.create(), clock, outer, inner) };
}

interface Row {
  mode: string;
  net: string;
  backend: string;
  playouts: number;
  seconds: number;
  perSecond: number;
  /** Leaves sent to the network per second (playouts minus exact terminal backups). */
  evalsPerSecond: number;
  /** Share of playouts that ended at a finished game (valued exactly, no network call). */
  terminalShare: number;
  averageBatch: number;
  netShare: number;
  treeShare: number;
  gameShare: number;
}

const nets = new Map<string, Awaited<ReturnType<typeof createNet>>>();

async function measure(
  backend: "cpu" | "gpu",
  netName: string,
  cfg: NetConfig,
  spec: GameSpec<number>,
  clock: Clock,
  games: number,
  playouts: number,
  moves: number,
  leaves: number,
  inFlight = 1,
): Promise<Row> {
  // One network per (backend, shape), kept across rows: the GPU records its plans once.
  const key = `${backend}:${JSON.stringify(cfg)}`;
  let net = nets.get(key);
  const fresh = !net;
  if (!net) nets.set(key, net = await createNet(initWeights(cfg, 1), backend));
  const ev = new BatchEvaluator(net, spec, 256, inFlight);
  // Warm up: the GPU records one plan per padded batch size.
  if (backend === "gpu" && fresh) {
    for (let n = 8; n <= 256; n *= 2) {
      const g = spec.create();
      await Promise.all(Array.from({ length: n }, () => ev.evaluate(g, g.legalMoves())));
    }
  }
  const before = { ...ev.stats };
  clock.ms = 0;
  const t0 = performance.now();
  let total = 0, evals = 0;
  await Promise.all(Array.from({ length: games }, async (_, i) => {
    const s = new Search(
      spec.create(),
      ev,
      defaultSearchConfig({ noise: true, leavesPerRound: leaves }),
      i + 1,
    );
    for (let m = 0; m < moves && s.position().result() === null; m++) {
      await s.run(playouts);
      const mv = s.pickMove(1);
      s.advance(mv);
    }
    total += s.counters.playouts;
    evals += s.counters.evaluations;
  }));
  const sec = (performance.now() - t0) / 1000;
  ev.close();
  const batches = ev.stats.batches - before.batches,
    positions = ev.stats.positions - before.positions;
  const netS = (ev.stats.netMs - before.netMs) / 1000, gameS = clock.ms / 1000;
  return {
    mode:
      (games === 1
        ? `one search, ${leaves} leaves/round`
        : `${games} games, ${leaves} leaves/round`) +
      (inFlight > 1 ? `, ${inFlight} batches in flight` : ""),
    net: netName,
    backend,
    playouts: total,
    seconds: sec,
    perSecond: total / sec,
    evalsPerSecond: evals / sec,
    terminalShare: total > 0 ? 1 - evals / total : 0,
    averageBatch: batches ? positions / batches : 0,
    netShare: Math.min(1, netS / sec),
    treeShare: Math.max(0, 1 - netS / sec - gameS / sec),
    gameShare: gameS / sec,
  };
}

export const suite: BenchSuite = {
  description:
    "MCTS playouts per second with the batched network evaluator (CPU small, GPU 19x256)",
  async run(opts): Promise<BenchReport> {
    const which = await resolveBackend(opts.backend);
    const ctx = which === "gpu" ? await getGpu() : null;
    const report = newReport("mcts", ctx ? describeAdapter(ctx.report) : null);
    const rows: Row[] = [];
    // Each row is printed as it completes, so a run cut short still reports what it measured.
    const add = (r: Row) => {
      rows.push(r);
      opts.log(
        `  ${r.backend} ${r.net} ${r.mode}: ${r.perSecond.toFixed(1)} playouts/s (${
          r.evalsPerSecond.toFixed(1)
        } evaluations/s), average batch ${r.averageBatch.toFixed(1)}, network ${
          (100 * r.netShare).toFixed(0)
        } %`,
      );
    };
    const clock: Clock = { ms: 0 };
    const c4 = connectFourSpec(7, 6, 4);
    // CPU: Connect Four 7 x 6 with a small network (the TypeScript reference is slow).
    const cpuSpec = timedSpec(c4, clock, false);
    const cpuNet = netFor(cpuSpec, {
      ...NET_PRESETS.tiny,
      blocks: 2,
      filters: 16,
      valueHidden: 32,
    });
    const f = opts.full ? 4 : 1;
    opts.log("cpu: one search");
    add(await measure("cpu", "2 x 16", cpuNet, cpuSpec, clock, 1, 200 * f, 1, 8));
    opts.log("cpu: concurrent games");
    add(await measure("cpu", "2 x 16", cpuNet, cpuSpec, clock, 32, 32 * f, 2, 2));
    // `smoke` after the suite name runs the GPU rows on a software adapter with a tiny network on
    // Connect Four's own shapes (a check that the path works, not a measurement).
    const smoke = opts.args.includes("smoke");
    if (ctx && (!ctx.report.isFallback || smoke)) {
      // GPU: the default 19 x 256 network on Hive's input and policy shapes (Connect Four moves).
      const gpuSpec = timedSpec(c4, clock, !smoke);
      const big = netFor(
        gpuSpec,
        smoke ? { ...NET_PRESETS.tiny, filters: 4 } : NET_PRESETS.default,
      );
      const name = smoke ? "tiny (smoke)" : "19 x 256";
      const k = smoke ? 0.02 : f;
      opts.log("gpu: one search");
      add(await measure("gpu", name, big, gpuSpec, clock, 1, Math.ceil(800 * k), 1, 16));
      opts.log("gpu: concurrent games");
      add(
        await measure("gpu", name, big, gpuSpec, clock, smoke ? 16 : 128, Math.ceil(100 * k), 2, 2),
      );
      opts.log("gpu: concurrent games, 2 batches in flight");
      add(
        await measure(
          "gpu",
          name,
          big,
          gpuSpec,
          clock,
          smoke ? 16 : 128,
          Math.ceil(100 * k),
          2,
          2,
          2,
        ),
      );
    } else {
      report.notes.push(
        ctx
          ? "GPU rows skipped: the adapter is a software fallback (llvmpipe); timings would mean nothing."
          : "GPU rows skipped: no GPU adapter (run with --backend gpu on a machine with one).",
      );
    }
    report.tables.push({
      title: "Playouts per second",
      columns: [
        "mode",
        "network",
        "backend",
        "playouts",
        "seconds",
        "playouts/s",
        "evaluations/s",
        "terminal %",
        "avg batch",
        "network %",
        "tree %",
        "game %",
      ],
      rows: rows.map((r) => [
        r.mode,
        r.net,
        r.backend,
        r.playouts,
        r.seconds,
        r.perSecond,
        r.evalsPerSecond,
        r.terminalShare * 100,
        r.averageBatch,
        r.netShare * 100,
        r.treeShare * 100,
        r.gameShare * 100,
      ]),
    });
    report.notes.push(
      "Game: Connect Four 7x6 (GPU rows: its planes embedded in Hive's 24 x 26 x 26 input, its moves " +
        "spread over Hive's 5,489-move policy, so the network costs what Hive's would). No evaluation " +
        "cache: every leaf reaches the network. Game % times play/undo/legal moves/result/encode " +
        "through a wrapper (its timer overhead included); tree % is the rest of the search. With 2 batches in flight network % sums overlapping calls (capped at 100). " +
        "Terminal % is the share of playouts that reached a finished game (an exact value, no network " +
        "call): with random weights a saturated value head can steer one search into a few deep lines, " +
        "so evaluations/s is the network-bound figure.",
    );
    for (const n of nets.values()) n.dispose();
    nets.clear();
    return report;
  },
};
