// `bench hive-selfplay` on the GPU (software adapter here): the inference rows, the per-kernel
// profile of each batch size's plan (profile=1), and self-play after the batch sizes were readied.
import assert from "node:assert/strict";
import { suite } from "../../src/alphazero/hive_bench.ts";
import { getGpu } from "../../src/gpu/device.ts";

const ctx = await getGpu();

Deno.test({
  name: "bench hive-selfplay: profile=1 adds each plan's GPU time by kernel; sizes readied first",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const logs: string[] = [];
    const report = await suite.run({
      full: false,
      backend: "gpu",
      args: ["net=cells-tiny", "seconds=1", "batch=16", "uhp=0", "profile=1", "concurrency=4"],
      log: (s) => logs.push(s),
    });
    const [speed, prof, selfplay] = report.tables;
    assert.deepEqual(speed.rows.map((r) => r[0]), [1, 16]);
    assert.match(prof.title, /plan spends its GPU time/);
    for (const size of [1, 16]) {
      const rows = prof.rows.filter((r) => r[0] === size);
      assert.equal(rows[0][1], "whole plan, warm");
      assert(Number(rows[0][3]) > 0);
      // The cells head's gather is one of the plan's kernels.
      assert(rows.some((r) => String(r[1]).endsWith(": cellLogits")), `batch ${size}`);
    }
    // Self-play keeps two network calls in flight on the GPU, as the AlphaZero loop does.
    assert.match(selfplay.title, /^Self-play, .*, 2 network call\(s\) in flight$/);
    assert(logs.some((l) => /self-play batch sizes readied in/.test(l)), logs.join("\n"));
    assert(report.notes.some((n) => /padded batch sizes \(8, 16:/.test(n)));
    await assert.rejects(
      suite.run({ full: false, backend: "gpu", args: ["inflight=0"], log: () => {} }),
      /inflight must be a positive integer, got 0/,
    );
  },
});
