// F(6x6) and F(7x7) where the selection table takes F(4x4) (GpuNet's `winograd6` and `winograd7`,
// src/nn/gpu/winograd_tune.ts compareLargeTiles): the comparisons' rows and winners, and networks
// whose large-batch plans take F(6x6) or F(7x7) (made filter transforms, bridges at that tile)
// against the CPU reference before and after training steps, while their small-batch plans stay
// direct.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "../../src/nn/cpu/conv.ts";
import { directShapeKey, GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { ensureWinogradTile, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import {
  hardwareCandidates,
  narrowCandidates,
  testCandidates,
} from "../../src/nn/gpu/winograd_gemm.ts";
import {
  CHAIN_RUNS,
  compareLargeTiles,
  compareSmallBatch,
  compareTrainTiles,
  LARGE_CANDIDATES,
  largeCandidates,
  parseWinograd6,
  parseWinograd7,
  pickLargeBatchWinograd,
  pickTrainTile,
  smallWinoEligible,
  stagedBridgeWinner,
  timeBridgedChain,
  trainTilesOf,
  unbridgedWinner,
  winogradTuneLog,
} from "../../src/nn/gpu/winograd_tune.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { CpuNet, GpuNet, type NetOutputs } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { chooseWinograd } from "../../src/nn/winograd.ts";
import { assertOutputsNear, planLabels, randTensor, relErr, tuneResult } from "./helpers.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";

Deno.env.set("KIBITZ_NN_F16", "0");
// The disk cache off for this module (module state: the environment is shared with the test
// modules running beside this one, tune_cache_test among them).
setTuneCacheEnabled(false);
const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

/** The test kernels and the one f32 test candidate the comparisons are timed with. */
async function tuneSetup() {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  return { kernels, cands: testCandidates().filter((c) => !c.half).slice(0, 1) };
}

Deno.test("the winograd6 policy's values", () => {
  assert.equal(parseWinograd6("tuned"), "tuned");
  assert.equal(parseWinograd6("on"), "on");
  assert.equal(parseWinograd6("off"), "off");
  assert.throws(() => parseWinograd6("6"), /tuned, on or off/);
  assert.equal(parseWinograd7("on"), "on");
  assert.throws(() => parseWinograd7("7"), /KIBITZ_NN_WINO7 must be tuned, on or off/);
});

Deno.test("the large tiles are tuned over F(4x4)'s fastest candidates on the same shape", () => {
  const names = hardwareCandidates(false).map((c) => c.name);
  const ms = [2.0, 0.5, null, 0.7, 0.9, 3.0, 0.6];
  const four = {
    adapter: "test",
    storage: "f32",
    shape: "F4:256x256x26x26->256",
    dims: { n: 256, ci: 256, co: 256, h: 26, w: 26 },
    winner: names[1],
    timer: "test",
    timings: [
      { name: "legacy", ms: 0.1, gemmMs: null },
      ...ms.map((t, i) => ({ name: names[i], ms: t, gemmMs: null })),
    ],
  };
  assert.equal(LARGE_CANDIDATES, 4);
  // The built-in GEMM (always timed) and untimed candidates are not among them.
  assert.deepEqual(largeCandidates(four)!.map((c) => c.name), [1, 6, 3, 4].map((i) => names[i]));
  assert.equal(largeCandidates(null), undefined);
  // Small batches add the 16-column blocks, once each (one of them is already among the best).
  const narrow = narrowCandidates();
  const withNarrow = largeCandidates(four, [narrow[0], narrow[1], narrow[1]])!.map((c) => c.name);
  assert.deepEqual(withNarrow, [
    ...[1, 6, 3, 4].map((i) => names[i]),
    narrow[0].name,
    narrow[1].name,
  ]);
  const best = hardwareCandidates(false).find((c) => c.name === names[1])!;
  assert.equal(largeCandidates(four, [best])!.length, 4);
  // Where the fastest has plane-staged and column-staged output twins (sessions 29, 32), the twins
  // are timed too.
  const fast = { ...four, timings: [{ name: "128x128k8t256ruvp", ms: 0.4, gemmMs: null }] };
  assert.deepEqual(largeCandidates(fast)!.map((c) => c.name), [
    "128x128k8t256ruvp",
    "128x128k8t256ruvp-o",
    "128x128k8t256ruvp-c",
    "128x128k8t256ruvp-i",
    "128x128k8t256ruvp-ic",
  ]);
  assert.ok(largeCandidates(fast)![1].planeOut);
  assert.equal(largeCandidates(fast)![2].stagedOut, 256);
  assert.equal(largeCandidates(fast)![3].stagedIn, 256);
  assert.equal(largeCandidates(fast)![4].stagedOut, 256);
  // A staged twin as the fastest adds its plain base and the base's other twins (session 41: F(4x4)'s
  // four fastest were all column-staged, and F(7x7) never timed the plain tiling).
  const staged = { ...four, timings: [{ name: "128x128k8t256ruvp-ic", ms: 0.4, gemmMs: null }] };
  assert.deepEqual(largeCandidates(staged)!.map((c) => c.name), [
    "128x128k8t256ruvp-ic",
    "128x128k8t256ruvp",
    "128x128k8t256ruvp-o",
    "128x128k8t256ruvp-c",
    "128x128k8t256ruvp-i",
  ]);
  // An f16 V/M candidate (`-h`, which F(7x7) leaves out) first: the twins are the next one's.
  const half = {
    ...four,
    storage: "f16",
    timings: [
      { name: "128x128k8t256ru-h", ms: 0.3, gemmMs: null },
      { name: "128x128k8t256ruvp-i", ms: 0.4, gemmMs: null },
    ],
  };
  assert.deepEqual(largeCandidates(half)!.map((c) => c.name), [
    "128x128k8t256ru-h",
    "128x128k8t256ruvp-i",
    "128x128k8t256ruvp",
    "128x128k8t256ruvp-o",
    "128x128k8t256ruvp-c",
    "128x128k8t256ruvp-ic",
  ]);
});

Deno.test(
  "F(4x4) against F(6x6) and F(7x7): every tile's rows, chained rows decide",
  opts,
  async () => {
    const { kernels, cands } = await tuneSetup();
    const shape = { n: 2, ci: 16, co: 16, h: 12, w: 12, k: 3 };
    const r = await compareLargeTiles(ctx!, kernels, null, shape, cands);
    assert.ok(r);
    assert.deepEqual(r.timings.map((t) => t.name.split(" ")[0]), ["F4", "F6"]);
    for (const t of r.timings) assert.ok(t.ms !== null && t.ms > 0, t.name);
    const fastest = r.timings.reduce((a, b) => (b.ms! < a.ms! ? b : a));
    assert.equal(r.winner, fastest.name);
    // With bridges and F(7x7) too: each tile's chained cost, and where all were timed they decide.
    const b = await compareLargeTiles(ctx!, kernels, null, shape, cands, true, [6, 7]);
    assert.ok(b);
    // Each tile's chained rows: one-thread-a-tile bridges, then column-staged ones (12 x 12 fits).
    assert.deepEqual(b.timings.map((t) => t.name.replace(/^(F[467]) [^ ]+/, "$1")), [
      "F4",
      "F6",
      "F7",
      "F4 in a bridged chain",
      "F4 in a staged-bridged chain",
      "F6 in a bridged chain",
      "F6 in a staged-bridged chain",
      "F7 in a bridged chain",
      "F7 in a staged-bridged chain",
    ]);
    assert.match(b.shape, / F\(4x4\) or F\(6x6\) or F\(7x7\)$/);
    const chained = b.timings.slice(3);
    const all = chained.filter((_, i) => i % 2 === 0).every((t) => t.ms !== null);
    for (const [i, m] of ([4, 6, 7] as const).entries()) {
      const name = b.timings[i].name.slice(3);
      const chain = await timeBridgedChain(ctx!, kernels, null, shape, name, m);
      assert.match(chain.shape, new RegExp(`^F${m}:`));
      // A tower's conv: bridged (three convs of a residual block less one, halved), the same with
      // column-staged bridges, unbridged (alone and with a residual, averaged: the row that
      // competes where every tile has both).
      const [one, res, three, staged] = chain.timings.map((t) => t.ms!);
      assert.equal(chain.timings[3].name, CHAIN_RUNS.staged);
      assert.equal(chained[2 * i].ms, three > one ? (three - one) / 2 : null, `F${m}`);
      if (three > one) {
        assert.equal(chained[2 * i + 1].ms, staged > one ? (staged - one) / 2 : null, `F${m}`);
      }
      if (all) assert.equal(b.timings[i].ms, (one + res) / 2, `F${m} unbridged`);
    }
    // Where every chained cost was timed, unbridged and chained rows decide together (an
    // unbridged winner: the tower runs without bridges, unbridgedWinner).
    const decide = all ? b.timings : b.timings.slice(0, 3);
    assert.equal(b.winner, decide.reduce((x, y) => (y.ms! < x.ms! ? y : x)).name);
    assert.match(b.timer, all ? /lone and chained figures decide/ : /best/);
    assert.equal(unbridgedWinner(b), all && !/bridged chain$/.test(b.winner));
    assert.equal(stagedBridgeWinner(b), all && /in a staged-bridged chain$/.test(b.winner));
    // Software adapters do not tune: the network stays at F(4x4).
    if (ctx!.report.isFallback) {
      assert.equal(await pickLargeBatchWinograd(ctx!, kernels, null, shape), null);
      assert.equal(
        await pickLargeBatchWinograd(ctx!, kernels, null, shape, undefined, true, [6, 7]),
        null,
      );
    }
    // An f16 plan (emulated here) times both tiles' f16-activation kernels, tuned variants included.
    const half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
    const h = await compareLargeTiles(ctx!, kernels, half, shape, cands, true);
    assert.equal(h?.storage, "f16-emulated");
    assert.equal(h?.timings.length, 6);
    for (const t of h!.timings.slice(0, 2)) assert.ok(t.ms !== null && t.ms > 0, t.name);
  },
);

Deno.test(
  "below the table's threshold: direct, F(4x4), F(6x6) and F(7x7), lone and chained",
  opts,
  async () => {
    const { kernels, cands } = await tuneSetup();
    const shape = { n: 2, ci: 16, co: 16, h: 6, w: 6, k: 3 };
    const r = await compareSmallBatch(ctx!, kernels, null, shape, cands, true, [6, 7]);
    assert.deepEqual(r.timings.map((t) => t.name.replace(/^(F[467]) [^ ]+/, "$1")), [
      "direct splits=1",
      "F4",
      "F4 in a bridged chain",
      "F4 in a staged-bridged chain",
      "F6",
      "F6 in a bridged chain",
      "F6 in a staged-bridged chain",
      "F7",
      "F7 in a bridged chain",
      "F7 in a staged-bridged chain",
    ]);
    assert.match(r.shape, /direct or F\(4x4\) or F\(6x6\) or F\(7x7\)$/);
    const timed = r.timings.filter((t) => t.ms !== null);
    assert.equal(r.winner, timed.reduce((a, b) => (b.ms! < a.ms! ? b : a)).name);
    // Without large tiles their rows are not there (what the network asks with both off).
    const four = await compareSmallBatch(ctx!, kernels, null, shape, cands, true);
    assert.ok(!four.timings.some((t) => /^F[67]/.test(t.name)));
  },
);

Deno.test(
  "training's F(4x4) against F(6x6) and F(7x7): three passes a tile, each takes its fastest tile",
  opts,
  async () => {
    const { kernels, cands } = await tuneSetup();
    const shape = { n: 2, ci: 8, co: 16, h: 12, w: 12, k: 3 };
    const r = await compareTrainTiles(ctx!, kernels, shape, cands, [6, 7]);
    assert.ok(r);
    const rows = r.timings.map((t) => t.name.replace(/^(F[467] [a-z ]+?) [^ ]+$/, "$1"));
    assert.deepEqual(
      rows,
      [4, 6, 7].flatMap((m) =>
        ["forward", "input gradient", "weight gradient", "step"].map((p) => `F${m} ${p}`)
      ),
    );
    for (const t of r.timings) assert.ok(t.ms !== null && t.ms > 0, t.name);
    for (const at of [3, 7, 11]) {
      const sum = r.timings.slice(at - 3, at).reduce((a, t) => a + t.ms!, 0);
      assert.ok(Math.abs(r.timings[at].ms! - sum) < 1e-9, r.timings[at].name);
    }
    // Each pass takes its fastest tile, and the winner names the three.
    const tiles = trainTilesOf(r);
    for (const [at, k] of [[0, "forward"], [1, "inputGrad"], [2, "wgrad"]] as const) {
      const ms = [0, 4, 8].map((o) => r.timings[at + o].ms!);
      assert.equal(tiles[k], [4, 6, 7][ms.indexOf(Math.min(...ms))], k);
    }
    assert.equal(
      r.winner,
      `forward F${tiles.forward}, input gradient F${tiles.inputGrad}, weight gradient F${tiles.wgrad}`,
    );
    // Ci != Co: the input gradient is timed on its own shape (16 -> 8), not the forward's.
    for (const m of [4, 6, 7]) {
      assert.ok(winogradTuneLog().some((t) => t.shape === `F${m}:2x16x12x12->8`), `F${m}`);
    }
    // Software adapters do not tune: training stays at F(4x4).
    if (ctx!.report.isFallback) assert.equal(await pickTrainTile(ctx!, kernels, shape), null);
  },
);

Deno.test("training tiles: each pass alone, a large tile only where timed and fastest", () => {
  const row = (name: string, ms: number | null) => ({ name, ms, gemmMs: null });
  const r = tuneResult({
    timings: [
      row("F4 forward a", 2.0),
      row("F4 input gradient a", 2.0),
      row("F4 weight gradient vp", 2.5),
      row("F6 forward b", 1.9),
      row("F6 input gradient b", null),
      row("F6 weight gradient vpu", 2.6),
    ],
  });
  assert.deepEqual(trainTilesOf(r), { forward: 6, inputGrad: 4, wgrad: 4 });
  // F(7x7): slower than F(6x6) in the forward, the fastest input gradient, slower weight gradient.
  r.timings.push(
    row("F7 forward b", 1.95),
    row("F7 input gradient b", 1.8),
    row("F7 weight gradient vp", 2.5),
  );
  assert.deepEqual(trainTilesOf(r), { forward: 6, inputGrad: 7, wgrad: 4 });
});

Deno.test(
  "a training layer with its forward at F(6x6) and its weight gradient at F(4x4) matches the CPU",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    await ensureWinogradTile(ctx!, kernels, null, 6);
    const [n, ci, co, h, w] = [2, 5, 7, 9, 8];
    const x = randTensor([n, ci, h, w], 71), wt = randTensor([co, ci, 3, 3], 72);
    const dy = randTensor([n, co, h, w], 73);
    const pool = new TensorPool(ctx!);
    const rec = new GpuRecorder(ctx!, kernels, pool, true);
    rec.winogradTrain = true;
    rec.winograd = "auto";
    const key = directShapeKey(n, ci, co, h, w, 3, false);
    rec.winoOverride.set(key, 6);
    rec.winoOverride.set(directShapeKey(n, co, ci, h, w, 3, false), 6);
    rec.wgradOverride.set(key, 4);
    const [gx, gw, gdy] = [x, wt, dy].map((t) => uploadTensor(ctx!, t.shape, t.data));
    const y = rec.conv2d(gx, gw);
    const dw = pool.acquire([co, ci, 3, 3]);
    const dx = rec.conv2dBackward(gx, gw, gdy, dw, true)!;
    const labels = rec.ops.map((o) => o.label);
    for (const l of ["winogradOutput6", "winogradDout4", "winogradFilterGrad4"]) {
      assert.ok(labels.includes(l), `${l}: ${labels.join(" ")}`);
    }
    assert.ok(!labels.includes("winogradDout6"), labels.join(" "));
    rec.submit();
    const [gy, gdw, gdx] = await readTensors(ctx!, [y, dw, dx]);
    assert.ok(relErr(gy, conv2d(x, wt).data) < 1e-4, "forward");
    assert.ok(relErr(gdw, conv2dBackwardWeight(x, dy, 3).data) < 1e-4, "weight gradient");
    assert.ok(relErr(gdx, conv2dBackwardInput(dy, wt).data) < 1e-4, "input gradient");
    rec.destroy();
    pool.destroy();
  },
);

// 64 channels on 9 x 9: F(4x4) covers a board with 9 tiles, so batch 114 (1,026 tile columns) is
// past the selection table's threshold and batch 8 is not.
const cfg: NetConfig = {
  blocks: 1,
  filters: 64,
  planes: 4,
  height: 9,
  width: 9,
  moves: 12,
  valueHidden: 16,
};
const big = 114, small = 8;

Deno.test(
  "networks taking F(6x6) or F(7x7) at large batches match the CPU reference, also after training steps",
  opts,
  async () => {
    assert.equal(chooseWinograd("auto", big, 9, 9, 64, 64), 4);
    assert.equal(chooseWinograd("auto", small, 9, 9, 64, 64), 0);
    const w = initWeights(cfg, 21);
    const cpu = new CpuNet(w);
    const make = (tile: 4 | 6 | 7, f16Emulate = false) =>
      GpuNet.create(ctx!, w, {
        tiled: true,
        tiles: TEST_TILES,
        fused: true,
        winograd6: tile === 6 ? "on" : "off",
        winograd7: tile === 7 ? "on" : "off",
        f16Emulate,
        // The built-in GEMM on hardware too (no tuning): the plans' kernel names are fixed, and
        // batch 8 stays direct.
        winogradGemm: "legacy",
      });
    const [six, four, half, seven] = await Promise.all([
      make(6),
      make(4),
      make(6, true),
      make(7),
    ]);
    const batch = syntheticBatch(cfg, big, 6), h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    const labels = planLabels;
    // f16-emulated: activations rounded to f16 between layers.
    const check = async (net: GpuNet, what: string, want: NetOutputs) =>
      assertOutputsNear(await net.infer(batch), want, net === half ? 5e-3 : 1e-4, what);
    const want = await cpu.infer(batch);
    await check(six, "F(6x6)", want);
    await check(half, "F(6x6), f16 activations", want);
    await check(seven, "F(7x7)", want);
    // A training step at the large batch (its forward, input-gradient and weight-gradient convs
    // at the large tile too) changes the weights: the filter transforms are made again.
    const step = syntheticBatch(cfg, big, 30);
    await six.trainStep(step, h);
    await seven.trainStep(step, h);
    await cpu.trainStep(step, h);
    const after = await cpu.infer(batch);
    await check(six, "F(6x6) after a training step", after);
    await check(seven, "F(7x7) after a training step", after);
    // The tower's two 64 -> 64 convs run F(6x6), joined by a bridge; the stem (4 channels in)
    // stays direct; batch 8 stays direct throughout.
    const l6 = await labels(six, big), l4 = await labels(four, big);
    const tower = (l: string[]) =>
      l.filter((x) => /^winograd(Input|Output)H?\d|^wino\.bridge\./.test(x));
    assert.deepEqual(tower(l6), [
      "winogradInput6",
      "wino.bridge.F6.9x9.f32.f32-f32",
      "winogradOutput6",
    ]);
    assert.deepEqual(tower(l4), [
      "winogradInput4",
      "wino.bridge.F4.9x9.f32.f32-f32",
      "winogradOutput4",
    ]);
    assert.deepEqual(tower(await labels(seven, big)), [
      "winogradInput7",
      "wino.bridge.F7.9x9.f32.f32-f32",
      "winogradOutput7",
    ]);
    assert.match(l6[0], /^convForward\w*Fused3$/, "the stem is direct");
    assert.ok(!(await labels(six, small)).some((l) => /wino/i.test(l)), "batch 8 direct");
    assert.deepEqual(tower(await labels(half, big)), [
      "winogradInputH6",
      "wino.bridge.F6.9x9.f16-emulated.f32-f32",
      "winogradOutputH6",
    ]);
    const trainLabels = async (net: GpuNet) =>
      (await net.planFor(big, true)).ops.map((o) => o.label).join(" ");
    const t6 = await trainLabels(six), t4 = await trainLabels(four);
    for (const k of ["winogradInput6", "winogradFilter6", "winogradOutput6", "winogradWgradGemm"]) {
      assert.ok(t6.includes(k), `training at F(6x6): ${k} in ${t6}`);
    }
    assert.ok(!/winograd[A-Za-z]*[67]\b/.test(t4), `training with winograd6, winograd7 off: ${t4}`);
    const t7 = await trainLabels(seven);
    for (const k of ["winogradInput7", "winogradFilter7", "winogradDout7", "winogradFilterGrad7"]) {
      assert.ok(t7.includes(k), `training at F(7x7): ${k} in ${t7}`);
    }
    for (const net of [six, four, half, seven]) net.dispose();
  },
);

Deno.test("small-batch Winograd: the tuner times the stem too (16+ channels in, 64+ out, 49+ tiles)", () => {
  const sh = (n: number, ci: number, co: number) => ({ n, ci, co, h: 26, w: 26, k: 3 });
  // The 19 x 256 model's stem (24 planes in) at batch 256 and 1, and its tower.
  assert.ok(smallWinoEligible(sh(256, 24, 256)));
  assert.ok(smallWinoEligible(sh(1, 24, 256)));
  assert.ok(smallWinoEligible(sh(8, 256, 256)));
  // Too few channels in or out, or too few tiles (a 6 x 6 board: 4 tiles an image).
  assert.ok(!smallWinoEligible(sh(256, 8, 256)));
  assert.ok(!smallWinoEligible(sh(256, 24, 32)));
  assert.ok(!smallWinoEligible({ n: 8, ci: 64, co: 64, h: 6, w: 6, k: 3 }));
});
