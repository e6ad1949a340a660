// Each WGSL kernel against its TypeScript reference on small shapes (llvmpipe in CI).
// Tolerance: |gpu - cpu| <= 1e-4 * max(1, max |cpu|) (f32 sums in a different order).
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { writeBuffer } from "../../src/gpu/buffers.ts";
import {
  batchNorm,
  batchNormBackward,
  batchNormRelu,
  batchNormReluBackward,
} from "../../src/nn/cpu/batchnorm.ts";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "../../src/nn/cpu/conv.ts";
import { add, relu, reluBackward } from "../../src/nn/cpu/elementwise.ts";
import { linear, linearBackward } from "../../src/nn/cpu/linear.ts";
import { policyLoss, valueLoss } from "../../src/nn/cpu/loss.ts";
import { sgdStep } from "../../src/nn/optimizer.ts";
import { maskWords, packMask } from "../../src/nn/mask_bits.ts";
import { GpuRecorder, SUMSQ_GROUPS } from "../../src/nn/gpu/backend.ts";
import {
  HARDWARE_TILES,
  type KernelTiles,
  loadKernels,
  TEST_TILES,
} from "../../src/nn/gpu/kernels.ts";
import { type GpuTensor, readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { type CpuTensor, cpuTensor } from "../../src/nn/tensor.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
// The tiled (workgroup-memory GEMM) kernels are what real GPUs run. On a software adapter the conv
// and FC GEMMs are tested with the same code at 16 x 16 tiles and 16 threads (TEST_TILES), because
// llvmpipe needs 10 s to a minute to compile each 256-thread GEMM; KIBITZ_TILED_TESTS=1 tests the
// hardware tiles there too. The workgroup reductions (batch norm, softmax) compile in ~2 s as they are.
const softwareTiles = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const MODES = [
  { name: "default kernels", tiled: undefined, tiles: HARDWARE_TILES },
  {
    name: softwareTiles ? "tiled kernels, test tiles" : "tiled kernels",
    tiled: true,
    tiles: softwareTiles ? TEST_TILES : HARDWARE_TILES,
  },
].map((m) => ({ ...m, opts }));

/** Records ops with `body`, runs them once, and reads back the returned tensors. */
async function onGpu(
  inputs: CpuTensor[],
  body: (r: GpuRecorder, t: GpuTensor[]) => GpuTensor[],
  tiled?: boolean,
  tiles: KernelTiles = HARDWARE_TILES,
): Promise<Float32Array[]> {
  const r = new GpuRecorder(ctx!, await loadKernels(ctx!, tiles), new TensorPool(ctx!), tiled);
  const ts = inputs.map((x) => uploadTensor(ctx!, x.shape, x.data));
  const outs = body(r, ts);
  r.submit();
  const got = await readTensors(ctx!, outs);
  r.destroy();
  r.pool.destroy();
  for (const t of ts) t.buffer.destroy();
  return got;
}

function close(name: string, got: Float32Array, want: Float32Array): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = maxDiff(got, want), tol = 1e-4 * Math.max(1, maxAbs(want));
  assert.ok(err <= tol, `${name}: max difference ${err} > ${tol}`);
}

