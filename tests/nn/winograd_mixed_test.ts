// Mixed F(7x7)/F(6x6) Winograd tiles (src/nn/winograd_mixed.ts, src/nn/gpu/winograd_mixed.ts): the
// tiling covers every output once, the CPU twin and the GPU kernels match the direct conv (f32 and
// emulated f16 activations, with the fused epilogue), and networks whose large-batch plans run
// them match the CPU reference, before and after a training step.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { deviceHasF16, ensureWinogradTile, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  hardwareCandidates,
  planeOutCandidate,
  stagedCandidate,
  testCandidates,
} from "../../src/nn/gpu/winograd_gemm.ts";
import {
  loadMixedKernels,
  MIXED_TILINGS,
  mixedCandidate,
  mixedCandidates,
  mixedGemmFits,
} from "../../src/nn/gpu/winograd_mixed.ts";
import {
  compareMixed,
  defaultWinogradMixed,
  MIXED_SHAPE,
  parseWinogradMixed,
  pickMixed,
} from "../../src/nn/gpu/winograd_mixed_tune.ts";
import { winogradTuneLog } from "../../src/nn/gpu/winograd_tune.ts";
import { winogradMixedParity } from "../../src/nn/gpu/winograd_mixed_check.ts";
import { sameBits } from "../../src/nn/gpu/winograd_bridge_check.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { CpuNet, GpuNet, type NetOutputs } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { chooseWinograd, winogradGeometry } from "../../src/nn/winograd.ts";
import {
  expectMixedTiling,
  mixedAlpha,
  mixedThreads,
  mixedTiling,
  winogradMixedConv2d,
  winogradMixedSource,
} from "../../src/nn/winograd_mixed.ts";
import { type CpuTensor, cpuTensor } from "../../src/nn/tensor.ts";
import { assertOutputsNear, maxAbs, maxDiff, planLabels, randTensor, relErr } from "./helpers.ts";

// The disk cache off for this module (module state; see winograd_large_tile_test).
setTuneCacheEnabled(false);
const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("the mixed tiling of a 26 x 26 board: 7, 7, 6, 6 a side, 289 slices, every cell once", () => {
  const t = mixedTiling(26, 26)!;
  assert.deepEqual(t.rows, { sevens: 2, sixes: 2 });
  assert.equal(t.alpha, 81 + 72 + 72 + 64);
  assert.equal(t.tiles, 4);
  assert.deepEqual(t.classes.map((k) => [k.mr, k.mc, k.offset, k.y0, k.x0]), [
    [7, 7, 0, 0, 0],
    [7, 6, 81, 0, 14],
    [6, 7, 153, 14, 0],
    [6, 6, 225, 14, 14],
  ]);
  // 10.8 % fewer transformed elements an image than F(7x7).
  const f7 = winogradGeometry(7, 1, 26, 26);
  assert.equal(f7.alpha * f7.tiles, 1296);
  assert.equal(t.classes.reduce((s, k) => s + k.ar * k.ac * k.tiles, 0), 1156);
  for (const [h, w] of [[26, 26], [13, 19], [20, 27]]) {
    const m = mixedTiling(h, w)!;
    const seen = new Uint8Array(h * w);
    for (const k of m.classes) {
      for (let ty = 0; ty < k.th; ty++) {
        for (let tx = 0; tx < k.tw; tx++) {
          for (let r = 0; r < k.mr; r++) {
            for (let c = 0; c < k.mc; c++) {
              seen[(k.y0 + ty * k.mr + r) * w + k.x0 + tx * k.mc + c]++;
            }
          }
        }
      }
    }
    assert.ok(seen.every((v) => v === 1), `${h} x ${w}: every output once`);
    assert.equal(mixedThreads(m, 2, 3), 2 * 3 * m.classes.reduce((s, k) => s + k.tiles, 0));
  }
  // Sides F(7x7) or F(6x6) cover as well, or too small for both sizes: no mixed tiling.
  for (const [h, w] of [[28, 28], [24, 24], [26, 28], [5, 5], [9, 9]]) {
    assert.equal(mixedTiling(h, w), null, `${h} x ${w}`);
    assert.equal(mixedAlpha(h, w), 0);
  }
  assert.throws(() => expectMixedTiling(9, 9), /7s and 6s .* got 9 x 9/);
});

