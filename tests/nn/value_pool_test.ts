// The pooled value head (docs/value_pool.md): parameters and config, the whole net's gradients
// against finite differences (and a broken pooling backward caught by them), the fast CPU paths
// against the reference, Hive positions through SyncHiveNet and ReferenceHiveNet, model files,
// checkpoints and warm starts, and the UHP name.
import assert from "node:assert/strict";
import { HIVE_NETS, hiveCellsPoolCpuPreset, warmStart } from "../../src/alphazero/hive.ts";
import { azPreset } from "../../src/alphazero/presets.ts";
import { isKibitzError } from "../../src/errors.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { HIVE_CELLS } from "../../src/hive/move_cells.ts";
import { FastInference } from "../../src/nn/cpu/fast_infer.ts";
import { CpuBackend, FastCpuBackend } from "../../src/nn/cpu_backend.ts";
import { forwardMacs, type NetConfig, netPreset, validateConfig } from "../../src/nn/config.ts";
import { type NetTensors, type PassInputs, runPass } from "../../src/nn/graph.ts";
import { CpuNet, type TrainBatch } from "../../src/nn/net.ts";
import { countParams, initWeights, type NetWeights, paramSpecs } from "../../src/nn/params.ts";
import { decodeHiveModel, encodeHiveModel } from "../../src/nn/model_file.ts";
import { decodeCheckpoint, encodeCheckpoint } from "../../src/nn/checkpoint.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import { UhpEngine } from "../../src/uhp/engine.ts";
import { loadUhpModel, ReferenceHiveNet, SyncHiveNet } from "../../src/uhp/mcts_player.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";
import { assertSameEvaluation } from "../helpers/hive_eval.ts";
import { gradError, maxDiff, randTensor } from "./helpers.ts";

const VP = 3;
const TINY = netPreset("tiny");
const CFG: NetConfig = { ...TINY, valuePool: VP };
const CELLS = { hidden: 4, planes: 3, biases: 5 };
const CELLS_CFG: NetConfig = { ...CFG, cells: CELLS };
const HW = TINY.height * TINY.width;
const HYPER0 = { lr: 0, momentum: 0, weightDecay: 0 };

Deno.test("pooled value head: parameters, MACs and config validation", () => {
  const names = paramSpecs(CFG).map((s) => `${s.name}:${s.shape.join("x")}`);
  for (
    const n of [
      "value.conv:3x8x1x1",
      "value.bn.gamma:3",
      "value.bn.var:3",
      "value.fc1.w:16x3",
      "value.fc1.b:16",
      "value.fc2.w:1x16",
    ]
  ) {
    assert.ok(names.includes(n), n);
  }
  // The policy head and tower are the board-wide net's, tensor for tensor.
  const board = paramSpecs(TINY).filter((s) => !s.name.startsWith("value."));
  const pooled = paramSpecs(CFG).filter((s) => !s.name.startsWith("value."));
  assert.deepEqual(pooled, board);
  // Trainable counts: conv + BN gamma/beta + fc1 (fc2 is the same in both).
  const boardValue = 1 * 8 + 2 * 1 + 16 * HW + 16;
  const pooledValue = VP * 8 + 2 * VP + 16 * VP + 16;
  assert.equal(countParams(CFG), countParams(TINY) - boardValue + pooledValue);
  assert.equal(forwardMacs(CFG), forwardMacs(TINY) - (8 * HW + HW * 16) + (VP * 8 * HW + VP * 16));
  // The Hive player's size: the board-wide head is 43,411 of the cells net's 56,804 parameters.
  const cells = HIVE_NETS["cells-cpu"], pool = HIVE_NETS["cells-pool-cpu"];
  assert.deepEqual(pool, { ...cells, valuePool: 32 });
  assert.equal(countParams(cells), 56_804);
  assert.equal(
    countParams(pool),
    56_804 - (16 + 2 + 676 * 64 + 64) + (32 * 16 + 64 + 64 * 32 + 64),
  );
  assert.deepEqual(validateConfig({ ...CFG }), CFG);
  for (const bad of [0, -1, 1.5, "x", null]) {
    assert.throws(
      () => validateConfig({ ...CFG, valuePool: bad as unknown as number }),
      (e) =>
        isKibitzError(e, "bad_config") && /valuePool must be a positive integer/.test(String(e)),
      `valuePool ${bad}`,
    );
  }
});

