// Every op's backward pass on the TypeScript reference against central finite differences.
import assert from "node:assert/strict";
import {
  batchNorm,
  batchNormBackward,
  batchNormRelu,
  batchNormReluBackward,
} from "../../src/nn/cpu/batchnorm.ts";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "../../src/nn/cpu/conv.ts";
import { add, relu, reluBackward } from "../../src/nn/cpu/elementwise.ts";
import { linear, linearBackward } from "../../src/nn/cpu/linear.ts";
import { meanPool, meanPoolBackward } from "../../src/nn/cpu/pool.ts";
import { policyLoss, valueLoss } from "../../src/nn/cpu/loss.ts";
import { cpuTensor } from "../../src/nn/tensor.ts";
import { dot, gradError, randTensor } from "./helpers.ts";

const TOL = 2e-3;

for (const k of [3, 1]) {
  Deno.test(`conv ${k}x${k} backward (input and weight) matches finite differences`, () => {
    const x = randTensor([2, 3, 5, 4], 1);
    const w = randTensor([4, 3, k, k], 2);
    const r = randTensor([2, 4, 5, 4], 3);
    const loss = () => dot(conv2d(x, w).data, r.data);
    assert.ok(gradError(x, conv2dBackwardInput(r, w).data, loss) < TOL);
    assert.ok(gradError(w, conv2dBackwardWeight(x, r, k).data, loss) < TOL);
  });
}

Deno.test("batch norm training backward (x, gamma, beta) matches finite differences", () => {
  const x = randTensor([3, 2, 3, 3], 4, -2, 2);
  const p = {
    gamma: randTensor([2], 5, 0.5, 1.5),
    beta: randTensor([2], 6),
    runMean: cpuTensor([2]),
    runVar: cpuTensor([2], new Float32Array([1, 1])),
  };
  const r = randTensor([3, 2, 3, 3], 7);
  const loss = () => dot(batchNorm(x, p, true).y.data, r.data);
  const { stats } = batchNorm(x, p, true);
  const g = batchNormBackward(x, r, stats, p.gamma);
  assert.ok(gradError(x, g.dx.data, loss) < TOL);
  assert.ok(gradError(p.gamma, g.dgamma.data, loss) < TOL);
  assert.ok(gradError(p.beta, g.dbeta.data, loss) < TOL);
});

Deno.test("batch norm running averages follow momentum 0.1 with the unbiased variance", () => {
  const x = cpuTensor([2, 1, 1, 2], new Float32Array([1, 2, 3, 6]));
  const p = {
    gamma: cpuTensor([1], new Float32Array([1])),
    beta: cpuTensor([1]),
    runMean: cpuTensor([1]),
    runVar: cpuTensor([1], new Float32Array([1])),
  };
  const { stats } = batchNorm(x, p, true);
  assert.equal(stats.data[0], 3);
  // Biased variance 3.5 is used to normalize; unbiased 14/3 feeds the running average.
  assert.ok(Math.abs(stats.data[1] - 1 / Math.sqrt(3.5 + 1e-5)) < 1e-6);
  assert.ok(Math.abs(p.runMean.data[0] - 0.3) < 1e-6);
  assert.ok(Math.abs(p.runVar.data[0] - (0.9 + 0.1 * 14 / 3)) < 1e-6);
  const inf = batchNorm(x, p, false);
  assert.ok(Math.abs(inf.y.data[0] - (1 - 0.3) / Math.sqrt(p.runVar.data[0] + 1e-5)) < 1e-5);
});

Deno.test("relu and add backward match finite differences", () => {
  // Keep values away from the kink at 0 so the finite difference is exact.
  const x = randTensor([2, 3, 2, 2], 8);
  for (let i = 0; i < x.data.length; i++) x.data[i] += x.data[i] >= 0 ? 0.1 : -0.1;
  const b = randTensor([2, 3, 2, 2], 9);
  const r = randTensor([2, 3, 2, 2], 10);
  const loss = () => dot(relu(add(x, b)).data, r.data);
  const y = relu(add(x, b));
  const dx = reluBackward(y, r);
  assert.ok(gradError(x, dx.data, loss) < TOL);
  assert.ok(gradError(b, dx.data, loss) < TOL);
});

Deno.test("fully connected backward (x, w, bias) matches finite differences", () => {
  const x = randTensor([3, 2, 2, 2], 11);
  const w = randTensor([5, 8], 12);
  const bias = randTensor([5], 13);
  const r = randTensor([3, 5], 14);
  const loss = () => dot(linear(x, w, bias).data, r.data);
  const g = linearBackward(x, w, r);
  assert.deepEqual(g.dx.shape, x.shape);
  assert.ok(gradError(x, g.dx.data, loss) < TOL);
  assert.ok(gradError(w, g.dw.data, loss) < TOL);
  assert.ok(gradError(bias, g.db.data, loss) < TOL);
});