Deno.test("the mixed tiles' CPU twin is the direct conv (f64 transforms)", () => {
  for (const [shape, seed] of [[[2, 8, 26, 26], 1], [[1, 5, 13, 19], 3]] as const) {
    const x = randTensor([...shape], seed), w = randTensor([3, shape[1], 3, 3], seed + 1);
    const want = conv2d(x, w).data;
    const got = winogradMixedConv2d(x, w).data;
    assert.ok(maxDiff(got, want) <= 1e-5 * maxAbs(want), `${shape}`);
  }
  assert.throws(
    () => winogradMixedConv2d(randTensor([1, 2, 9, 9], 1), randTensor([1, 2, 3, 3], 2)),
    /got 9 x 9/,
  );
});

Deno.test("the mixed kernels' source names every class and its slices", () => {
  const src = winogradMixedSource(mixedTiling(26, 26)!);
  for (const e of ["mixed_filter", "mixed_input", "mixed_output"]) {
    assert.ok(src.includes(`fn ${e}(`));
  }
  // The last slice of each class is written by the filter and input transforms and read by the
  // output transform.
  for (const last of [80, 152, 224, 288]) {
    assert.ok(src.includes(`u_out[${last}u * stride + o]`), `U slice ${last}`);
    assert.ok(src.includes(`v_out[${last}u * stride + o]`), `V slice ${last}`);
    assert.ok(src.includes(`mm[${last}u * stride + o]`), `M slice ${last}`);
  }
  assert.ok(!src.includes("u_out[289u"));
  assert.ok(winogradMixedSource(mixedTiling(26, 26)!, "f16").includes("enable f16;"));
});

Deno.test("the winogradMixed policy's values", () => {
  assert.equal(parseWinogradMixed("on"), "on");
  assert.equal(parseWinogradMixed("tuned"), "tuned");
  assert.equal(parseWinogradMixed("off"), "off");
  assert.throws(() => parseWinogradMixed("76"), /KIBITZ_NN_WINO_MIXED must be tuned, on or off/);
  assert.equal(defaultWinogradMixed(""), "tuned");
  assert.equal(defaultWinogradMixed("off"), "off");
  const [plain, , , , half] = testCandidates();
  assert.ok(mixedGemmFits(plain));
  assert.ok(!mixedGemmFits(half), "f16 V/M storage");
  assert.ok(!mixedGemmFits(testCandidates().find((c) => (c.gemm.splits ?? 1) > 1)), "split-K");
  assert.ok(!mixedGemmFits(null));
  // The hardware tilings exist and can run the mixed tiles.
  for (const n of MIXED_TILINGS) {
    assert.ok(mixedGemmFits(hardwareCandidates(false).find((c) => c.name === n)), n);
  }
});

Deno.test("the mixed tiles are timed with the layer's own GEMM first", opts, () => {
  const [, own] = testCandidates();
  const list = mixedCandidates(ctx!, own);
  assert.deepEqual(list[0], own);
  assert.equal(new Set(list.map((c) => c.name)).size, list.length, "no candidate twice");
  // Last, the first one's column-staged twin, and no other staged candidate.
  const last = list[list.length - 1];
  assert.equal(last.gemm, own.gemm);
  assert.ok(last.stagedOut && last.name.startsWith(`${own.name}-c`), last.name);
  assert.equal(list.filter((c) => c.stagedOut || c.stagedIn || c.planeOut).length, 1);
  // The mixed tiles have no staged input or plane-staged output transform.
  const t = mixedTiling(13, 13)!;
  for (const c of [stagedCandidate(own, "i"), stagedCandidate(own, "ic"), planeOutCandidate(own)]) {
    assert.throws(() => loadMixedKernels(ctx!, t, "f32", c), /stage only their output/, c.name);
  }
  assert.deepEqual(mixedCandidate(ctx!, own), own);
  // A candidate with staged transforms brings its GEMM under its plain name.
  const staged = testCandidates().find((c) => c.stagedOut)!;
  const first = mixedCandidate(ctx!, staged);
  assert.equal(first.gemm, staged.gemm);
  assert.ok(!first.stagedOut && staged.name.startsWith(`${first.name}-`), first.name);
  // An f16 V/M candidate cannot run them: the next one in the list does.
  const half = testCandidates().find((c) => c.half)!;
  assert.ok(!mixedCandidates(ctx!, half).includes(half));
  assert.ok(mixedGemmFits(mixedCandidate(ctx!, half)));
});

