// The cells policy head (issue 17): the gather op against a naive oracle, the whole cells net's
// gradients against finite differences, the fast CPU paths against the reference, model files,
// and the batch errors.
import assert from "node:assert/strict";
import { cellLogits, cellLogitsBackward } from "../../src/nn/cpu/cell_logits.ts";
import { FastInference } from "../../src/nn/cpu/fast_infer.ts";
import { CpuBackend, FastCpuBackend } from "../../src/nn/cpu_backend.ts";
import { forwardMacs, type NetConfig, netPreset, validateConfig } from "../../src/nn/config.ts";
import { type NetTensors, type PassInputs, runPass } from "../../src/nn/graph.ts";
import { CpuNet, type NetBatch } from "../../src/nn/net.ts";
import { countParams, initWeights, type NetWeights, paramSpecs } from "../../src/nn/params.ts";
import { decodeHiveModel, encodeHiveModel } from "../../src/nn/model_file.ts";
import { decodeCheckpoint, encodeCheckpoint } from "../../src/nn/checkpoint.ts";
import { cpuFusedInfer } from "../../src/nn/f16.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import { dot, gradError, maxDiff, randTensor, rejectsWith } from "./helpers.ts";

const CELLS = { hidden: 4, planes: 3, biases: 5 };
const CFG: NetConfig = { ...netPreset("tiny"), cells: CELLS };
const HW = CFG.height * CFG.width, PER = CELLS.planes * HW;
const HYPER0 = { lr: 0, momentum: 0, weightDecay: 0 };

/**
 * A random move table [n, w, 4] with unique move indices per position, padding entries (-1) and
 * -1 terms, and the matching mask (most entries legal, some not) and target over the legal moves.
 */
function randomTable(
  n: number,
  w: number,
  moves: number,
  per: number,
  biases: number,
  seed: number,
) {
  const next = rng(seed);
  const table = new Float32Array(n * w * 4).fill(-1);
  const mask = new Float32Array(n * moves), policy = new Float32Array(n * moves);
  for (let r = 0; r < n; r++) {
    const order = Array.from({ length: moves }, (_, i) => i).sort(() => next() - 0.5);
    const used = Math.min(moves, w - 1 - r % 2); // at least one padding entry
    let legal = 0;
    for (let j = 0; j < used; j++) {
      const e = (r * w + j) * 4, m = order[j];
      table[e] = m;
      table[e + 1] = next() < 0.15 ? -1 : Math.floor(next() * per);
      table[e + 2] = next() < 0.3 ? -1 : Math.floor(next() * per);
      table[e + 3] = next() < 0.2 ? -1 : Math.floor(next() * biases);
      if (j === 0 || next() < 0.8) {
        mask[r * moves + m] = 1;
        policy[r * moves + m] = next();
        legal++;
      }
    }
    // Padding in the middle too: move the last real entry one slot on.
    if (used < w) {
      const a = (r * w + used - 1) * 4, b = (r * w + used) * 4;
      table.copyWithin(b, a, a + 4);
      table.fill(-1, a, a + 4);
    }
    let s = 0;
    for (let m = 0; m < moves; m++) s += policy[r * moves + m];
    for (let m = 0; m < moves; m++) policy[r * moves + m] /= s;
    assert.ok(legal > 0);
  }
  return { table, mask, policy };
}

/** The gather in double precision, straight from the spec's formula. */
function naiveLogits(
  q: CpuTensor,
  table: Float32Array,
  w: number,
  bias: Float32Array,
  moves: number,
) {
  const n = q.shape[0], per = q.data.length / n;
  const out = new Float64Array(n * moves);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < w; j++) {
      const [m, a, b, s] = table.subarray((r * w + j) * 4, (r * w + j) * 4 + 4);
      if (m < 0) continue;
      out[r * moves + m] = (a >= 0 ? q.data[r * per + a] : 0) + (b >= 0 ? q.data[r * per + b] : 0) +
        (s >= 0 ? bias[s] : 0);
    }
  }
  return out;
}

