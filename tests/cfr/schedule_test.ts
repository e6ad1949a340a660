import assert from "node:assert/strict";
import {
  CFR_PLUS,
  DCFR_PAPER,
  DCFR_REFERENCE,
  iterationDiscount,
  lowerPow4,
  parseAlgorithm,
  PDCFR_PLUS,
} from "../../src/cfr/schedule.ts";

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

Deno.test("reference DCFR: alpha (t-1)^1.5/((t-1)^1.5+1), beta 0.5, gamma reset at powers of 4", () => {
  const d = (t: number) => iterationDiscount(DCFR_REFERENCE, t);
  assert.deepEqual([d(0).alphaPos, d(0).gamma, d(1).alphaPos, d(1).gamma], [0, 0, 0, 0]);
  close(d(2).alphaPos, 0.5);
  close(d(2).gamma, 1 / 8);
  close(d(3).alphaPos, 2 ** 1.5 / (2 ** 1.5 + 1));
  close(d(3).gamma, (2 / 3) ** 3);
  assert.equal(d(4).gamma, 0);
  close(d(5).gamma, (1 / 2) ** 3);
  assert.equal(d(16).gamma, 0);
  close(d(20).gamma, (4 / 5) ** 3);
  for (const t of [0, 1, 7, 100]) assert.equal(d(t).betaNeg, 0.5);
  close(d(10).alphaNext, d(11).alphaPos);
});

Deno.test("paper DCFR, CFR+ and PDCFR+ schedules", () => {
  const p = iterationDiscount(DCFR_PAPER, 2);
  close(p.alphaPos, 2 ** 1.5 / (2 ** 1.5 + 1));
  close(p.gamma, (2 / 3) ** 2);
  close(iterationDiscount(DCFR_PAPER, 64).gamma, (64 / 65) ** 2);
  const c = iterationDiscount(CFR_PLUS, 9);
  assert.equal(c.alphaPos, 1);
  close(c.gamma, 9 / 10);
  const q = iterationDiscount(PDCFR_PLUS, 3);
  close(q.alphaPos, 3 ** 2.3 / (3 ** 2.3 + 1));
  close(q.alphaNext, 4 ** 2.3 / (4 ** 2.3 + 1));
  close(q.gamma, (3 / 4) ** 5);
});

Deno.test("lowerPow4 and algorithm names", () => {
  assert.deepEqual([0, 1, 3, 4, 15, 16, 63, 64, 1000].map(lowerPow4), [
    0,
    1,
    1,
    4,
    4,
    16,
    16,
    64,
    256,
  ]);
  assert.equal(parseAlgorithm("pdcfr+"), "pdcfr+");
  assert.throws(
    () => parseAlgorithm("cfr"),
    /unknown algorithm "cfr"; valid: dcfr, dcfr\+, cfr\+, pdcfr\+/,
  );
});
