// The fused Winograd kernels (M kept in the workgroup; V built in the tile load or read from the
// input transform) at test sizes against the CPU twin (winogradConv2d, f64) and the direct
// convolution with the fused epilogue, F(4x4) and F(2x2); the hardware tilings' generation; the
// autotuner timing a fused candidate beside the built-in GEMM; the static traffic model.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder, winoShapeKey } from "../../src/nn/gpu/backend.ts";
import { f16Prelude } from "../../src/nn/gpu/conv_gemm.ts";
import { loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { type GpuTensor, readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  checkWinoFused,
  fusedThreads,
  fusedWorkgroupBytes,
  winogradFusedSource,
  winogradTraffic,
} from "../../src/nn/gpu/winograd_fused.ts";
import {
  type FusedCandidate,
  fusedCandidates,
  fusedTestCandidates,
  loadWinoKernels,
} from "../../src/nn/gpu/winograd_gemm.ts";
import { fusedTuning, LEGACY, tuneWinograd } from "../../src/nn/gpu/winograd_tune.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { winogradConv2d, type WinogradTile } from "../../src/nn/winograd.ts";
import { maxDiff, randTensor, relErr, TINY_TOWER } from "./helpers.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

// These tests time the tuners: results from an earlier run's disk cache would skip the timing.
// The disk cache off for this module (module state: the environment is shared with the test
// modules running beside this one, tune_cache_test among them).
setTuneCacheEnabled(false);
const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("fused Winograd kernels are opt-in for the tuner (KIBITZ_NN_WINO_FUSED=1)", () => {
  const before = Deno.env.get("KIBITZ_NN_WINO_FUSED");
  try {
    Deno.env.delete("KIBITZ_NN_WINO_FUSED");
    assert.equal(fusedTuning(), false);
    Deno.env.set("KIBITZ_NN_WINO_FUSED", "0");
    assert.equal(fusedTuning(), false);
    Deno.env.set("KIBITZ_NN_WINO_FUSED", "1");
    assert.equal(fusedTuning(), true);
  } finally {
    if (before === undefined) Deno.env.delete("KIBITZ_NN_WINO_FUSED");
    else Deno.env.set("KIBITZ_NN_WINO_FUSED", before);
  }
});

Deno.test("fused Winograd tilings: hardware ones fit 256 threads and generate for F(4x4), F(2x2)", () => {
  for (const c of [...fusedCandidates(), ...fusedTestCandidates()]) {
    for (const m of [4, 2] as const) {
      checkWinoFused(c.fused, m);
      assert.ok(fusedThreads(c.fused, m) <= 256, c.name);
      const src = winogradFusedSource(c.fused, m);
      assert.ok(src.includes("fn fused("), c.name);
      assert.equal(src.includes("var<storage, read> x:"), c.fused.input, c.name);
      assert.ok(
        src.startsWith("enable f16;") === false &&
          winogradFusedSource(c.fused, m, "f16").startsWith("enable f16;"),
      );
    }
  }
  const names = fusedCandidates().map((c) => c.name);
  assert.equal(new Set(names).size, names.length, "unique names");
  // 16 x 16 blocks, 2-deep slices: 36 x 2 x 32 floats of slices (9 KiB) within the 16 KiB default.
  assert.equal(fusedWorkgroupBytes(fusedCandidates()[0].fused, 4), 36 * 2 * 32 * 4);
  assert.throws(
    () => checkWinoFused({ rx: 4, ry: 2, gm: 1, gn: 1, bk: 2, input: true }, 4),
    /does not fit/,
  );
});

/** One fused candidate's conv relu(conv + bias + res) at F(m x m) on the GPU. */
async function runFused(
  c: FusedCandidate,
  m: WinogradTile,
  x: CpuTensor,
  w: CpuTensor,
  bias: CpuTensor,
  res: CpuTensor | null,
  halfAct = false,
): Promise<Float32Array> {
  const pool = new TensorPool(ctx!);
  const rec = new GpuRecorder(ctx!, await loadKernels(ctx!, TEST_TILES, "tiled"), pool, true);
  // The f16 plan's path with emulated storage (s16 = f32): the same code as shader-f16's.
  if (halfAct) rec.half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
  const up = (t: CpuTensor, half: boolean): GpuTensor => {
    const g = uploadTensor(ctx!, t.shape, t.data);
    return half ? { ...g, half: true } : g;
  };
  const [gx, gw, gb] = [up(x, halfAct), up(w, false), up(bias, false)];
  const gr = res ? up(res, halfAct) : null;
  const [n, ci, h, wd] = x.shape, co = w.shape[0];
  const u = pool.acquire([(m + 2) * (m + 2), co, ci]);
  rec.winogradFilter(gw, u, m);
  const act = halfAct ? "f16-emulated" : "f32";
  rec.winoChoice.set(winoShapeKey(m, n, ci, co, h, wd), await loadWinoKernels(ctx!, m, act, c));
  const y = rec.convWinogradFused(gx, u, m, gb, gr, res !== null);
  const labels = rec.ops.map((o) => o.label);
  assert.ok(labels.includes(`wino.${c.name}.gemm`), "fused path taken");
  assert.equal(labels.includes(`wino.${c.name}.input`), !c.fused.input, "input transform kernel");
  assert.ok(!labels.some((l) => l.endsWith(".output")), "no output-transform dispatch");
  rec.submit();
  const [got] = await readTensors(ctx!, [y]);
  rec.destroy();
  pool.destroy();
  for (const t of [gx, gw, gb, gr]) t?.buffer.destroy();
  return got;
}

// Odd channel counts (slices that do not divide them), Co past one block, boards whose tiles leave
// partial blocks (7 x 5, 9 x 11), several images.
const CASES = [[2, 6, 11, 6, 6], [1, 5, 3, 7, 5], [2, 9, 10, 9, 11]];
// Hardware adapters (or KIBITZ_TILED_TESTS=1 on a software one: minutes) check the hardware
// tilings too.
const hardware = ctx !== null && (!ctx.report.isFallback || !!Deno.env.get("KIBITZ_TILED_TESTS"));
// Tilings past the adapter's workgroup memory are the tuner's recorded failures, not tested here.
const wgLimit = ctx?.report.limits.maxComputeWorkgroupStorageSize ?? 16384;
const fits = (c: FusedCandidate) => fusedWorkgroupBytes(c.fused, 4) <= wgLimit;
for (const c of [...fusedTestCandidates(), ...(hardware ? fusedCandidates().filter(fits) : [])]) {
  Deno.test(
    `fused Winograd ${c.name} (F(4x4), F(2x2), epilogue) matches the CPU twin`,
    opts,
    async () => {
      for (const [n, ci, co, h, w] of CASES) {
        const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, 3, 3], 2);
        const bias = randTensor([co], 3), res = randTensor([n, co, h, w], 4);
        const want = convFused(x, wt, bias, res, true).data;
        for (const m of [4, 2] as const) {
          const e = relErr(await runFused(c, m, x, wt, bias, res), want);
          assert.ok(e < 1e-4, `${c.name} F(${m}x${m}) ${[n, ci, co, h, w]}: relative error ${e}`);
        }
      }
      // The f16 plan's activations (emulated: f32 storage through the s16 code path), for the
      // first V-in-the-load and the V-buffer candidate.
      if (fusedTestCandidates().slice(0, 2).some((x) => x.name === c.name)) {
        const [n, ci, co, h, w] = CASES[2];
        const x = randTensor([n, ci, h, w], 7), wt = randTensor([co, ci, 3, 3], 8);
        const bias = randTensor([co], 9), res = randTensor([n, co, h, w], 10);
        const want = convFused(x, wt, bias, res, true).data;
        const e = relErr(await runFused(c, 4, x, wt, bias, res, true), want);
        assert.ok(e < 1e-4, `${c.name} f16-emulated activations: relative error ${e}`);
      }
      // No epilogue: the bare conv against the f64 twin.
      const x = randTensor([1, 7, 6, 6], 5), wt = randTensor([5, 7, 3, 3], 6);
      const zero = randTensor([5], 0, 0, 0);
      const got = await runFused(c, 4, x, wt, zero, null);
      assert.ok(relErr(got, winogradConv2d(x, wt, 4).data) < 1e-5, `${c.name} vs twin`);
    },
  );
}