Deno.test("cellLogits equals the naive gather; its backward equals finite differences", () => {
  const n = 3, w = 9, moves = 11;
  const q = randTensor([n, CELLS.planes, 4, 5], 1, -2, 2), per = CELLS.planes * 20;
  const bias = randTensor([CELLS.biases], 2);
  const { table } = randomTable(n, w, moves, per, CELLS.biases, 3);
  // One entry with a == b (the term counts twice), one with no term at all (logit 0).
  const m0 = table[0], m1 = table[4];
  table.set([7, 7, -1], 1);
  table.set([-1, -1, -1], 5);
  const t = cpuTensor([n, w, 4], table);
  const got = cellLogits(q, t, bias, moves);
  assert.deepEqual(got.shape, [n, moves]);
  const want = naiveLogits(q, table, w, bias.data, moves);
  for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got.data[i] - want[i]) < 1e-6, `${i}`);
  assert.ok(Math.abs(got.data[m0] - 2 * q.data[7]) < 1e-6);
  assert.equal(got.data[m1], 0);
  // Unnamed logits are exactly 0.
  const named = new Set<number>();
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < w; j++) {
      if (table[(r * w + j) * 4] >= 0) named.add(r * moves + table[(r * w + j) * 4]);
    }
  }
  for (let i = 0; i < n * moves; i++) if (!named.has(i)) assert.equal(got.data[i], 0);
  const r = randTensor([n, moves], 4);
  const dbias = cpuTensor([CELLS.biases]).data.fill(9);
  const db = cpuTensor([CELLS.biases], dbias);
  const dq = cellLogitsBackward(q, t, r, db);
  assert.deepEqual(dq.shape, q.shape);
  const loss = () => dot(cellLogits(q, t, bias, moves).data, r.data);
  assert.ok(gradError(q, dq.data, loss, 60) < 1e-3);
  assert.ok(gradError(bias, db.data, loss) < 1e-3);
  assert.ok(dq.data.some((v) => v !== 0) && dq.data.some((v) => v === 0));
});

Deno.test("cellLogits rejects out-of-range table entries and a table of the wrong shape", () => {
  const q = randTensor([1, 2, 2, 2], 5), bias = randTensor([3], 6);
  const t = (e: number[]) => cpuTensor([1, e.length / 4, 4], new Float32Array(e));
  assert.throws(() => cellLogits(q, t([4, 0, 0, 0]), bias, 4), /out of range/);
  assert.throws(() => cellLogits(q, t([0, 8, 0, 0]), bias, 4), /out of range/);
  assert.throws(() => cellLogits(q, t([0, 0, -2, 0]), bias, 4), /out of range/);
  assert.throws(() => cellLogits(q, t([0, 0, 0, 3]), bias, 4), /out of range/);
  assert.throws(() => cellLogits(q, t([0, 0.5, 0, 0]), bias, 4), /out of range/);
  assert.throws(() => cellLogits(q, cpuTensor([2, 1, 4]), bias, 4), /move table shape/);
  // Padding entries are ignored whatever their other fields hold.
  assert.deepEqual([...cellLogits(q, t([-1, 99, 99, 99]), bias, 4).data], [0, 0, 0, 0]);
});

Deno.test("cells net: parameters, MACs and config validation", () => {
  const names = paramSpecs(CFG).map((s) => `${s.name}:${s.shape.join("x")}`);
  assert.ok(names.includes("policy.conv:4x8x1x1"));
  assert.ok(names.includes("policy.bn.var:4"));
  assert.ok(names.includes("policy.cells.w:3x4x1x1"));
  assert.ok(names.includes("policy.cells.b:5"));
  assert.ok(!names.some((n) => n.startsWith("policy.fc")));
  const tiny = netPreset("tiny");
  const fcPolicy = 2 * 8 + 2 * 2 + 12 * 2 * HW + 12;
  const cellsPolicy = 4 * 8 + 4 * 2 + 3 * 4 + 5;
  assert.equal(countParams(CFG), countParams(tiny) - fcPolicy + cellsPolicy);
  assert.equal(
    forwardMacs(CFG),
    forwardMacs(tiny) - (2 * 8 * HW + 2 * HW * 12) + (4 * 8 + 3 * 4) * HW,
  );
  assert.deepEqual(validateConfig({ ...CFG }), CFG);
  for (
    const bad of [{ ...CELLS, hidden: 0 }, { ...CELLS, planes: 1.5 }, { ...CELLS, biases: -1 }]
  ) {
    assert.throws(() => validateConfig({ ...CFG, cells: bad }), /cells\.\w+ must be a positive/);
  }
});