/** A move table for a cells net: every legal move of each position named once, some -1 terms. */
function moveTable(n: number, w: number, moves: number, seed: number) {
  const next = rng(seed), per = CELLS.planes * HW;
  const table = new Float32Array(n * w * 4).fill(-1);
  const mask = new Float32Array(n * moves), policy = new Float32Array(n * moves);
  for (let r = 0; r < n; r++) {
    const order = Array.from({ length: moves }, (_, i) => i).sort(() => next() - 0.5);
    const used = Math.min(moves, w - 1);
    for (let j = 0; j < used; j++) {
      const e = (r * w + j) * 4, m = order[j];
      table[e] = m;
      table[e + 1] = Math.floor(next() * per);
      table[e + 2] = next() < 0.3 ? -1 : Math.floor(next() * per);
      table[e + 3] = Math.floor(next() * CELLS.biases);
      mask[r * moves + m] = 1;
      policy[r * moves + m] = 0.1 + next();
    }
    let s = 0;
    for (let m = 0; m < moves; m++) s += policy[r * moves + m];
    for (let m = 0; m < moves; m++) policy[r * moves + m] /= s;
  }
  return { table, mask, policy };
}

/** A batch for `cfg` (with its move table when it is a cells net) and training targets. */
function batch(cfg: NetConfig, n: number, seed: number): TrainBatch {
  const w = 8;
  const { table, mask, policy } = moveTable(n, w, cfg.moves, seed);
  const next = rng(seed + 1);
  const planes = new Float32Array(n * cfg.planes * HW).map(() => next() < 0.3 ? 1 : 0);
  const value = new Float32Array(n).map((_, i) => i % 2 ? 1 : -1);
  const cells = cfg.cells ? { moveCells: table, moveCellsWidth: w } : {};
  return { size: n, planes, mask, policy, value, ...cells };
}

/** The whole net's train-mode losses (batch means) through runPass with lr 0 (weights unchanged). */
function passLoss(
  net: NetTensors<CpuTensor>,
  inp: PassInputs<CpuTensor>,
  b: CpuBackend = new CpuBackend(),
): number {
  const o = runPass(b, net, inp, HYPER0);
  const mean = (a: Float32Array) => a.reduce((s, v) => s + v, 0) / a.length;
  return mean(o.policyLoss!.data) + mean(o.valueLoss!.data);
}

/** The pooling backward without its 1 / (H x W): what the gradient check must catch. */
class SumPoolBackward extends CpuBackend {
  override meanPoolBackward(x: CpuTensor, dy: CpuTensor): CpuTensor {
    const dx = super.meanPoolBackward(x, dy);
    const hw = x.shape[2] * x.shape[3];
    for (let i = 0; i < dx.data.length; i++) dx.data[i] *= hw;
    return dx;
  }
}

const VALUE_TENSORS = [
  "value.conv",
  "value.bn.gamma",
  "value.bn.beta",
  "value.fc1.w",
  "value.fc1.b",
  "value.fc2.w",
  "value.fc2.b",
  "stem.conv",
];

