import { equal, ok, rejects } from "node:assert/strict";
import { suite, throughputPositions } from "../../src/hiveplayer/throughput_bench.ts";

Deno.test("hive-mcts bench: a fixed position list, one row per setting, reuse and cache rows", async () => {
  const a = throughputPositions(4), b = throughputPositions(4);
  equal(a.length, 4);
  equal(a.map((g) => g.gameString()).join("|"), b.map((g) => g.gameString()).join("|"));
  ok(a.every((g) => !g.isOver() && g.validMoves().length > 1));
  const report = await suite.run({
    full: false,
    backend: "cpu",
    args: ["positions=2", "playouts=6", "rounds=1"],
    log: () => {},
  });
  const [speed, reuse] = report.tables;
  equal(speed.rows.length, 7);
  // Every setting ran the same playouts (2 positions x 6).
  for (const row of speed.rows) equal(row[1], 12);
  equal(speed.rows[0][6], "1.00x");
  for (const row of speed.rows) ok(Number(row[2]) >= 1 && Number(row[2]) <= 12);
  equal(reuse.rows.length, 2);
  equal(reuse.rows[0][5], 0, "no cache hits with the cache off");
  await rejects(
    suite.run({ full: false, backend: "cpu", args: ["playouts=0"], log: () => {} }),
    /playouts must be a positive integer/,
  );
});
