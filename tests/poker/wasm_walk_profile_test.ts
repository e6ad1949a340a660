import assert from "node:assert/strict";
import { CfrSolver } from "../../src/cfr/mod.ts";
import { wasmParitySpot } from "../helpers/spots.ts";
import { threadedWalkAvailable } from "../../src/poker/wasm/walk.ts";
import {
  claimMakespan,
  medianProfile,
  profileWalk,
  scheduleBounds,
  type WalkProfile,
} from "../../src/poker/wasm/walk_profile.ts";

// The schedule model of the threaded Wasm walk (src/poker/wasm/walk_profile.ts) and the pool's
// time accounting (src/cfr/parallel.ts WorkerPool.measure).

const bits = (x: Float32Array) => new Uint32Array(x.buffer, x.byteOffset, x.length);

Deno.test("walk profile: claim makespan of a shared counter, by hand", () => {
  // Two threads: 5 | 4, 3 -> the second (free at 4), 3 -> the first (5), 2 -> the second (7),
  // 1 -> the first (8): both end at 9.
  assert.equal(claimMakespan([5, 4, 3, 3, 2, 1], 2), 9);
  assert.equal(claimMakespan([5, 4, 3, 3, 2, 1], 1), 18);
  // More threads than tasks: the largest task.
  assert.equal(claimMakespan([2, 7, 1], 8), 7);
  // Smallest first leaves the largest for last: 1, 1 | 1 -> 6 ends at 7 on the second.
  assert.equal(claimMakespan([1, 1, 1, 6], 2), 7);
});

Deno.test("walk profile: bounds add the serial phases to each round's makespan", () => {
  const p: WalkProfile = {
    wallMs: 0,
    rounds: [
      { kind: "train", p: 0, reachMs: 1, combineMs: 2, taskMs: [5, 4, 3, 3, 2, 1] },
      { kind: "train", p: 1, reachMs: 0.5, combineMs: 0.5, taskMs: [4, 4] },
    ],
  };
  const [one, two] = scheduleBounds(p, [1, 2], 0.25);
  assert.equal(one.totalMs, 4 + 18 + 8);
  assert.equal(two.serialMs, 4);
  assert.equal(two.tasksMs, 9 + 4 + 2 * 0.25);
  assert.equal(two.speedup, one.totalMs / two.totalMs);
  assert.equal(two.balance, 26 / (2 * two.tasksMs));
  const m = medianProfile([p, { ...p, wallMs: 2 }, { ...p, wallMs: 9 }]);
  assert.equal(m.wallMs, 2);
  assert.deepEqual(m.rounds[0].taskMs, p.rounds[0].taskMs);
});

Deno.test({
  name:
    "walk profile: every task timed on the calling thread, the stores bit-identical to the 1-thread walk; the pool's accounting on 2 threads",
  ignore: !threadedWalkAvailable(),
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    const { game: g, tree } = wasmParitySpot("Kh Qh 7d 4d", true, true, true);
    const mk = (threads: number) =>
      new CfrSolver(tree, g, { regretBits: 32, strategyBits: 32, seed: 5, threads });
    const one = mk(1), prof = mk(2), two = mk(2);
    try {
      const count = prof.taskTrainer!.tasks!.count;
      const { train, check } = profileWalk(prof, 2, 2, true);
      one.run(4);
      assert.deepEqual(bits(prof.regrets.f32!), bits(one.regrets.f32!), "regrets");
      assert.deepEqual(bits(prof.strategy.f32!), bits(one.strategy.f32!), "strategy");
      assert.equal(prof.nodeHandVisits, one.nodeHandVisits, "visits");
      assert.equal(train.length, 2);
      for (const it of train) {
        assert.deepEqual(it.rounds.map((r) => [r.kind, r.p]), [["train", 0], ["train", 1]]);
        for (const r of it.rounds) {
          assert.equal(r.taskMs.length, count);
          assert.ok(r.reachMs >= 0 && r.combineMs >= 0 && r.taskMs.every((x) => x >= 0));
        }
      }
      assert.deepEqual(check![0].rounds.map((r) => r.kind), ["eval", "eval"]);
      assert.deepEqual(prof.exploitability(), one.exploitability());
      // The real pool: two rounds an iteration, its threads' time within the rounds' wall time.
      two.run(1);
      const stats = two.measureThreads()!;
      two.run(3);
      assert.equal(stats.rounds, 6);
      assert.equal(stats.threads, 2);
      assert.ok(stats.wallMs > 0 && stats.busyMs > 0 && stats.busyMs <= 2 * stats.wallMs + 0.1);
      // The worker's share of each round stamped within that round (a stale stamp from the round
      // before would start before it: a negative wake-up).
      assert.ok(stats.wakeMs > -0.2 && stats.tailMs > -0.2, JSON.stringify(stats));
      assert.equal(one.measureThreads(), null);
    } finally {
      two.close();
    }
  },
});