// Shapes cross the 64-wide tiles and the 16-deep K slices: 70 output channels, 108 pixels. The
// 130-output cases (15 x 9 = 135 weight columns) take the 128 x 128 tiles. The 2048-pixel cases
// split the weight gradient's reduction in two (split-K) on the small and on the wide tiles.
// The batch-1 cases with a deep K (450 and 300) split the forward reduction in 3 and 2 (split-K).
const CONV_CASES = [
  [3, 3, 6, 70, 6, 6],
  [1, 2, 5, 3, 5, 4],
  [3, 2, 4, 8, 5, 5],
  [3, 2, 15, 130, 8, 9],
  [3, 8, 4, 8, 16, 16],
  [3, 2, 15, 130, 32, 32],
  [3, 1, 50, 20, 5, 5],
  [1, 1, 300, 8, 4, 4],
];
for (const mode of MODES) {
  for (const [k, n, ci, co, h, w] of CONV_CASES) {
    Deno.test(
      `GPU conv ${k}x${k} ${n}x${ci}x${h}x${w} -> ${co} (${mode.name}): forward, dx, dw match CPU`,
      mode.opts,
      async () => {
        const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, k, k], 2);
        const dy = randTensor([n, co, h, w], 3);
        const dw = cpuTensor(wt.shape);
        const [y, dx, gdw] = await onGpu(
          [x, wt, dy, dw],
          (r, [gx, gw, gdy, gdw]) => {
            const y = r.conv2d(gx, gw);
            const dx = r.conv2dBackward(gx, gw, gdy, gdw, true)!;
            return [y, dx, gdw];
          },
          mode.tiled,
          mode.tiles,
        );
        close("conv forward", y, conv2d(x, wt).data);
        close("conv dx", dx, conv2dBackwardInput(dy, wt).data);
        close("conv dw", gdw, conv2dBackwardWeight(x, dy, k).data);
      },
    );
  }
}

for (const mode of MODES) {
  Deno.test(
    `GPU batch norm (train, running averages, inference, backward) matches CPU (${mode.name})`,
    mode.opts,
    async () => {
      // The second shape: 1311 values a channel, past the reductions' 1024 per pass, partial tail.
      for (const shape of [[2, 3, 4, 5], [3, 3, 19, 23]]) await bnCase(shape, mode);
    },
  );
}

// The one-pass statistics subtract a shift before squaring: a channel at 1000 +- 0.01 keeps its
// variance (raw sums of squares would cancel to noise in f32).
for (const mode of MODES) {
  Deno.test(
    `GPU batch statistics of an offset channel match CPU (${mode.name})`,
    mode.opts,
    async () => {
      const x = randTensor([3, 2, 19, 23], 21, -0.01, 0.01);
      for (let i = 0; i < x.data.length; i++) {
        x.data[i] += Math.floor(i / (19 * 23)) % 2 ? -3 : 1000;
      }
      const bn = () => ({
        gamma: randTensor([2], 6, 0.5, 1.5),
        beta: randTensor([2], 7),
        runMean: randTensor([2], 8),
        runVar: randTensor([2], 9, 0.5, 2),
      });
      const [stats] = await onGpu(
        [x, ...Object.values(bn())],
        (r, [gx, gamma, beta, runMean, runVar]) => [
          r.batchNorm(gx, { gamma, beta, runMean, runVar }, true).stats,
        ],
        mode.tiled,
        mode.tiles,
      );
      close("offset bn stats", stats, batchNorm(x, bn(), true).stats.data);
    },
  );
}

/** One batch-norm parity case (train, running averages, inference, backward) of `shape`. */
async function bnCase(shape: number[], mode: (typeof MODES)[number]): Promise<void> {
  const x = randTensor(shape, 4, -2, 3), dy = randTensor(shape, 5);
  const mk = () => ({
    gamma: randTensor([3], 6, 0.5, 1.5),
    beta: randTensor([3], 7),
    runMean: randTensor([3], 8),
    runVar: randTensor([3], 9, 0.5, 2),
  });
  const p = mk(), q = mk();
  const dg = cpuTensor([3]), db = cpuTensor([3]);
  const got = await onGpu(
    [x, dy, q.gamma, q.beta, q.runMean, q.runVar, dg, db],
    (r, [gx, gdy, gamma, beta, runMean, runVar, gdg, gdb]) => {
      const bn = { gamma, beta, runMean, runVar };
      const t = r.batchNorm(gx, bn, true);
      const dx = r.batchNormBackward(gx, gdy, t.stats, gamma, gdg, gdb);
      const inf = r.batchNorm(gx, bn, false);
      return [t.y, t.stats, dx, gdg, gdb, runMean, runVar, inf.y];
    },
    mode.tiled,
    mode.tiles,
  );
  const t = batchNorm(x, p, true);
  const g = batchNormBackward(x, dy, t.stats, p.gamma);
  const inf = batchNorm(x, p, false);
  close("bn y", got[0], t.y.data);
  close("bn stats", got[1], t.stats.data);
  close("bn dx", got[2], g.dx.data);
  close("bn dgamma", got[3], g.dgamma.data);
  close("bn dbeta", got[4], g.dbeta.data);
  close("bn running mean", got[5], p.runMean.data);
  close("bn running var", got[6], p.runVar.data);
  close("bn inference y", got[7], inf.y.data);
}

