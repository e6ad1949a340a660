// `deno task bench hive`: perft speed, move generation on mid-game positions, play+undo rate.
// (The UHP player's search has its own suite, `bench uhp`, in src/uhp/bench.ts.)
import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { HiveGame } from "./game.ts";
import { perft } from "./perft.ts";
import { randomGame } from "./playout.ts";

/** Published perft-5 counts for the two game types measured. */
const PERFT5: Record<string, number> = { "Base": 516240, "Base+MLP": 5427108 };

/** Perft that plays and undoes every leaf move too: the naive baseline for bulk counting. */
function perftFull(g: HiveGame, depth: number, buf: Int32Array, start: number): number {
  if (depth === 0) return 1;
  const n = g.generate(buf, start);
  let total = 0;
  for (let i = start; i < start + n; i++) {
    g.play(buf[i]);
    total += perftFull(g, depth - 1, buf, start + n);
    g.undo();
  }
  return total;
}

/** Runs `f` and returns its value with the seconds it took. */
export function timed<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const v = f();
  return [v, (performance.now() - t0) / 1000];
}

/** Mid-game positions from seeded random playouts (30-60 plies) that are still in progress. */
export function midGamePositions(gameType: string, count: number): HiveGame[] {
  const out: HiveGame[] = [];
  for (let seed = 1; out.length < count; seed++) {
    const g = randomGame(gameType, 30 + (seed % 31), seed);
    if (!g.isOver()) out.push(g);
  }
  return out;
}

/** The `hive` benchmark suite. */
export const suite: BenchSuite = {
  description: "Hive rules engine: perft 5, move generation and play+undo speed",
  run(opts): Promise<BenchReport> {
    const report = newReport("hive", null);
    const perftRows: (string | number)[][] = [];
    for (const type of ["Base", "Base+MLP"]) {
      const depth = 5;
      opts.log(`perft ${type} ${depth}`);
      const [nodes, secs] = timed(() => perft(new HiveGame(type), depth));
      const [fullNodes, fullSecs] = timed(() =>
        perftFull(new HiveGame(type), depth, new Int32Array(2048 * (depth + 1)), 0)
      );
      if (nodes !== PERFT5[type] || fullNodes !== nodes) {
        throw new Error(`perft ${type} ${depth} gave ${nodes}/${fullNodes}, want ${PERFT5[type]}`);
      }
      perftRows.push([type, depth, nodes, secs, nodes / secs, fullSecs, fullNodes / fullSecs]);
    }
    if (opts.full) {
      opts.log("perft Base+MLP 6");
      const [nodes, secs] = timed(() => perft(new HiveGame("Base+MLP"), 6));
      perftRows.push(["Base+MLP", 6, nodes, secs, nodes / secs, null as unknown as number, 0]);
    }
    report.tables.push({
      title: "Perft from the start position (bulk-counted last ply vs. playing every leaf)",
      columns: [
        "game type",
        "depth",
        "nodes",
        "seconds",
        "nodes/s",
        "seconds (play every leaf)",
        "nodes/s (play every leaf)",
      ],
      rows: perftRows,
    });

    const genRows: (string | number)[][] = [];
    for (const type of ["Base", "Base+MLP"]) {
      opts.log(`move generation ${type}`);
      const positions = midGamePositions(type, 200);
      const buf = new Int32Array(4096);
      let moves = 0, calls = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < 1000) {
        for (const g of positions) {
          moves += g.generate(buf, 0);
          calls++;
        }
      }
      const genSecs = (performance.now() - t0) / 1000;
      let plays = 0;
      const t1 = performance.now();
      while (performance.now() - t1 < 1000) {
        for (const g of positions) {
          const n = g.generate(buf, 0);
          for (let i = 0; i < n; i++) {
            g.play(buf[i]);
            g.undo();
          }
          plays += n;
        }
      }
      const playSecs = (performance.now() - t1) / 1000; // generation included
      genRows.push([
        type,
        positions.length,
        moves / calls,
        (genSecs / calls) * 1e6,
        calls / genSecs,
        plays / playSecs,
      ]);
    }
    report.tables.push({
      title: "Mid-game positions (seeded random playouts, 30-60 plies)",
      columns: [
        "game type",
        "positions",
        "moves/position",
        "µs per generate",
        "generates/s",
        "play+undo/s (incl. generate)",
      ],
      rows: genRows,
    });
    const mlp = perftRows.find((r) => r[0] === "Base+MLP" && r[1] === 5)!;
    report.notes.push(
      `Target: Base+MLP perft 5 (5,427,108 nodes) under 10 s; measured ${
        (mlp[3] as number).toFixed(2)
      } s (${(10 / (mlp[3] as number)).toFixed(0)}x under the target); playing every leaf: ${
        (mlp[5] as number).toFixed(2)
      } s.`,
      "Single-threaded; counts checked against the published perft table before timing is reported.",
    );
    return Promise.resolve(report);
  },
};