Deno.test(
  "fused Winograd error against the direct convolution at 64 channels (stated)",
  opts,
  async () => {
    // Inputs in [-1, 1], weights in [-0.1, 0.1] (a folded conv's scale), 64 -> 16 channels, 14 x 14.
    const x = randTensor([1, 64, 14, 14], 11), wt = randTensor([16, 64, 3, 3], 12, -0.1, 0.1);
    const zero = randTensor([16], 0, 0, 0);
    const want = conv2d(x, wt).data;
    const c = fusedTestCandidates()[0];
    for (const [m, tol] of [[4, 1e-5], [2, 1e-5]] as const) {
      const e = relErr(await runFused(c, m, x, wt, zero, null), want);
      const twin = relErr(winogradConv2d(x, wt, m).data, want);
      console.log(
        `fused F(${m}x${m}) f32: relative error vs direct ${
          e.toExponential(2)
        } (the f64 twin vs direct: ${twin.toExponential(2)})`,
      );
      assert.ok(e < tol, `F(${m}x${m}): ${e}`);
    }
  },
);

Deno.test("the autotuner times a fused candidate beside the built-in GEMM", opts, async () => {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  const cands = fusedTestCandidates().slice(0, 2);
  const r = await tuneWinograd(ctx!, kernels, null, 4, { n: 1, ci: 8, co: 8, h: 7, w: 7 }, cands);
  assert.deepEqual(r.timings.map((t) => t.name), [LEGACY, ...cands.map((c) => c.name)]);
  for (const t of r.timings) {
    assert.ok(t.ms !== null && t.ms > 0 && t.gemmMs! > 0, `${t.name}: ${t.error}`);
  }
});