type Storage = "f32" | "f16-emulated" | "f16";
const storages: Storage[] = [
  "f32",
  "f16-emulated",
  ...(ctx && deviceHasF16(ctx) ? ["f16" as const] : []),
];

for (const storage of storages) {
  Deno.test(
    `the mixed-tile GPU conv matches the direct conv with the fused epilogue, plain and column-staged output (${storage})`,
    opts,
    async () => {
      const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
      const half = storage === "f32" ? null : await loadHalfKernels(ctx!, TEST_TILES, storage);
      const cand = mixedCandidate(ctx!, null);
      const staged = mixedCandidates(ctx!, null).find((c) => c.stagedOut)!;
      assert.deepEqual(staged.gemm, cand.gemm);
      for (const [n, ci, co, h, wd] of [[2, 5, 6, 13, 19], [1, 4, 3, 26, 26], [3, 3, 2, 20, 13]]) {
        const x = randTensor([n, ci, h, wd], 11), w = randTensor([co, ci, 3, 3], 12);
        const bias = randTensor([co], 13), res = randTensor([n, co, h, wd], 14);
        const want = convFused(x, w, bias, res, true).data;
        const t = mixedTiling(h, wd)!;
        const outs: Float32Array[] = [];
        for (const kind of [cand, staged]) {
          const pool = new TensorPool(ctx!);
          const rec = new GpuRecorder(ctx!, kernels, pool, true);
          rec.half = half;
          const k = await loadMixedKernels(ctx!, t, storage, kind);
          const up = (c: CpuTensor) => uploadTensor(ctx!, c.shape, c.data);
          const act = (c: CpuTensor) => half ? rec.toHalf(up(c)) : up(c);
          const u = pool.acquire([t.alpha, co, ci]);
          rec.mixedFilter(up(w), u, k);
          const y = rec.convMixedFused(act(x), u, k, up(bias), act(res), true);
          const labels = rec.ops.map((o) => o.label).filter((l) => l.startsWith("wino."));
          const output = kind.stagedOut ? "output-staged" : "output";
          assert.deepEqual(labels, [
            "wino.mixed.filter",
            ...["input", "gemm", output].map((e) => `wino.mixed.${kind.name}.${e}`),
          ]);
          const out = half ? rec.toFull(y) : y;
          rec.submit();
          const [got] = await readTensors(ctx!, [out]);
          const e = relErr(got, want);
          // f16 storage: x, the residual and y rounded to f16.
          const what = `${n}x${ci}x${h}x${wd}->${co} ${storage} ${kind.name}`;
          assert.ok(e < (half ? 2e-3 : 2e-5), `${what}: ${e}`);
          outs.push(got);
          rec.destroy();
          pool.destroy();
        }
        // The same products and sums in the same order: the same bits where the compiler does
        // not fuse them differently (llvmpipe; hardware compilers may contract into FMAs).
        if (ctx!.report.isFallback) assert.ok(sameBits(outs[0], outs[1]), `${n}x${h}x${wd}`);
      }
    },
  );
}

Deno.test(
  "winogradMixedParity with workgroups of 252 threads (the hardware candidates' -c twin), 26 x 26",
  opts,
  async () => {
    // One case: llvmpipe takes about 12 s to compile the kernel's 1,764 floats of workgroup memory.
    assert.deepEqual(await winogradMixedParity(ctx!, [[2, 3, 3, 26, 26]], 256), []);
  },
);

