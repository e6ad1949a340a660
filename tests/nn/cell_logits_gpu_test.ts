// The cells policy head on WebGPU (llvmpipe in CI): cellLogits and cellLogitsBackward against a
// plain TypeScript loop of the spec, on random tables with padding rows and -1 terms, in both
// kernel families; buffers reused from the pool hold garbage first, so the zero-fills are tested.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { writeBuffer } from "../../src/gpu/buffers.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { type GpuTensor, readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

/** A random move table [b, w, 4]: distinct move indices, padding rows, -1 terms, a == b once. */
export function randomTable(
  b: number,
  w: number,
  moves: number,
  qper: number,
  nbias: number,
  seed: number,
): CpuTensor {
  const next = rng(seed), pick = (n: number) => Math.floor(next() * n);
  const t = cpuTensor([b, w, 4]);
  for (let n = 0; n < b; n++) {
    const ids = [...Array(moves).keys()];
    for (let i = ids.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    for (let j = 0; j < w; j++) {
      const e = (n * w + j) * 4;
      // Position 1 is all padding; elsewhere a quarter of the rows are.
      const pad = n === 1 || next() < 0.25;
      t.data[e] = pad ? -1 : ids[j];
      t.data[e + 1] = next() < 0.2 ? -1 : pick(qper);
      t.data[e + 2] = next() < 0.4 ? -1 : pick(qper);
      t.data[e + 3] = next() < 0.15 ? -1 : pick(nbias);
      if (pad && next() < 0.5) t.data.fill(-1, e, e + 4);
    }
    // One entry with a == b: its gradient reaches that cell twice.
    const e = n * w * 4;
    if (t.data[e] >= 0) t.data[e + 2] = t.data[e + 1];
  }
  return t;
}

/** The spec's formula as a loop: logits, and for dlogits the gradients of q and bias. */
export function naiveCells(
  q: CpuTensor,
  table: CpuTensor,
  bias: Float32Array,
  moves: number,
  dlogits: Float32Array,
): { logits: Float32Array; dq: Float32Array; dbias: Float32Array } {
  const b = q.shape[0], w = table.shape[1], qper = q.data.length / b;
  const logits = new Float32Array(b * moves), dq = new Float32Array(q.data.length);
  const dbias = new Float32Array(bias.length);
  for (let n = 0; n < b; n++) {
    for (let j = 0; j < w; j++) {
      const [m, a, c, s] = table.data.subarray((n * w + j) * 4, (n * w + j) * 4 + 4);
      if (m < 0) continue;
      let v = 0;
      const g = dlogits[n * moves + m];
      if (a >= 0) v += q.data[n * qper + a], dq[n * qper + a] += g;
      if (c >= 0) v += q.data[n * qper + c], dq[n * qper + c] += g;
      if (s >= 0) v += bias[s], dbias[s] += g;
      logits[n * moves + m] = v;
    }
  }
  return { logits, dq, dbias };
}

function close(name: string, got: Float32Array, want: Float32Array): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = maxDiff(got, want), tol = 1e-5 * Math.max(1, maxAbs(want));
  assert.ok(err <= tol, `${name}: max difference ${err} > ${tol}`);
}

/** Runs both ops on the GPU, the logits and dq outputs landing in garbage-filled pool buffers. */
async function cellsOnGpu(
  tiled: boolean,
  q: CpuTensor,
  table: CpuTensor,
  bias: CpuTensor,
  moves: number,
  dlogits: CpuTensor,
) {
  const kernels = tiled
    ? await loadKernels(ctx!, TEST_TILES, "tiled")
    : await loadKernels(ctx!, TEST_TILES, "direct");
  const pool = new TensorPool(ctx!);
  const r = new GpuRecorder(ctx!, kernels, pool, tiled);
  const b = q.shape[0];
  for (const shape of [[b, moves], q.shape]) {
    const junk = pool.acquire(shape);
    writeBuffer(ctx!, junk.buffer, new Float32Array(junk.size).fill(123.5));
    pool.release(junk);
  }
  const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
  const gq = up(q), gt = up(table), gb = up(bias), gd = up(dlogits);
  const gdb = up(cpuTensor(bias.shape, new Float32Array(bias.data.length).fill(-7)));
  const logits = r.cellLogits(gq, gt, gb, moves);
  const dq = r.cellLogitsBackward(gq, gt, gd, gdb);
  r.submit();
  const [l, d, db] = await readTensors(ctx!, [logits, dq, gdb] as GpuTensor[]);
  r.destroy();
  pool.destroy();
  for (const t of [gq, gt, gb, gd, gdb]) t.buffer.destroy();
  return { logits: l, dq: d, dbias: db };
}

// [batch, table width, moves, planes, H, W, biases]: the second crosses the 64-wide workgroups
// (5 x 30 entries) and gives each slot entries from several positions.
const CASES = [
  [3, 9, 37, 3, 4, 5, 5],
  [5, 30, 100, 3, 4, 5, 5],
];
for (const tiled of [false, true]) {
  Deno.test(
    `GPU cellLogits and cellLogitsBackward match the spec's loop (${
      tiled ? "tiled" : "direct"
    } kernels)`,
    opts,
    async () => {
      for (const [b, w, moves, planes, h, wd, nbias] of CASES) {
        const q = randTensor([b, planes, h, wd], 11);
        const table = randomTable(b, w, moves, planes * h * wd, nbias, 12);
        const bias = randTensor([nbias], 13);
        const dlogits = randTensor([b, moves], 14);
        const got = await cellsOnGpu(tiled, q, table, bias, moves, dlogits);
        const want = naiveCells(q, table, bias.data, moves, dlogits.data);
        close("logits", got.logits, want.logits);
        close("dq", got.dq, want.dq);
        close("dbias", got.dbias, want.dbias);
        // The padded position's logits and planes' gradient are all zero.
        assert.ok(got.logits.subarray(moves, 2 * moves).every((v) => v === 0));
      }
    },
  );
}