for (const mode of MODES) {
  Deno.test(
    `GPU fused batch norm + residual + ReLU and its backward match CPU and the unfused GPU ops (${mode.name})`,
    mode.opts,
    async () => {
      for (const shape of [[2, 3, 4, 5], [3, 3, 19, 23]]) {
        for (const residual of [true, false]) await bnReluCase(shape, residual, mode);
      }
    },
  );
}

/**
 * One parity case of the training graph's fused ops (bnApplyRelu, bnReluBackwardReduce/Apply):
 * against the CPU twin (batchNormRelu, batchNormReluBackward; gpu_ops tolerance) and against the
 * unfused GPU ops (batchNorm, add, relu, reluBackward, batchNormBackward) on the same adapter.
 */
async function bnReluCase(
  shape: number[],
  residual: boolean,
  mode: (typeof MODES)[number],
): Promise<void> {
  const x = randTensor(shape, 20, -2, 3), res = randTensor(shape, 21);
  const dy = randTensor(shape, 22), dy2 = randTensor(shape, 23);
  const c = shape[1];
  const mk = () => ({
    gamma: randTensor([c], 24, 0.5, 1.5),
    beta: randTensor([c], 25),
    runMean: randTensor([c], 26),
    runVar: randTensor([c], 27, 0.5, 2),
  });
  const p = mk(), q = mk();
  const z = () => cpuTensor([c]);
  const got = await onGpu(
    [x, res, dy, dy2, q.gamma, q.beta, q.runMean, q.runVar, z(), z(), z(), z()],
    (r, [gx, gres, gdy, gdy2, gamma, beta, runMean, runVar, dg, db, dgU, dbU]) => {
      const bn = { gamma, beta, runMean, runVar };
      const rs = residual ? gres : null, d2 = residual ? gdy2 : null;
      // Fused (train: runs the batch statistics and running averages once) ...
      const f = r.batchNormRelu(gx, bn, true, rs);
      const b = r.batchNormReluBackward(gx, f.y, gdy, d2, f.stats, gamma, dg, db, residual);
      const inf = r.batchNormRelu(gx, bn, false, rs);
      // ... and unfused from the same stats.
      const u = r.batchNorm(gx, bn, false);
      const ua = rs ? r.add(u.y, rs) : u.y;
      const uy = r.relu(ua);
      const ud = r.reluBackward(f.y, d2 ? r.add(gdy, d2) : gdy);
      const udx = r.batchNormBackward(gx, ud, f.stats, gamma, dgU, dbU);
      const outs = [f.y, f.stats, b.dx, dg, db, runMean, runVar, inf.y, uy, ud, udx, dgU, dbU];
      return b.dz ? [...outs, b.dz] : outs;
    },
    mode.tiled,
    mode.tiles,
  );
  const [fy, fstats, fdx, fdg, fdb, rm, rv, finf, uy, ud, udx, udg, udb, fdz] = got;
  const t = batchNormRelu(x, p, true, residual ? res : null);
  const g = batchNormReluBackward(x, t.y, dy, residual ? dy2 : null, t.stats, p.gamma);
  const inf = batchNormRelu(x, p, false, residual ? res : null);
  const what = `${shape.join("x")}${residual ? " residual" : ""}`;
  close(`${what} fused y`, fy, t.y.data);
  close(`${what} fused stats`, fstats, t.stats.data);
  close(`${what} fused dx`, fdx, g.dx.data);
  close(`${what} fused dgamma`, fdg, g.dgamma.data);
  close(`${what} fused dbeta`, fdb, g.dbeta.data);
  close(`${what} running mean`, rm, p.runMean.data);
  close(`${what} running var`, rv, p.runVar.data);
  close(`${what} fused inference y`, finf, inf.y.data);
  assert.equal(fdz !== undefined, residual, "dz is returned exactly when asked for");
  if (fdz) close(`${what} fused dz`, fdz, g.dz.data);
  // The unfused GPU path (inference y from the updated running averages; backward from the
  // same stats): the same arithmetic, so the same values up to the kernels' summation order.
  close(`${what} fused vs unfused inference y`, finf, uy);
  close(`${what} fused vs unfused dx`, fdx, udx);
  close(`${what} fused vs unfused dgamma`, fdg, udg);
  close(`${what} fused vs unfused dbeta`, fdb, udb);
  if (fdz) assert.deepEqual(fdz, ud, "dz equals the unfused add + reluBackward exactly");
}