/** The whole net's train-mode losses (batch means) through runPass with lr 0 (weights unchanged). */
function passLoss(net: NetTensors<CpuTensor>, inp: PassInputs<CpuTensor>): number {
  const o = runPass(new CpuBackend(), net, inp, HYPER0);
  const mean = (a: Float32Array) => a.reduce((s, v) => s + v, 0) / a.length;
  return mean(o.policyLoss!.data) + mean(o.valueLoss!.data);
}

Deno.test("cells net: runPass gradients of every head tensor and the stem match finite differences", () => {
  const w = initWeights(CFG, 11);
  // Non-zero BN betas and cell biases so that no gradient is trivially zero.
  for (const [name, t] of w.tensors) {
    if (name.endsWith(".beta") || name === "policy.cells.b") {
      t.data.set(randTensor(t.shape as number[], 12, -0.5, 0.5).data);
    }
  }
  const n = 3, wd = 8;
  const { table, mask, policy } = randomTable(n, wd, CFG.moves, PER, CELLS.biases, 13);
  const zeros = () =>
    new Map(w.specs.filter((s) => s.trainable).map((s) => [s.name, cpuTensor(s.shape)]));
  const net: NetTensors<CpuTensor> = {
    config: CFG,
    specs: w.specs,
    params: w.tensors,
    grads: zeros(),
    velocity: zeros(),
  };
  const inp = {
    x: randTensor([n, CFG.planes, CFG.height, CFG.width], 14),
    mask: cpuTensor([n, CFG.moves], mask),
    policyTarget: cpuTensor([n, CFG.moves], policy),
    valueTarget: cpuTensor([n], new Float32Array([0.5, -1, 0.2])),
    moveCells: cpuTensor([n, wd, 4], table),
  };
  passLoss(net, inp);
  const grads = new Map([...net.grads!].map(([k, g]) => [k, g.data.slice()]));
  for (
    const name of [
      "policy.cells.w",
      "policy.cells.b",
      "policy.conv",
      "policy.bn.gamma",
      "policy.bn.beta",
      "stem.conv",
    ]
  ) {
    const err = gradError(
      w.tensors.get(name)!,
      grads.get(name)!,
      () => passLoss(net, inp),
      16,
      1e-3, // f32 losses: 1e-2 crosses too many ReLU and curvature for the BN'd convs
    );
    // The stem's gradient crosses the tower's ReLUs, whose kinks blur finite differences more.
    const tol = name === "stem.conv" ? 6e-3 : 2e-3;
    assert.ok(err < tol, `${name}: finite-difference error ${err}`);
    assert.ok(grads.get(name)!.some((v) => v !== 0), `${name}: gradient is all zero`);
  }
});

/** A cells batch of n positions with targets and a move table of width w. */
function cellsBatch(
  n: number,
  w: number,
  seed: number,
): Required<NetBatch> & { planes: Float32Array } {
  const { table, mask, policy } = randomTable(n, w, CFG.moves, PER, CELLS.biases, seed);
  const next = rng(seed + 1);
  const planes = new Float32Array(n * CFG.planes * HW).map(() => next() < 0.3 ? 1 : 0);
  const value = new Float32Array(n).map(() => next() * 2 - 1);
  return { size: n, planes, mask, policy, value, moveCells: table, moveCellsWidth: w };
}

