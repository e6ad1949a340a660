// `deno task bench uhp`: the UHP player's alpha-beta to a fixed depth, plain vs. with its
// transposition table (same scores required), on seeded random mid-game positions.
import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { timed } from "../hive/bench.ts";
import { randomGame } from "../hive/playout.ts";
import { searchBestMove } from "./alphabeta.ts";

/** The `uhp` benchmark suite. */
export const suite: BenchSuite = {
  description: "UHP player: alpha-beta with and without its transposition table",
  run(opts): Promise<BenchReport> {
    const report = newReport("uhp", null);
    // The UHP player's search with and without its transposition table, same depth, same scores.
    const searchRows: (string | number)[][] = [];
    const depth = opts.full ? 4 : 3;
    for (
      const [type, plies, seed] of [["Base", 24, 2], ["Base+MLP", 31, 9], [
        "Base+MLP",
        40,
        11,
      ]] as const
    ) {
      const g = randomGame(type, plies, seed);
      opts.log(`alpha-beta ${type} after ${plies} plies, depth ${depth}`);
      const [plain, plainSecs] = timed(() => searchBestMove(g, { depth, transposition: false }));
      const [tt, ttSecs] = timed(() => searchBestMove(g, { depth }));
      if (tt.score !== plain.score) {
        throw new Error(`alpha-beta: score ${tt.score} with the table, ${plain.score} without`);
      }
      searchRows.push([
        `${type} ply ${plies}`,
        depth,
        plain.score,
        plain.nodes,
        plainSecs,
        tt.nodes,
        ttSecs,
        plainSecs / ttSecs,
      ]);
    }
    report.tables.push({
      title: "UHP player: alpha-beta to a fixed depth, plain vs. with the transposition table",
      columns: [
        "position",
        "depth",
        "score",
        "nodes (plain)",
        "seconds (plain)",
        "nodes (table)",
        "seconds (table)",
        "speedup",
      ],
      rows: searchRows,
    });
    report.notes.push("Single-threaded; the table must give the same score as plain alpha-beta.");
    return Promise.resolve(report);
  },
};