Deno.test(
  "the mixed tiles are no more wrong than F(7x7) on a 26 x 26 board (f32, 128 channels)",
  opts,
  async () => {
    // The GPU's mixed conv and its F(7x7) and F(4x4) convs (built-in GEMM) on the same sums.
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    const ci = 128, co = 4;
    const x = randTensor([1, ci, 26, 26], 31), w = randTensor([co, ci, 3, 3], 32);
    const zero = cpuTensor([co]), res = cpuTensor([1, co, 26, 26]);
    const want = conv2d(x, w).data;
    const err: Record<string, number> = {};
    for (const m of [4, 7, 0] as const) {
      const pool = new TensorPool(ctx!);
      const rec = new GpuRecorder(ctx!, kernels, pool, true);
      const [gx, gw, gz, gr] = [x, w, zero, res].map((c) => uploadTensor(ctx!, c.shape, c.data));
      let y;
      if (m) {
        await ensureWinogradTile(ctx!, kernels, null, m);
        const u = pool.acquire([(m + 2) ** 2, co, ci]);
        rec.winogradFilter(gw, u, m);
        y = rec.convWinogradFused(gx, u, m, gz, gr, false);
      } else {
        const t = mixedTiling(26, 26)!;
        const k = await loadMixedKernels(ctx!, t, "f32", mixedCandidate(ctx!, null));
        const u = pool.acquire([t.alpha, co, ci]);
        rec.mixedFilter(gw, u, k);
        y = rec.convMixedFused(gx, u, k, gz, gr, false);
      }
      rec.submit();
      const [got] = await readTensors(ctx!, [y]);
      err[m ? `F(${m}x${m})` : "mixed"] = maxDiff(got, want) / maxAbs(want);
      rec.destroy();
      pool.destroy();
    }
    console.log(
      Object.entries(err).map(([k, e]) => `${k} ${e.toExponential(2)}`).join(", ") +
        " of the largest output",
    );
    // Here (llvmpipe): 5.2e-6, 4.4e-5 and 4.4e-5; F(7x7)'s tiles set the mixed tiles' error.
    assert.ok(err.mixed <= 1.25 * err["F(7x7)"] + 1e-6, JSON.stringify(err));
    assert.ok(err.mixed < 1e-4, JSON.stringify(err));
  },
);

// 64 channels on 13 x 13 (7 + 6 a side): F(4x4) covers a board with 16 tiles, so batch 64 (1,024
// tile columns) is past the selection table's threshold and batch 8 is not.
const cfg: NetConfig = {
  blocks: 1,
  filters: 64,
  planes: 4,
  height: 13,
  width: 13,
  moves: 12,
  valueHidden: 16,
};
const big = 64, small = 8;

Deno.test(
  "networks running mixed tiles at large batches match the CPU reference, also after a training step",
  opts,
  async () => {
    assert.equal(chooseWinograd("auto", big, 13, 13, 64, 64), 4);
    assert.equal(chooseWinograd("auto", small, 13, 13, 64, 64), 0);
    const w = initWeights(cfg, 41);
    const cpu = new CpuNet(w);
    const make = (mixed: "on" | "off", f16Emulate = false) =>
      GpuNet.create(ctx!, w, {
        tiled: true,
        tiles: TEST_TILES,
        fused: true,
        winograd6: "off",
        winograd7: "off",
        winogradMixed: mixed,
        f16Emulate,
        winogradGemm: "legacy",
      });
    const [mixed, off, half] = await Promise.all([make("on"), make("off"), make("on", true)]);
    const batch = syntheticBatch(cfg, big, 7);
    // f16-emulated: activations rounded to f16 between layers.
    const check = async (net: GpuNet, what: string, want: NetOutputs) =>
      assertOutputsNear(await net.infer(batch), want, net === half ? 5e-3 : 1e-4, what);
    const want = await cpu.infer(batch);
    await check(mixed, "mixed tiles", want);
    await check(half, "mixed tiles, f16 activations", want);
    const labels = planLabels;
    // The tower's two 64 -> 64 convs run mixed tiles (no bridges, no square-tile transforms); the
    // stem (4 channels in) and batch 8 stay direct; with the policy off the tower runs F(4x4).
    const lm = await labels(mixed, big);
    assert.equal(lm.filter((l) => /^wino\.mixed\..*\.gemm$/.test(l)).length, 2, `${lm}`);
    assert.ok(!lm.some((l) => /^winograd(Input|Output)|^wino\.bridge/.test(l)), `${lm}`);
    assert.ok(!(await labels(mixed, small)).some((l) => l.includes("mixed")));
    assert.ok(!(await labels(off, big)).some((l) => l.includes("mixed")));
    // A training step changes the weights: the mixed filter transforms are made again.
    const step = syntheticBatch(cfg, big, 30), h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    await mixed.trainStep(step, h);
    await cpu.trainStep(step, h);
    await check(mixed, "mixed tiles after a training step", await cpu.infer(batch));
    for (const net of [mixed, off, half]) net.dispose();
  },
);