function close(got: ArrayLike<number>, want: ArrayLike<number>, what: string, tol = 1e-4): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]}, want ${want[i]}`);
  }
}

Deno.test("cells net: FastCpuBackend training steps and inference track the reference", async () => {
  const w = initWeights(CFG, 21);
  const ref = new CpuNet(w), fast = new CpuNet(w, new FastCpuBackend());
  const hyper = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
  const first = cellsBatch(6, 10, 30);
  for (let s = 0; s < 3; s++) {
    const b = s === 0 ? first : cellsBatch(6, 10, 30 + s);
    const a = await ref.trainStep(b, hyper), f = await fast.trainStep(b, hyper);
    close([f.policyLoss, f.valueLoss, f.l2], [a.policyLoss, a.valueLoss, a.l2], `step ${s}`);
  }
  const wa = await ref.weights(), wf = await fast.weights();
  for (const [name, t] of wa.tensors) close(wf.tensors.get(name)!.data, t.data, name, 1e-3);
  const init = w.tensors.get("policy.cells.w")!.data;
  assert.ok(maxDiff(wa.tensors.get("policy.cells.w")!.data, init) > 1e-4, "the cells head trains");
  const b = cellsBatch(4, 12, 40);
  const a = await ref.infer(b), f = await fast.infer(b);
  close(f.probs, a.probs, "probs");
  close(f.value, a.value, "value");
  for (let i = 0; i < b.mask.length; i++) if (b.mask[i] === 0) assert.equal(a.probs[i], 0);
  // Training on a fixed batch with one-hot targets drives its policy loss down.
  const oneHot = { ...first, policy: new Float32Array(first.policy.length) };
  for (let r = 0; r < first.size; r++) {
    const m = first.moveCells[r * 10 * 4]; // entry 0 is always legal
    oneHot.policy[r * CFG.moves + m] = 1;
  }
  const before = (await ref.trainStep(oneHot, HYPER0)).policyLoss;
  for (let s = 0; s < 20; s++) await ref.trainStep(oneHot, { ...hyper, lr: 0.1 });
  const after = (await ref.trainStep(oneHot, HYPER0)).policyLoss;
  assert.ok(after < 0.5 * before, `policy loss ${before} -> ${after}`);
});

Deno.test("cells net: FastInference priors and values equal the reference pass", async () => {
  const net = new CpuNet(initWeights(CFG, 22));
  // Non-trivial batch-norm running statistics, so the folding is exercised.
  for (let s = 0; s < 2; s++) {
    await net.trainStep(cellsBatch(5, 9, 50 + s), { lr: 0.05, momentum: 0.9, weightDecay: 0 });
  }
  const weights: NetWeights = await net.weights();
  const ref = new CpuNet(weights), fast = new FastInference(weights);
  const n = 3, w = 9, b = cellsBatch(n, w, 60);
  const out = await ref.infer(b);
  const per = CFG.planes * HW;
  const allMoves: number[][] = [], allCells: number[][] = [], priors: Float32Array[] = [];
  for (let r = 0; r < n; r++) {
    const moves: number[] = [], cells: number[] = [];
    for (let j = 0; j < w; j++) {
      const e = (r * w + j) * 4, m = b.moveCells[e];
      if (m < 0 || b.mask[r * CFG.moves + m] === 0) continue;
      moves.push(m);
      cells.push(b.moveCells[e + 1], b.moveCells[e + 2], b.moveCells[e + 3]);
    }
    const pr = new Float32Array(moves.length);
    const v = fast.evaluate(b.planes, r * per, moves, pr, cells);
    close([v], [out.value[r]], `value ${r}`);
    close(pr, moves.map((m) => out.probs[r * CFG.moves + m]), `priors ${r}`);
    allMoves.push(moves);
    allCells.push(cells);
    priors.push(new Float32Array(moves.length));
  }
  const values = new Float32Array(n);
  fast.evaluateBatch(b.planes, 0, n, allMoves, priors, values, allCells);
  for (let r = 0; r < n; r++) {
    close(priors[r], allMoves[r].map((m) => out.probs[r * CFG.moves + m]), `batch priors ${r}`);
    close([values[r]], [out.value[r]], `batch value ${r}`);
  }
  assert.throws(() => fast.evaluate(b.planes, 0, [0], new Float32Array(1)), /move cells/);
  assert.throws(() => fast.evaluate(b.planes, 0, [0], new Float32Array(1), [0, 0]), /3 a move/);
  assert.throws(
    () => fast.evaluate(b.planes, 0, [0], new Float32Array(1), [PER, 0, 0]),
    /out of range/,
  );
  // An FC net ignores the cells argument.
  const fc = new FastInference(initWeights(netPreset("tiny"), 1));
  const p1 = new Float32Array(2), p2 = new Float32Array(2);
  fc.evaluate(b.planes, 0, [1, 3], p1);
  fc.evaluate(b.planes, 0, [1, 3], p2, [0, 0, 0, 1, 1, 1]);
  assert.deepEqual(p1, p2);
});

Deno.test("cells net: model file and checkpoint round trips; a head mismatch is an error", async () => {
  const net = new CpuNet(initWeights(CFG, 23));
  await net.trainStep(cellsBatch(4, 9, 70), { lr: 0.05, momentum: 0.9, weightDecay: 0 });
  const w = await net.weights();
  const b = cellsBatch(3, 9, 71);
  const want = await net.infer(b);
  const m = decodeHiveModel(encodeHiveModel(w, { name: "cells" }));
  assert.deepEqual(m.weights.config.cells, CELLS);
  assert.equal(m.meta.name, "cells");
  const viaModel = await new CpuNet(m.weights).infer(b);
  assert.ok(
    maxDiff(viaModel.probs, want.probs) < 1e-6 && maxDiff(viaModel.value, want.value) < 1e-6,
  );
  const bytes = encodeCheckpoint(w, { step: 1 });
  const c = decodeCheckpoint(bytes, "mem", CFG);
  assert.deepEqual(c.weights.config, CFG);
  for (const [name, t] of w.tensors) {
    assert.deepEqual(c.weights.tensors.get(name)!.data, t.data, name);
  }
  assert.throws(
    () => decodeCheckpoint(bytes, "mem", netPreset("tiny")),
    /policy\.conv 4x8x1x1, the model needs policy\.conv 2x8x1x1/,
  );
  assert.throws(
    () => decodeCheckpoint(bytes, "mem", { ...CFG, cells: { ...CELLS, planes: 4 } }),
    /policy\.cells\.w 3x4x1x1, the model needs policy\.cells\.w 4x4x1x1/,
  );
  // A fully connected net's file still loads as one.
  const fc = decodeHiveModel(encodeHiveModel(initWeights(netPreset("tiny"), 2), {}));
  assert.equal(fc.weights.config.cells, undefined);
  assert.ok(fc.weights.tensors.has("policy.fc.w"));
});

Deno.test("cells net: a missing table, a legal move without an entry and bad entries are clear errors", async () => {
  const net = new CpuNet(initWeights(CFG, 24)),
    fast = new CpuNet(initWeights(CFG, 24), new FastCpuBackend());
  const b = cellsBatch(2, 8, 80);
  for (const n of [net, fast]) {
    await rejectsWith(n.infer({ ...b, moveCells: undefined }), /needs the batch's move table/);
    await rejectsWith(
      n.trainStep({ ...b, moveCells: undefined }, HYPER0),
      /needs the batch's move table/,
    );
    await rejectsWith(n.infer({ ...b, moveCellsWidth: 7 }), /moveCells has 64 values, expected 56/);
    // A legal move whose entry is dropped.
    const t = b.moveCells.slice();
    const e = t.findIndex((v, i) => i % 4 === 0 && v >= 0 && b.mask[v] > 0);
    const m = t[e];
    t.fill(-1, e, e + 4);
    await rejectsWith(
      n.infer({ ...b, moveCells: t }),
      new RegExp(`legal move ${m} of position 0 has no entry`),
    );
    // Without a mask every move is legal: the table must name them all.
    await rejectsWith(n.infer({ ...b, mask: undefined }), /has no entry in the move table/);
    const dupRow = b.moveCells.slice();
    const pad = dupRow.findIndex((v, i) => i % 4 === 0 && i < 32 && v === -1);
    dupRow.set(dupRow.subarray(e, e + 4), pad);
    await rejectsWith(n.infer({ ...b, moveCells: dupRow }), /two entries/);
    const bad = b.moveCells.slice();
    bad[e + 3] = CELLS.biases;
    await rejectsWith(n.infer({ ...b, moveCells: bad }), /out of range/);
  }
  // A fully connected net ignores the table.
  const fc = new CpuNet(initWeights(netPreset("tiny"), 3));
  const plain = await fc.infer({ size: 2, planes: b.planes, mask: b.mask });
  const withTable = await fc.infer(b);
  assert.deepEqual(plain.probs, withTable.probs);
  // The fused graph runs the cells head (the reference pass's outputs); no table: a clear error.
  const weights = await net.weights();
  const fused = cpuFusedInfer(weights, b, false), ref = await net.infer(b);
  assert.ok(maxDiff(fused.probs, ref.probs) < 1e-5 && maxDiff(fused.value, ref.value) < 1e-5);
  assert.throws(
    () => cpuFusedInfer(weights, { ...b, moveCells: undefined }, false),
    /needs the batch's move table/,
  );
});