Deno.test("traffic model: fusion removes exactly the V and M round trips", () => {
  const s = { n: 2, ci: 8, co: 16, h: 8, w: 8 };
  const [, unf, fo, fio] = winogradTraffic(4, s);
  // F(4x4) on 8 x 8: 4 tiles an image, P = 8, ppad = 128; alpha = 36.
  const vb = 36 * 8 * 128 * 4, mb = 36 * 16 * 128 * 4;
  assert.equal(unf.dramBytes - fo.dramBytes, 2 * mb);
  assert.equal(fo.dramBytes - fio.dramBytes, 2 * vb);
  assert.deepEqual([unf, fo, fio].map((t) => t.dispatches), [3, 2, 1]);
});

Deno.test(
  "the fused GPU network with a forced fused Winograd kernel matches the CPU reference",
  opts,
  async () => {
    const cfg: NetConfig = TINY_TOWER;
    const w = initWeights(cfg, 9);
    const name = fusedTestCandidates()[0].name;
    const net = await GpuNet.create(ctx!, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      winograd: 4,
      winogradGemm: name,
    });
    const batch = syntheticBatch(cfg, 3, 6);
    const want = await new CpuNet(w).infer(batch);
    const got = await net.infer(batch);
    assert.ok(maxDiff(got.probs, want.probs) < 1e-5, "probs");
    assert.ok(maxDiff(got.value, want.value) < 1e-5, "value");
    const labels = (await net.planFor(3, false)).ops.map((o) => o.label);
    assert.ok(labels.includes(`wino.${name}.gemm`), labels.join(" "));
    assert.ok(!labels.some((l) => l.startsWith("winogradOutput")), "no output transforms");
    net.dispose();
  },
);

Deno.test(
  "fused Winograd f16 WGSL type-checks with s16 bound to i32: every activation load and store converts",
  opts,
  async () => {
    // Shader-module validation only (no pipeline build), so the hardware tilings are cheap here.
    for (const c of [...fusedCandidates(), ...fusedTestCandidates()]) {
      for (const m of [4, 2] as const) {
        const src = winogradFusedSource(c.fused, m, "f16-emulated");
        const text = "alias s16 = i32;\n\n" + src.slice(f16Prelude("f16-emulated").length);
        ctx!.device.pushErrorScope("validation");
        const module = ctx!.device.createShaderModule({ code: text, label: c.name });
        const info = await module.getCompilationInfo();
        const err = await ctx!.device.popErrorScope();
        const msgs = info.messages.filter((x) => x.type === "error").map((x) => x.message);
        assert.ok(!err && msgs.length === 0, `${c.name}: ${err?.message ?? msgs.join("; ")}`);
      }
    }
  },
);

Deno.test(
  "training with a forced fused Winograd kernel (forward and input gradient): weights after two steps match the CPU",
  opts,
  async () => {
    const cfg: NetConfig = TINY_TOWER;
    const w = initWeights(cfg, 21);
    const h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    const cpu = new CpuNet(w);
    const name = fusedTestCandidates()[0].name;
    const net = await GpuNet.create(ctx!, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      winograd: 4,
      winogradGemm: name,
    });
    for (let step = 0; step < 2; step++) {
      const b = syntheticBatch(cfg, 3, 40 + step);
      const want = await cpu.trainStep(b, h);
      const got = await net.trainStep(b, h);
      assert.ok(Math.abs(got.loss - want.loss) < 1e-5, `step ${step} loss`);
    }
    const labels = (await net.planFor(3, true)).ops.map((o) => o.label);
    assert.ok(
      labels.includes(`wino.${name}.gemm`),
      `fused kernel in training: ${labels.join(" ")}`,
    );
    const ref = await cpu.weights(), got = await net.weights();
    for (const [k, t] of ref.tensors) {
      const d = maxDiff(got.tensors.get(k)!.data, t.data);
      assert.ok(d < 2e-5, `${k}: ${d}`);
    }
    net.dispose();
  },
);
