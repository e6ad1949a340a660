import assert from "node:assert/strict";
import { CHECK_DECAY_POWER, nextCheck, nextGridPoint } from "../../src/cfr/check_schedule.ts";

// The predicted check schedule: grid points only, skipping those the decay bound rules out.

/** The checks a solve makes on a measured curve (iteration -> %), stopping at the target. */
function checks(curve: Record<number, number>, target: number, every = 10, max = 1000): number[] {
  const out: number[] = [];
  for (let t = every; t <= max;) {
    out.push(t);
    if (curve[t] <= target) break;
    t = nextCheck(t, curve[t], target, 0, every, max);
  }
  return out;
}

// Spot T1 at 1 thread, checked every 10 iterations (ours, then the reference solver's).
const T1_OURS: Record<number, number> = {
  10: 23.928,
  20: 14.637,
  30: 3.298,
  40: 1.54,
  50: 1.849,
  60: 1.292,
  70: 1.846,
  80: 0.743,
  90: 0.534,
  100: 0.405,
  110: 0.332,
  120: 0.281,
};
const T1_REF: Record<number, number> = {
  10: 23.931,
  20: 14.415,
  30: 3.366,
  40: 1.619,
  50: 2.537,
  60: 1.645,
  70: 2.049,
  80: 0.849,
  90: 0.613,
  100: 0.456,
  110: 0.365,
  120: 0.304,
  130: 0.26,
};

Deno.test("check schedule: T1's curves stop at the same first grid point at the target, with about half the checks", () => {
  assert.deepEqual(checks(T1_OURS, 0.3), [10, 20, 50, 70, 110, 120]);
  assert.deepEqual(checks(T1_REF, 0.3), [10, 20, 50, 80, 100, 110, 120, 130]);
  // At 0.5 % the first grid points at or below are 100 (ours) and 100 (the reference's).
  assert.equal(checks(T1_OURS, 0.5).at(-1), 100);
  assert.equal(checks(T1_REF, 0.5).at(-1), 100);
});

Deno.test("check schedule: the largest grid point within the decay bound, at least the next, at most the last", () => {
  assert.equal(CHECK_DECAY_POWER, 4);
  // 16 times the target: the bound is 2t (16^(1/4) = 2).
  assert.equal(nextCheck(50, 4.8, 0.3, 0, 10, 1000), 100);
  assert.equal(nextCheck(55, 4.8, 0.3, 5, 10, 1000), 105); // the grid counts from the start
  assert.equal(nextCheck(50, 4.8, 0.3, 0, 10, 95), 95); // the last iteration is always checked
  assert.equal(nextCheck(50, 0.31, 0.3, 0, 10, 1000), 60); // close: the next grid point
  assert.equal(nextCheck(50, 0.2, 0.3, 0, 10, 1000), 60); // reached (the caller stops)
  assert.equal(nextCheck(50, NaN, 0.3, 0, 10, 1000), 60);
  assert.equal(nextCheck(50, Infinity, 0.3, 0, 10, 1000), 60);
  assert.equal(nextCheck(3, 100, 0.3, 0, 1, 1000), 12); // every = 1: 3 * 333^(1/4) = 12.8
  // Monotone in the exploitability: a higher measurement never checks earlier.
  let last = 0;
  for (let pct = 0.31; pct < 100; pct *= 1.1) {
    const n = nextCheck(40, pct, 0.3, 0, 10, 1000);
    assert.ok(n >= last && n % 10 === 0 && n > 40);
    last = n;
  }
});

Deno.test("nextGridPoint: the first grid point after t, on the grid or between two, before its start", () => {
  assert.equal(nextGridPoint(0, 0, 10), 10);
  assert.equal(nextGridPoint(10, 0, 10), 20);
  assert.equal(nextGridPoint(13, 0, 10), 20);
  // A warm start's full tree: the grid counts from W = 64.
  assert.equal(nextGridPoint(64, 64, 10), 74);
  assert.equal(nextGridPoint(71, 64, 10), 74);
  assert.equal(nextGridPoint(61, 64, 10), 64);
});