Deno.test("masked softmax cross-entropy: gradient matches finite differences, illegal moves excluded", () => {
  const logits = randTensor([3, 6], 15, -2, 2);
  const mask = cpuTensor(
    [3, 6],
    new Float32Array([1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1]),
  );
  const target = cpuTensor([3, 6]);
  target.data.set([0.5, 0.25, 0, 0.25, 0, 0], 0);
  target.data.set([0, 0, 1, 0, 0, 0], 6);
  target.data.set([0.2, 0, 0, 0, 0, 0.8], 12);
  const mean = () => policyLoss(logits, mask, target).loss.data.reduce((a, v) => a + v, 0) / 3;
  const r = policyLoss(logits, mask, target);
  assert.ok(gradError(logits, r.dlogits.data, mean, 18) < TOL);
  for (let i = 0; i < 18; i++) {
    if (mask.data[i] === 0) {
      assert.equal(r.probs.data[i], 0);
      assert.equal(r.dlogits.data[i], 0);
    }
  }
  for (let row = 0; row < 3; row++) {
    const s = r.probs.data.subarray(row * 6, row * 6 + 6).reduce((a, v) => a + v, 0);
    assert.ok(Math.abs(s - 1) < 1e-6);
  }
  // Raising an illegal logit changes nothing.
  logits.data[2] += 5;
  assert.deepEqual(policyLoss(logits, mask, target).probs.data, r.probs.data);
});

Deno.test("tanh value loss gradient matches finite differences", () => {
  const z = randTensor([4, 1], 16, -2, 2);
  const t = cpuTensor([4], new Float32Array([1, -1, 0, 0.5]));
  const mean = () => valueLoss(z, t).loss.data.reduce((a, v) => a + v, 0) / 4;
  assert.ok(gradError(z, valueLoss(z, t).dz.data, mean) < TOL);
  assert.ok(Math.abs(valueLoss(z, t).value.data[0] - Math.tanh(z.data[0])) < 1e-7);
});

Deno.test("fused batch norm + residual add + ReLU equals the three ops, forward and backward, bit for bit", () => {
  const shape = [3, 2, 3, 3];
  const x = randTensor(shape, 11, -2, 2), res = randTensor(shape, 12);
  const dy = randTensor(shape, 13), dy2 = randTensor(shape, 14);
  const mk = () => ({
    gamma: randTensor([2], 15, 0.5, 1.5),
    beta: randTensor([2], 16),
    runMean: randTensor([2], 17),
    runVar: randTensor([2], 18, 0.5, 2),
  });
  for (const train of [true, false]) {
    for (const r of [res, null]) {
      const p = mk(), q = mk();
      const f = batchNormRelu(x, p, train, r);
      const u = batchNorm(x, q, train);
      const y = relu(r ? add(u.y, r) : u.y);
      assert.deepEqual(f.y.data, y.data);
      assert.deepEqual(f.stats.data, u.stats.data);
      assert.deepEqual(p.runMean.data, q.runMean.data);
      assert.deepEqual(p.runVar.data, q.runVar.data);
      if (!train) continue;
      assert.ok(f.y.data.some((v) => v === 0) && f.y.data.some((v) => v > 0), "ReLU cuts some");
      for (const d2 of [dy2, null]) {
        const g = batchNormReluBackward(x, f.y, dy, d2, f.stats, p.gamma);
        const dz = reluBackward(y, d2 ? add(dy, d2) : dy);
        const want = batchNormBackward(x, dz, u.stats, q.gamma);
        assert.deepEqual(g.dz.data, dz.data);
        assert.deepEqual(g.dx.data, want.dx.data);
        assert.deepEqual(g.dgamma.data, want.dgamma.data);
        assert.deepEqual(g.dbeta.data, want.dbeta.data);
      }
    }
  }
});

Deno.test("mean pooling backward matches finite differences", () => {
  const x = randTensor([2, 3, 4, 5], 31);
  const r = randTensor([2, 3], 32);
  const loss = () => dot(meanPool(x).data, r.data);
  assert.ok(gradError(x, meanPoolBackward(x.shape, r).data, loss) < TOL);
  // The mean itself: channel (1, 2) of x.
  let s = 0;
  for (let j = 0; j < 20; j++) s += x.data[(1 * 3 + 2) * 20 + j];
  assert.ok(Math.abs(meanPool(x).data[5] - s / 20) < 1e-6);
});
