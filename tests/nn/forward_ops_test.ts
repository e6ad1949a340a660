// The CPU reference ops' forward passes against values worked out by hand: the oracle the GPU
// kernels are compared with, checked on its own (the gradient checks only test backward against
// forward, so a forward mistake such as a flipped kernel would pass them).
import assert from "node:assert/strict";
import { batchNorm } from "../../src/nn/cpu/batchnorm.ts";
import { conv2d } from "../../src/nn/cpu/conv.ts";
import { linear } from "../../src/nn/cpu/linear.ts";
import { policyLoss, valueLoss } from "../../src/nn/cpu/loss.ts";
import { cpuTensor } from "../../src/nn/tensor.ts";

const t = (shape: number[], v: number[]) => cpuTensor(shape, new Float32Array(v));

function close(got: ArrayLike<number>, want: number[], what: string, tol = 1e-6): void {
  assert.equal(got.length, want.length, what);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]}, want ${want[i]}`);
  }
}

Deno.test("conv2d: 3x3 same padding, cross-correlation (no flip), channels summed", () => {
  const x = t([1, 1, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // One tap at (ky 0, kx 2): y[r][c] = x[r - 1][c + 1], zero outside the image.
  const tap = new Array(9).fill(0);
  tap[2] = 1;
  close(conv2d(x, t([1, 1, 3, 3], tap)).data, [0, 0, 0, 2, 3, 0, 5, 6, 0], "one tap");
  // All ones: each output sums its 3x3 neighbourhood (corners 4 cells, edges 6, centre 9).
  close(
    conv2d(x, t([1, 1, 3, 3], new Array(9).fill(1))).data,
    [12, 21, 16, 27, 45, 33, 24, 39, 28],
    "box",
  );
  // Two input channels and two outputs with 1x1 kernels: y0 = x0 - x1, y1 = 2 x1.
  const x2 = t([1, 2, 1, 2], [1, 2, 10, 20]);
  close(conv2d(x2, t([2, 2, 1, 1], [1, -1, 0, 2])).data, [-9, -18, 20, 40], "1x1 mix");
});

Deno.test("linear: y = x w^T + bias, input flattened per batch row", () => {
  const y = linear(
    t([2, 3, 1, 1], [1, 2, 3, -1, 0, 1]),
    t([2, 3], [1, 0, -1, 2, 1, 0]),
    t([2], [0.5, -1]),
  );
  close(y.data, [-1.5, 3, -1.5, -3], "y"); // rows: [1 - 3 + 0.5, 2 + 2 - 1], [-1 - 1 + 0.5, -2 - 1]
});

Deno.test("batchNorm: inference uses the running averages; training the batch and updates them", () => {
  const p = {
    gamma: t([1], [2]),
    beta: t([1], [3]),
    runMean: t([1], [1]),
    runVar: t([1], [4]),
  };
  const inv = 1 / Math.sqrt(4 + 1e-5);
  close(batchNorm(t([1, 1, 1, 2], [5, -1]), p, false).y.data, [3 + 8 * inv, 3 - 4 * inv], "inf");
  const q = { gamma: t([1], [1]), beta: t([1], [0]), runMean: t([1], [0]), runVar: t([1], [1]) };
  const { y, stats } = batchNorm(t([2, 1, 1, 1], [1, 3]), q, true);
  const s = 1 / Math.sqrt(1 + 1e-5); // batch mean 2, biased variance 1
  close(y.data, [-s, s], "train");
  close(stats.data, [2, s], "stats");
  close(q.runMean.data, [0.2], "running mean"); // 0.9 * 0 + 0.1 * 2
  close(q.runVar.data, [1.1], "running var"); // 0.9 * 1 + 0.1 * 2 (unbiased)
});

Deno.test("policyLoss and valueLoss: masked softmax, cross-entropy, tanh value, gradients", () => {
  const { probs, loss, dlogits } = policyLoss(
    t([1, 3], [0, Math.log(3), 5]),
    t([1, 3], [1, 1, 0]),
    t([1, 3], [0, 1, 0]),
  );
  close(probs.data, [0.25, 0.75, 0], "probs");
  close(loss.data, [-Math.log(0.75)], "policy loss");
  close(dlogits.data, [0.25, -0.25, 0], "dlogits");
  const v = valueLoss(t([1, 1], [Math.atanh(0.5)]), t([1], [1]));
  close(v.value.data, [0.5], "value");
  close(v.loss.data, [0.25], "value loss");
  close(v.dz.data, [2 * -0.5 * 0.75], "dz");
});
