// The batched evaluator's GPU padding: every batch it sends has one of the sizes `prepare` readies.
import assert from "node:assert/strict";
import fc from "fast-check";
import { BatchEvaluator, paddedSizes } from "../../src/alphazero/evaluator.ts";
import { TICTACTOE } from "../../src/alphazero/games/tictactoe.ts";
import type { NetBatch, NetOutputs } from "../../src/nn/net.ts";

/** A stand-in "GPU" network: uniform outputs, and a note of every batch size and prepare call. */
class FakeGpuNet {
  readonly backend = "gpu" as const;
  readonly sizes: number[] = [];
  readonly prepared: number[][] = [];
  infer(b: NetBatch): Promise<NetOutputs> {
    this.sizes.push(b.size);
    return Promise.resolve({
      probs: new Float32Array(b.size * TICTACTOE.moves).fill(1 / TICTACTOE.moves),
      value: new Float32Array(b.size),
    });
  }
  prepare(sizes: readonly number[]): Promise<void> {
    this.prepared.push([...sizes]);
    return Promise.resolve();
  }
}

Deno.test("evaluator: paddedSizes lists powers of two from 8, capped at the largest batch", () => {
  assert.deepEqual(paddedSizes(64), [8, 16, 32, 64]);
  assert.deepEqual(paddedSizes(100), [8, 16, 32, 64, 100]);
  assert.deepEqual(paddedSizes(8), [8]);
  assert.deepEqual(paddedSizes(5), [5]);
  assert.deepEqual(paddedSizes(1), [1]);
});

Deno.test("evaluator: every GPU batch is padded to a size that prepare readied", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 300 }),
      fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 6 }),
      async (max, counts) => {
        const net = new FakeGpuNet();
        const ev = new BatchEvaluator(net, TICTACTOE, max);
        await ev.prepare();
        assert.deepEqual(net.prepared, [paddedSizes(max)]);
        const ready = new Set(paddedSizes(max));
        const g = TICTACTOE.create();
        for (const n of counts) {
          await Promise.all(Array.from({ length: n }, () => ev.evaluate(g, g.legalMoves())));
        }
        ev.close();
        for (const s of net.sizes) assert(ready.has(s), `batch of ${s} not in ${[...ready]}`);
        assert.equal(ev.stats.positions, counts.reduce((a, b) => a + b, 0));
      },
    ),
    { seed: 17, numRuns: 60 },
  );
});

Deno.test("evaluator: prepare is free on the CPU", async () => {
  const net = new FakeGpuNet();
  const cpu = { backend: "cpu" as const, infer: (b: NetBatch) => net.infer(b) };
  const ev = new BatchEvaluator(cpu, TICTACTOE, 64);
  assert.equal(await ev.prepare(), 0);
  ev.close();
});