for (const cfg of [CFG, CELLS_CFG]) {
  const kind = cfg.cells ? "cells + pool" : "FC + pool";
  Deno.test(`pooled value head (${kind}): runPass gradients match finite differences`, () => {
    const w = initWeights(cfg, 13);
    // Non-zero BN betas (and cell biases) so that no gradient is trivially zero.
    for (const [name, t] of w.tensors) {
      if (name.endsWith(".beta") || name === "policy.cells.b") {
        t.data.set(randTensor(t.shape as number[], 12, -0.5, 0.5).data);
      }
    }
    const n = 3, b = batch(cfg, n, 13);
    const zeros = () =>
      new Map(w.specs.filter((s) => s.trainable).map((s) => [s.name, cpuTensor(s.shape)]));
    const net: NetTensors<CpuTensor> = {
      config: cfg,
      specs: w.specs,
      params: w.tensors,
      grads: zeros(),
      velocity: zeros(),
    };
    const inp: PassInputs<CpuTensor> = {
      x: cpuTensor([n, cfg.planes, cfg.height, cfg.width], b.planes),
      mask: cpuTensor([n, cfg.moves], b.mask),
      policyTarget: cpuTensor([n, cfg.moves], b.policy),
      valueTarget: cpuTensor([n], b.value),
      moveCells: b.moveCells ? cpuTensor([n, b.moveCellsWidth!, 4], b.moveCells) : null,
    };
    const gradsOf = (backend: CpuBackend) => {
      for (const g of net.grads!.values()) g.data.fill(0);
      passLoss(net, inp, backend);
      return new Map([...net.grads!].map(([k, g]) => [k, g.data.slice()]));
    };
    const grads = gradsOf(new CpuBackend());
    const loss = () => passLoss(net, inp);
    for (const name of VALUE_TENSORS) {
      // f32 losses: eps 1e-3 (1e-2 crosses too many ReLU kinks and BN curvature). The seed keeps
      // every pre-activation clear of a kink within eps (seed 11 puts one in value.fc1 for cells).
      const err = gradError(w.tensors.get(name)!, grads.get(name)!, loss, 16, 1e-3);
      const tol = name === "stem.conv" ? 6e-3 : 2e-3;
      assert.ok(err < tol, `${name}: finite-difference error ${err}`);
      assert.ok(grads.get(name)!.some((v) => v !== 0), `${name}: gradient is all zero`);
    }
    // A pooling backward that sums instead of averaging gives gradients the check rejects.
    const broken = gradsOf(new SumPoolBackward());
    for (const name of ["value.conv", "value.bn.gamma", "stem.conv"]) {
      const err = gradError(w.tensors.get(name)!, broken.get(name)!, loss, 16, 1e-3);
      assert.ok(err > 0.05, `${name}: the broken backward passes (${err})`);
    }
    // The layers after the pooling do not see the backward: their gradients stay right.
    assert.deepEqual(broken.get("value.fc1.w"), grads.get("value.fc1.w"));
  });
}

function close(got: ArrayLike<number>, want: ArrayLike<number>, what: string, tol = 1e-4): void {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol, `${what}[${i}]: ${got[i]}, want ${want[i]}`);
  }
}

for (const cfg of [CFG, CELLS_CFG]) {
  const kind = cfg.cells ? "cells + pool" : "FC + pool";
  Deno.test(`pooled value head (${kind}): FastCpuBackend training and FastInference track the reference`, async () => {
    const w = initWeights(cfg, 21);
    const ref = new CpuNet(w), fast = new CpuNet(w, new FastCpuBackend());
    const hyper = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    for (let s = 0; s < 3; s++) {
      const b = batch(cfg, 6, 30 + s);
      const a = await ref.trainStep(b, hyper), f = await fast.trainStep(b, hyper);
      close([f.policyLoss, f.valueLoss, f.l2], [a.policyLoss, a.valueLoss, a.l2], `step ${s}`);
    }
    const wa: NetWeights = await ref.weights(), wf = await fast.weights();
    for (const [name, t] of wa.tensors) close(wf.tensors.get(name)!.data, t.data, name, 1e-3);
    for (const name of ["value.conv", "value.fc1.w", "value.bn.mean"]) {
      assert.ok(maxDiff(wa.tensors.get(name)!.data, w.tensors.get(name)!.data) > 1e-4, name);
    }
    // FastInference (batch norm folded, channel means of its own) against the reference pass.
    const inf = new FastInference(wa), n = 4, b = batch(cfg, n, 40);
    const out = await new CpuNet(wa).infer(b), per = cfg.planes * HW;
    const moves: number[][] = [], cells: number[][] = [], priors: Float32Array[] = [];
    for (let r = 0; r < n; r++) {
      const mv: number[] = [], cl: number[] = [];
      const t = b.moveCells, tw = b.moveCellsWidth ?? 0;
      for (let j = 0; t && j < tw; j++) {
        const e = (r * tw + j) * 4;
        if (t[e] >= 0) mv.push(t[e]), cl.push(t[e + 1], t[e + 2], t[e + 3]);
      }
      if (!t) { for (let m = 0; m < cfg.moves; m++) if (b.mask[r * cfg.moves + m]) mv.push(m); }
      const pr = new Float32Array(mv.length);
      const v = inf.evaluate(b.planes, r * per, mv, pr, b.moveCells ? cl : undefined);
      close([v], [out.value[r]], `value ${r}`, 1e-5);
      close(pr, mv.map((m) => out.probs[r * cfg.moves + m]), `priors ${r}`);
      moves.push(mv);
      cells.push(cl);
      priors.push(new Float32Array(mv.length));
    }
    const values = new Float32Array(n);
    inf.evaluateBatch(b.planes, 0, n, moves, priors, values, b.moveCells ? cells : undefined);
    close(values, out.value, "batch values", 1e-5);
    assert.ok(Math.max(...out.value) - Math.min(...out.value) > 1e-3, "values differ by position");
    priors.forEach((p, r) =>
      close(p, moves[r].map((m) => out.probs[r * cfg.moves + m]), `batch priors ${r}`)
    );
  });
}