Deno.test("GPU relu, relu backward and add match CPU", opts, async () => {
  const a = randTensor([2, 3, 3, 3], 10), b = randTensor([2, 3, 3, 3], 11);
  const [y, s, d] = await onGpu([a, b], (r, [ga, gb]) => {
    const y = r.relu(ga);
    return [y, r.add(ga, gb), r.reluBackward(y, gb)];
  });
  close("relu", y, relu(a).data);
  close("add", s, add(a, b).data);
  close("relu backward", d, reluBackward(relu(a), b).data);
});

// Batch 3 takes the untiled (thin) matmul; batch 20 (tiled kernels) the tiled one, crossing tiles.
for (const [batch, mode] of [[3, MODES[0]], [20, MODES[0]], [20, MODES[1]]] as const) {
  Deno.test(
    `GPU fully connected forward and backward match CPU (batch ${batch}, ${mode.name})`,
    mode.opts,
    async () => {
      const x = randTensor([batch, 2, 5, 7], 12), w = randTensor([67, 70], 13);
      const bias = randTensor([67], 14), dy = randTensor([batch, 67], 15);
      const [y, dx, dw, db] = await onGpu(
        [x, w, bias, dy, cpuTensor(w.shape), cpuTensor(bias.shape)],
        (r, [gx, gw, gb, gdy, gdw, gdb]) => {
          const y = r.linear(gx, gw, gb);
          const dx = r.linearBackward(gx, gw, gdy, gdw, gdb, true)!;
          return [y, dx, gdw, gdb];
        },
        mode.tiled,
        mode.tiles,
      );
      const g = linearBackward(x, w, dy);
      close("fc y", y, linear(x, w, bias).data);
      close("fc dx", dx, g.dx.data);
      close("fc dw", dw, g.dw.data);
      close("fc db", db, g.db.data);
    },
  );
}

// A long contiguous K at a small batch (the policy head's forward at batch 1-8) takes the
// K-splitting `rows` matmul, in both kernel families.
for (const [batch, mode] of [[1, MODES[0]], [5, MODES[0]], [5, MODES[1]]] as const) {
  Deno.test(
    `GPU fully connected forward with a long K matches CPU (batch ${batch}, ${mode.name})`,
    mode.opts,
    async () => {
      const x = randTensor([batch, 3, 10, 10], 16), w = randTensor([67, 300], 17);
      const bias = randTensor([67], 18);
      const [y, yb] = await onGpu(
        [x, w, bias, cpuTensor([67])],
        (r, [gx, gw, gb, zero]) => [r.linear(gx, gw, gb), r.linear(gx, gw, zero)],
        mode.tiled,
        mode.tiles,
      );
      close("fc y", y, linear(x, w, bias).data);
      close("fc y, zero bias", yb, linear(x, w, cpuTensor([67])).data);
    },
  );
}

