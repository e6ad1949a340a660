// The batched evaluator on the GPU network (padded batch sizes) against the CPU reference.
import assert from "node:assert/strict";
import { BatchEvaluator } from "../../src/alphazero/evaluator.ts";
import { connectFourSpec } from "../../src/alphazero/games/connect4.ts";
import { netFor } from "../../src/alphazero/presets.ts";
import { HIVE_NETS, HIVE_SELFPLAY_RULES, HiveAzGame, hiveSpec } from "../../src/alphazero/hive.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const spec = connectFourSpec(5, 4, 4);

/** A one-block, 8-filter Connect Four network's weights and its GPU twin. */
async function tinyConnectNet() {
  const w = initWeights(netFor(spec, { ...NET_PRESETS.tiny, blocks: 1, filters: 8 }), 4);
  return { w, gpu: await GpuNet.create(ctx!, w) };
}

Deno.test({
  name: "evaluator: GPU batches (padded to a power of two) match the CPU network",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { w, gpu } = await tinyConnectNet();
    const cpuEv = new BatchEvaluator(new CpuNet(w), spec, 64);
    const gpuEv = new BatchEvaluator(gpu, spec, 64);
    const games = [[], [2], [2, 2], [0, 1, 2, 3, 4], [4, 4, 4, 0, 1]].map((line) => {
      const g = spec.create();
      for (const m of line) g.play(m);
      return g;
    });
    const a = await Promise.all(games.map((g) => cpuEv.evaluate(g, g.legalMoves())));
    const b = await Promise.all(games.map((g) => gpuEv.evaluate(g, g.legalMoves())));
    for (let i = 0; i < games.length; i++) {
      assert(Math.abs(a[i].value - b[i].value) < 1e-4, `value ${a[i].value} vs ${b[i].value}`);
      a[i].priors.forEach((p, k) => assert(Math.abs(p - b[i].priors[k]) < 1e-4));
    }
    assert.equal(gpuEv.stats.batches, 1);
    // Two batches in flight at once (sizes 3 and 5: different padded plans) still match.
    const two = new BatchEvaluator(gpu, spec, 64, 2);
    const early = games.slice(0, 3).map((g) => two.evaluate(g, g.legalMoves()));
    two.flush();
    const late = games.map((g) => two.evaluate(g, g.legalMoves()));
    two.flush();
    const c = [...await Promise.all(early), ...await Promise.all(late)];
    const want = [...a.slice(0, 3), ...a];
    c.forEach((e, i) => assert(Math.abs(e.value - want[i].value) < 1e-4));
    assert.equal(two.stats.batches, 2);
    two.close();
    cpuEv.close();
    gpuEv.close();
    gpu.dispose();
  },
});

Deno.test({
  name: "evaluator: a cells-head Hive net on the GPU (move tables, padded rows) matches the CPU",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const hive = hiveSpec();
    const w = initWeights(netFor(hive, HIVE_NETS["cells-tiny"]), 5);
    const gpu = await GpuNet.create(ctx!, w);
    const cpuEv = new BatchEvaluator(new CpuNet(w), hive, 16);
    const gpuEv = new BatchEvaluator(gpu, hive, 16);
    // Three positions (padded to 8 on the GPU), two of them seen through symmetries.
    const games = [0, 6, 14].map((plies, i) => {
      const g = new HiveAzGame(randomGame("Base+MLP", plies, 3 + i), HIVE_SELFPLAY_RULES, i * 5);
      return g;
    });
    const a = await Promise.all(games.map((g) => cpuEv.evaluate(g, g.legalMoves())));
    const b = await Promise.all(games.map((g) => gpuEv.evaluate(g, g.legalMoves())));
    for (let i = 0; i < games.length; i++) {
      assert(Math.abs(a[i].value - b[i].value) < 1e-4, `value ${a[i].value} vs ${b[i].value}`);
      a[i].priors.forEach((p, k) => assert(Math.abs(p - b[i].priors[k]) < 1e-4, `prior ${k}`));
    }
    assert.equal(gpuEv.stats.batches, 1);
    cpuEv.close();
    gpuEv.close();
    gpu.dispose();
  },
});

Deno.test({
  name: "evaluator: prepare records the plan of every padded batch size before the first call",
  ignore: !ctx,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { gpu } = await tinyConnectNet();
    const ev = new BatchEvaluator(gpu, spec, 40);
    assert.deepEqual(gpu.planKeys(), []);
    const s = await ev.prepare();
    assert(s > 0);
    assert.deepEqual(gpu.planKeys().sort(), ["infer:16", "infer:32", "infer:40", "infer:8"]);
    // A batch of 3 (padded to 8) and one of 20 (padded to 32) record nothing new.
    const g = spec.create();
    await Promise.all([0, 1, 2].map(() => ev.evaluate(g, g.legalMoves())));
    const many = Array.from({ length: 20 }, () => ev.evaluate(g, g.legalMoves()));
    await Promise.all(many);
    assert.equal(gpu.planKeys().length, 4);
    assert.equal(ev.stats.batches, 2);
    ev.close();
    gpu.dispose();
  },
});