/** Hive-sized tiny nets with the pooled head, BN statistics and biases made non-trivial. */
function hiveWeights(cfg: NetConfig, seed: number): NetWeights {
  const w = initWeights(cfg, seed);
  for (const [name, t] of w.tensors) {
    if (name.endsWith(".mean")) t.data.forEach((_, i) => t.data[i] = 0.1 * ((i % 5) - 2));
    if (name.endsWith(".var")) t.data.forEach((_, i) => t.data[i] = 0.5 + 0.25 * (i % 3));
    if (name.endsWith(".beta")) t.data.forEach((_, i) => t.data[i] = 0.05 * (i % 7) - 0.1);
  }
  return w;
}
const HIVE_POOL: NetConfig = { ...HIVE_NETS.tiny, valuePool: 4 };
const HIVE_CELLS_POOL: NetConfig = {
  ...HIVE_NETS.tiny,
  cells: { ...HIVE_CELLS, hidden: 4 },
  valuePool: 4,
};

Deno.test("pooled value head: SyncHiveNet (fast path) gives ReferenceHiveNet's priors and values on Hive positions", () => {
  for (const cfg of [HIVE_CELLS_POOL, HIVE_POOL]) {
    const w = hiveWeights(cfg, 9);
    const fast = new SyncHiveNet(w), ref = new ReferenceHiveNet(w), batched = new SyncHiveNet(w);
    const g = new HiveGame("Base+MLP"), want: { priors: Float32Array; value: number }[] = [];
    for (const m of WON_ENGINE_GAME.slice(0, 14)) {
      const legal = g.validMoves();
      const a = ref.evaluate(g, legal);
      assertSameEvaluation(a, fast.evaluate(g, legal));
      batched.stage(g, legal);
      want.push(a);
      g.playString(m);
    }
    batched.flush().forEach((e, i) => assertSameEvaluation(want[i], e));
    const vs = want.map((e) => e.value);
    assert.ok(Math.max(...vs) - Math.min(...vs) > 1e-4, `values differ by position: ${vs}`);
  }
});

Deno.test("pooled value head: the value does not depend on where the hive is (the board-wide one does)", async () => {
  // Sparse planes in the middle of the 26 x 26 board, then the same planes moved by (2, 3):
  // far from the edges, the tower's channels move with them and each channel's mean is unchanged.
  const c = HIVE_POOL, hw = c.height * c.width, next = rng(5);
  const a = new Float32Array(c.planes * hw), b = new Float32Array(c.planes * hw);
  for (let p = 0; p < c.planes; p++) {
    for (let y = 9; y < 15; y++) {
      for (let x = 9; x < 15; x++) {
        if (next() < 0.2) {
          a[p * hw + y * c.width + x] = 1;
          b[p * hw + (y + 2) * c.width + x + 3] = 1;
        }
      }
    }
  }
  const pair = new Float32Array([...a, ...b]);
  const pooled = await new CpuNet(hiveWeights(c, 3)).infer({ size: 2, planes: pair });
  assert.ok(Math.abs(pooled.value[0] - pooled.value[1]) < 1e-5, `${pooled.value}`);
  const fast = new FastInference(hiveWeights(c, 3)), pr = new Float32Array(1);
  assert.ok(
    Math.abs(fast.evaluate(pair, 0, [0], pr) - fast.evaluate(pair, hw * c.planes, [0], pr)) < 1e-5,
  );
  const { valuePool: _, ...boardCfg } = c;
  const board = await new CpuNet(hiveWeights(boardCfg, 3)).infer({ size: 2, planes: pair });
  assert.ok(Math.abs(board.value[0] - board.value[1]) > 1e-4, `${board.value}`);
});