Deno.test("the tuned policy keeps the layer's tile on software adapters", opts, async () => {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  const shape = { n: 64, ci: 32, co: 32, h: 26, w: 26 };
  if (ctx!.report.isFallback) {
    assert.equal(await pickMixed(ctx!, kernels, null, shape, 4, null, "tuned"), null);
  }
  assert.equal(await pickMixed(ctx!, kernels, null, shape, 4, null, "off"), null);
  assert.equal(await pickMixed(ctx!, kernels, null, { ...shape, h: 9, w: 9 }, 4, null, "on"), null);
  const on = await pickMixed(ctx!, kernels, null, shape, 4, null, "on");
  assert.equal(on?.tiling.alpha, 289);
});

Deno.test("the mixed tiles' comparison times both convs and logs its rows", opts, async () => {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  const shape = { n: 3, ci: 8, co: 8, h: 13, w: 13 };
  const k = await loadMixedKernels(ctx!, mixedTiling(13, 13)!, "f32", mixedCandidate(ctx!, null));
  const r = await compareMixed(ctx!, kernels, null, shape, 7, null, [k]);
  // The batch bucketed to a power of two, as the other tuners'.
  assert.equal(r.shape, `${MIXED_SHAPE}4x8x13x13->8`);
  assert.ok(!r.shape.includes("|"), "the bench prints shapes in tables");
  assert.deepEqual(r.timings.map((t) => t.name), ["F7 legacy", `mixed ${k.candidate.name}`]);
  assert.ok(r.timings.every((t) => t.ms !== null && t.ms > 0));
  assert.ok(r.timings.some((t) => t.name === r.winner));
  assert.ok(winogradTuneLog().includes(r));
  // Once per process: the same question is not timed again.
  assert.equal(await compareMixed(ctx!, kernels, null, { ...shape, n: 4 }, 7, null, [k]), r);
  // The column-staged twin is a row of its own (the tuner's `-c` candidate on hardware).
  const staged = mixedCandidates(ctx!, null).find((c) => c.stagedOut)!;
  const kc = await loadMixedKernels(ctx!, mixedTiling(13, 13)!, "f32", staged);
  const rc = await compareMixed(ctx!, kernels, null, shape, 7, null, [k, kc]);
  assert.deepEqual(rc.timings.map((t) => t.name), [
    ...r.timings.map((t) => t.name),
    `mixed ${staged.name}`,
  ]);
  assert.ok(rc.timings.every((t) => t.ms !== null && t.ms > 0), JSON.stringify(rc.timings));
  // A tiling past the adapter's workgroup memory is a failed row, not a failed comparison
  // (128 x 128 blocks with 16-deep double-buffered slices, padded rows: 33,280 bytes; llvmpipe
  // allows 32,768).
  const big = hardwareCandidates(false).find((c) => c.name === "128x128k16t256rudvp")!;
  const limit = ctx!.device.limits.maxComputeWorkgroupStorageSize;
  if (limit < 33280) {
    const kb = await loadMixedKernels(ctx!, mixedTiling(13, 13)!, "f32", big);
    const r2 = await compareMixed(ctx!, kernels, null, shape, 7, null, [k, kb]);
    const row = r2.timings.find((t) => t.name === `mixed ${big.name}`)!;
    assert.equal(row.ms, null);
    assert.ok(row.error, "the failure's message");
    assert.notEqual(r2.winner, row.name);
  }
});

Deno.test(
  "winogradMixedParity (the browser check's): the transforms around a CPU GEMM give the direct conv",
  opts,
  async () => {
    assert.deepEqual(await winogradMixedParity(ctx!), []);
  },
);
