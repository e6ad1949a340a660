// `deno task bench hive-mcts [positions=N] [playouts=N] [rounds=N] [model=FILE]`: playouts per
// second of the UHP MCTS player with the shipped network on a fixed list of positions, for the
// search settings side by side (sequential with the dense stem as the baseline, the sparse stem
// computed cell by cell and with its shortcut, the tower at every cell or only where it can
// differ, batched leaf evaluation), interleaved position by position so that the load of a shared
// machine falls on all of them alike; then how many root visits tree reuse carries over between
// the moves of a game.
import {
  benchKeyValues,
  benchPositiveInt,
  type BenchReport,
  type BenchSuite,
  newReport,
} from "../bench/report.ts";
import { HiveGame } from "../hive/game.ts";
import { mulberry32 } from "../mcts/random.ts";
import { loadHiveModel } from "../nn/model_file.ts";
import { searchBestMove } from "../uhp/alphabeta.ts";
import {
  DEFAULT_HIVE_MODEL,
  MCTS_PLAYER_DEFAULTS,
  MctsPlayer,
  SyncHiveNet,
} from "../uhp/mcts_player.ts";

/**
 * `count` positions (plies 5, 15, 25, 35 of seeded games between alpha-beta depth 1 and uniformly
 * random moves): the same list on every run.
 */
export function throughputPositions(count: number): HiveGame[] {
  const out: HiveGame[] = [];
  const rand = mulberry32(5);
  for (let game = 0; out.length < count && game < 100; game++) {
    const g = new HiveGame("Base+MLP");
    while (!g.isOver() && g.turn < 40 && out.length < count) {
      const legal = g.validMoves();
      const m = g.turn % 2 === 0 && g.turn > 2
        ? searchBestMove(g, { depth: 1 }).move
        : legal[Math.floor(rand() * legal.length)];
      g.play(m);
      if (g.turn % 10 === 5 && !g.isOver()) out.push(g.clone());
    }
  }
  return out;
}

/** The `hive-mcts` benchmark suite. */
export const suite: BenchSuite = {
  description: "Hive MCTS throughput: playouts per second by search setting, and tree reuse",
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("hive-mcts", opts.args);
    const num = (k: string, d: number) => benchPositiveInt("hive-mcts", kv, k, d);
    const count = num("positions", 12), playouts = num("playouts", 200);
    const rounds = num("rounds", opts.full ? 5 : 2);
    const modelPath = kv.get("model") ?? DEFAULT_HIVE_MODEL;
    const weights = (await loadHiveModel(modelPath)).weights;
    const positions = throughputPositions(count);
    const dense = new SyncHiveNet(weights, false), sparse = new SyncHiveNet(weights);
    const plain = new SyncHiveNet(weights, true, true);
    const denseTower = new SyncHiveNet(weights, true, false, true);
    const settings = [
      { name: "batch 1, dense stem (before)", net: dense, batch: 1 },
      { name: "batch 1, plain sparse stem", net: plain, batch: 1 },
      { name: "batch 1, sparse stem, dense tower", net: denseTower, batch: 1 },
      { name: "batch 1, sparse stem", net: sparse, batch: 1 },
      { name: "batch 4, sparse stem", net: sparse, batch: 4 },
      { name: "batch 8, sparse stem", net: sparse, batch: 8 },
      { name: "batch 16, sparse stem", net: sparse, batch: 16 },
    ];
    const ms = settings.map(() => 0), done = settings.map(() => 0), evals = settings.map(() => 0);
    // Each position is searched by every setting in turn (a fresh player each time), so that
    // the load of a shared machine, which changes by the second, falls on all settings alike.
    for (let r = 0; r < rounds; r++) {
      for (const g of positions) {
        for (const [i, s] of settings.entries()) {
          const cfg = { ...MCTS_PLAYER_DEFAULTS, batch: s.batch, reuseTree: false };
          const p = new MctsPlayer(s.net, cfg);
          const t0 = performance.now(), e0 = s.net.evaluations;
          done[i] += p.search(g, playouts).playouts;
          ms[i] += performance.now() - t0;
          evals[i] += s.net.evaluations - e0;
        }
      }
      opts.log(
        `round ${r + 1}/${rounds}: ` +
          `${settings.map((_, i) => (done[i] / ms[i] * 1000).toFixed(0)).join(", ")} playouts/s`,
      );
    }
    const report = newReport("hive-mcts", null);
    const base = done[0] / ms[0];
    report.tables.push({
      title:
        `Playouts per second, ${positions.length} positions x ${playouts} playouts, ${rounds} rounds, interleaved by position`,
      columns: [
        "setting",
        "playouts",
        "network evaluations",
        "ms",
        "playouts/s",
        "evaluations/s",
        "vs before",
      ],
      rows: settings.map((s, i) => [
        s.name,
        done[i],
        evals[i],
        Math.round(ms[i]),
        Math.round(done[i] / ms[i] * 1000),
        Math.round(evals[i] / ms[i] * 1000),
        `${(done[i] / ms[i] / base).toFixed(2)}x`,
      ]),
    });
    // Tree reuse and the evaluation cache: MCTS against itself for a few moves of two games.
    const rows: (string | number)[][] = [];
    for (const cacheSize of [0, MCTS_PLAYER_DEFAULTS.cacheSize]) {
      const net = new SyncHiveNet(weights);
      const cfg = { ...MCTS_PLAYER_DEFAULTS, cacheSize };
      const a = new MctsPlayer(net, cfg), b = new MctsPlayer(net, cfg);
      let moves = 0, reused = 0, searched = 0;
      const t0 = performance.now();
      for (let game = 0; game < 2; game++) {
        const g = positions[(game * 2) % positions.length].clone();
        for (let ply = 0; ply < 12 && !g.isOver(); ply++) {
          const r = (ply % 2 === 0 ? a : b).search(g, playouts);
          if (ply >= 2) (moves++, reused += r.reused ?? 0, searched += r.playouts);
          g.play(r.move);
        }
        a.resetTree(), b.resetTree();
      }
      const ms = performance.now() - t0;
      rows.push([
        cacheSize > 0 ? `on (${cacheSize})` : "off",
        moves,
        Math.round(reused / moves),
        Math.round(searched / moves),
        net.evaluations,
        a.cacheHits + b.cacheHits,
        Math.round(ms),
      ]);
    }
    report.tables.push({
      title: `Tree reuse and evaluation cache: MCTS (${playouts} playouts/move, tree reuse on) ` +
        "against itself, 2 games x 12 plies",
      columns: [
        "cache",
        "moves counted",
        "mean root visits kept",
        "mean playouts added",
        "network evaluations",
        "cache hits",
        "ms",
      ],
      rows,
    });
    report.notes.push(
      `Network: ${
        modelPath.slice(modelPath.lastIndexOf("/") + 1)
      }; MCTS-Solver with the win check; ` +
        "dense stem = the Wasm SIMD convolution for the first layer; sparse stem = the same layer by " +
        "linearity over the zero, constant and row-constant input planes; plain sparse stem = the " +
        "same values computed cell by cell (FastInference.plainStem: the sparse stem before its " +
        "untouched-rows shortcut, same bits, with the tower at every cell); dense tower = the " +
        "residual tower computed at every cell (the sparse stem's rows tell the other rows where " +
        "each layer can differ from one value per row; FastInference.denseTower, same bits); " +
        "batch k = k leaves " +
        "collected under virtual loss per network call. Compare ratios within one run.",
    );
    return report;
  },
};