Deno.test("pooled value head: model file, checkpoint, warm start and UHP keep it; a head mismatch is an error", async () => {
  const net = new CpuNet(initWeights(CELLS_CFG, 23));
  await net.trainStep(batch(CELLS_CFG, 4, 70), { lr: 0.05, momentum: 0.9, weightDecay: 0 });
  const w = await net.weights();
  const b = batch(CELLS_CFG, 3, 71), want = await net.infer(b);
  const m = decodeHiveModel(encodeHiveModel(w, { name: "pool" }));
  assert.equal(m.weights.config.valuePool, VP);
  assert.deepEqual(m.weights.config, CELLS_CFG);
  const viaModel = await new CpuNet(m.weights).infer(b);
  assert.ok(
    maxDiff(viaModel.value, want.value) < 1e-6 && maxDiff(viaModel.probs, want.probs) < 1e-6,
  );
  const bytes = encodeCheckpoint(w, { step: 1 });
  const c = decodeCheckpoint(bytes, "mem", CELLS_CFG);
  assert.deepEqual(c.weights.config, CELLS_CFG);
  for (const [name, t] of w.tensors) assert.deepEqual(c.weights.tensors.get(name)!.data, t.data);
  const mismatch = (re: RegExp) => (e: unknown) =>
    isKibitzError(e, "shape_mismatch") && re.test(String(e));
  const { valuePool: _, ...boardCfg } = CELLS_CFG;
  assert.throws(
    () => decodeCheckpoint(bytes, "mem", boardCfg),
    mismatch(/value head is pooled \(3 channels\), the model needs board-wide/),
  );
  assert.throws(
    () => decodeCheckpoint(bytes, "mem", { ...CELLS_CFG, valuePool: 4 }),
    mismatch(/value head is pooled \(3 channels\), the model needs pooled \(4 channels\)/),
  );
  const boardBytes = encodeCheckpoint(initWeights(boardCfg, 2), {});
  assert.throws(
    () => decodeCheckpoint(boardBytes, "mem", CELLS_CFG),
    mismatch(/value head is board-wide, the model needs pooled \(3 channels\)/),
  );
  const dir = await Deno.makeTempDir();
  try {
    // A warm start of the other value head is refused, naming both heads and a hint.
    const preset = azPreset("hive-cells-pool-cpu");
    assert.deepEqual(preset.net, hiveCellsPoolCpuPreset().net);
    assert.equal(preset.net.valuePool, 32);
    assert.deepEqual(preset.net.cells, HIVE_CELLS);
    const { valuePool: __, ...boardNet } = preset.net;
    const boardFile = `${dir}/board.kbhz`, poolFile = `${dir}/pool.kbhz`;
    await Deno.writeFile(boardFile, encodeHiveModel(initWeights(boardNet, 4), { name: "b" }));
    await assert.rejects(
      warmStart(`${dir}/run`, boardFile, preset.net),
      mismatch(
        /board-wide value head; this preset needs .*pooled value head \(32 channels\).*use a preset without pool/,
      ),
    );
    await Deno.writeFile(poolFile, encodeHiveModel(initWeights(preset.net, 4), { name: "p" }));
    await assert.rejects(
      warmStart(`${dir}/run`, poolFile, boardNet),
      mismatch(
        /pooled value head \(32 channels\); this preset needs .*board-wide.*hive-cells-pool/,
      ),
    );
    assert.equal(await warmStart(`${dir}/run`, poolFile, preset.net), true);
    // UHP names the head; the engine plays with it.
    const model = await loadUhpModel(poolFile);
    assert.equal(model.name, "p 2x16 cells pool32");
    const e = new UhpEngine(undefined, model);
    assert.match(e.handle("info"), /model p 2x16 cells pool32/);
    e.handle("newgame Base+MLP");
    const reply = e.handle("bestmove depth 1").split("\n");
    assert.equal(reply[1], "ok");
    assert.ok(e.game!.isValid(e.game!.parseMove(reply[0])), reply[0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
