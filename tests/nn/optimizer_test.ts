// The SGD step and learning-rate schedule on the CPU, against values worked out by hand: the oracle
// of the GPU SGD kernel, and a test of its own on machines without an adapter.
import assert from "node:assert/strict";
import { cosineLr, defaultSgd, sgdStep } from "../../src/nn/optimizer.ts";

function close(got: ArrayLike<number>, want: number[], what: string): void {
  assert.equal(got.length, want.length);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) < 1e-6, `${what}[${i}]: ${got[i]}, want ${want[i]}`);
  }
}

Deno.test("sgdStep: v = mu v + g + wd p, then p -= lr v with the new velocity", () => {
  const p = new Float32Array([1, -2, 0.5]);
  const g = new Float32Array([0.5, 0.25, -1]);
  const v = new Float32Array([0.1, -0.2, 0]);
  sgdStep(p, g, v, 0.1, 0.9, 0.01);
  // v0 = 0.9*0.1 + 0.5 + 0.01*1 = 0.6; p0 = 1 - 0.1*0.6 = 0.94
  // v1 = 0.9*-0.2 + 0.25 + 0.01*-2 = 0.05; p1 = -2 - 0.1*0.05 = -2.005
  // v2 = 0 - 1 + 0.01*0.5 = -0.995; p2 = 0.5 + 0.0995 = 0.5995
  close(v, [0.6, 0.05, -0.995], "v");
  close(p, [0.94, -2.005, 0.5995], "p");
  // A second step with no gradient: the velocity carries on (momentum) and decays the weights.
  sgdStep(p, new Float32Array(3), v, 0.1, 0.9, 0.01);
  // v0 = 0.54 + 0.0094 = 0.5494; p0 = 0.94 - 0.05494 = 0.88506
  // v1 = 0.045 - 0.02005 = 0.02495; p1 = -2.005 - 0.002495 = -2.007495
  // v2 = -0.8955 + 0.005995 = -0.889505; p2 = 0.5995 + 0.0889505 = 0.6884505
  close(v, [0.5494, 0.02495, -0.889505], "v after step 2");
  close(p, [0.88506, -2.007495, 0.6884505], "p after step 2");
});

Deno.test("sgdStep without momentum or decay is plain gradient descent", () => {
  const p = new Float32Array([3, -1]), v = new Float32Array([5, 5]);
  sgdStep(p, new Float32Array([2, -4]), v, 0.25, 0, 0);
  close(v, [2, -4], "v");
  close(p, [2.5, 0], "p");
});

Deno.test("cosineLr: lrMax at step 0, the midpoint halfway, lrMin at the end and after", () => {
  const cfg = defaultSgd(100);
  assert.equal(cosineLr(cfg, 0), 0.01);
  assert.ok(Math.abs(cosineLr(cfg, 50) - (0.01 + 0.0001) / 2) < 1e-12);
  assert.ok(Math.abs(cosineLr(cfg, 100) - 0.0001) < 1e-12);
  assert.equal(cosineLr(cfg, 250), cosineLr(cfg, 100));
  assert.ok(cosineLr(cfg, 25) > cosineLr(cfg, 26), "decreasing");
});