for (const mode of MODES) {
  Deno.test(
    `GPU masked softmax, policy and value losses match CPU (${mode.name})`,
    mode.opts,
    async () => {
      const logits = randTensor([3, 300], 16, -4, 4);
      const mask = randTensor([3, 300], 17, 0, 1);
      for (let i = 0; i < mask.data.length; i++) mask.data[i] = mask.data[i] < 0.6 ? 1 : 0;
      mask.data.fill(0, 600, 900); // a row with no legal move
      const target = randTensor([3, 300], 18, 0, 1);
      for (let i = 0; i < target.data.length; i++) target.data[i] *= mask.data[i];
      const z = randTensor([3, 1], 19, -2, 2), vt = cpuTensor([3], new Float32Array([1, -1, 0.25]));
      // The GPU reads the mask packed as bits.
      const words = packMask(mask.data, 3, 300);
      const packed = cpuTensor([3, maskWords(300)], new Float32Array(words.buffer));
      const got = await onGpu(
        [logits, packed, target, z, vt],
        (r, [gl, gm, gt, gz, gvt]) => {
          const pl = r.policyLoss(gl, gm, gt);
          const sm = r.policyLoss(gl, gm, null);
          const vl = r.valueLoss(gz, gvt);
          const vo = r.valueLoss(gz, null);
          return [pl.probs, pl.loss!, pl.dlogits!, sm.probs, vl.value, vl.loss!, vl.dz!, vo.value];
        },
        mode.tiled,
        mode.tiles,
      );
      const pl = policyLoss(logits, mask, target), vl = valueLoss(z, vt);
      close("probs", got[0], pl.probs.data);
      close("policy loss", got[1], pl.loss.data);
      close("dlogits", got[2], pl.dlogits.data);
      close("softmax only", got[3], pl.probs.data);
      close("value", got[4], vl.value.data);
      close("value loss", got[5], vl.loss.data);
      close("dz", got[6], vl.dz.data);
      close("value only", got[7], vl.value.data);
    },
  );
}

Deno.test("GPU SGD step and sum of squares match CPU", opts, async () => {
  const p = randTensor([1000], 20), g = randTensor([1000], 21), v = randTensor([1000], 22);
  // Slot 1 of 3: its SUMSQ_GROUPS partials add up to the sum; the other slots stay untouched.
  const out = cpuTensor([3 * SUMSQ_GROUPS]);
  out.data.fill(7);
  const got = await onGpu([p, g, v, out], (r, [gp, gg, gv, go]) => {
    r.sumSquares(gp, go, 1);
    writeBuffer(ctx!, r.hyper, new Float32Array([0.05, 0.9, 1e-4, 0]));
    r.sgd(gp, gg, gv, { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 });
    return [gp, gv, go];
  });
  const p2 = p.data.slice(), v2 = v.data.slice();
  const sq = p.data.reduce((s, x) => s + x * x, 0);
  sgdStep(p2, g.data, v2, 0.05, 0.9, 1e-4);
  close("sgd p", got[0], p2);
  close("sgd v", got[1], v2);
  const part = got[2].slice(SUMSQ_GROUPS, 2 * SUMSQ_GROUPS);
  const sum = part.reduce((s, x) => s + x, 0);
  assert.ok(Math.abs(sum - sq) < 1e-4 * sq, `${sum} vs ${sq}`);
  assert.ok(part.filter((x) => x > 0).length > 1, "several workgroups contribute");
  for (const i of [0, SUMSQ_GROUPS - 1, 2 * SUMSQ_GROUPS, 3 * SUMSQ_GROUPS - 1]) {
    assert.equal(got[2][i], 7);
  }
  const small = cpuTensor([SUMSQ_GROUPS]);
  await assert.rejects(
    onGpu([p, small], (r, [gp, go]) => {
      r.sumSquares(gp, go, 1);
      return [go];
    }),
    new RegExp(`needs ${2 * SUMSQ_GROUPS} partials`),
  );
});
