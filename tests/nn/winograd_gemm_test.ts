// The Winograd GEMM variants (every generator path, at 16-thread test sizes) against the CPU direct
// convolution with the fused epilogue; f16 V/M storage against its CPU twin; the autotuner's
// machinery (times every candidate, keeps the fastest; forced names; unknown names); and the
// fused network with a forced variant against the CPU reference.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { conv2d, conv2dBackwardWeight } from "../../src/nn/cpu/conv.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { f16round } from "../../src/nn/f16.ts";
import {
  directShapeKey,
  GpuRecorder,
  wgradTileOf,
  winoShapeKey,
} from "../../src/nn/gpu/backend.ts";
import { ensureWinogradTile, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { type GpuTensor, readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  checkWinoGemm,
  gemmBlock,
  type GemmCandidate,
  hardwareCandidates,
  loadWgradVariant,
  loadWinoKernels,
  narrowCandidates,
  needsF16Plan,
  splitCandidate,
  splitCandidates,
  stagedCandidate,
  testCandidates,
  variantColumns,
  WGRAD_VARIANTS,
  type WinoCandidate,
  winoGemmGroups,
  winoGemmWorkgroupBytes,
  winogradGemmSource,
} from "../../src/nn/gpu/winograd_gemm.ts";
import {
  CHAIN_RUNS,
  compareSmallBatch,
  defaultCandidates,
  directOptions,
  halfTwin,
  LEGACY,
  pickWgradKernel,
  pickWinoKernels,
  splitTuned,
  timeBridgedChain,
  tuneDirectSplits,
  tuneWgrad,
  tuneWinograd,
} from "../../src/nn/gpu/winograd_tune.ts";
import { stagedColumns } from "../../src/nn/gpu/winograd_staged.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import {
  outputPlanesPerGroup,
  winogradConv2d,
  winogradConv2dF16Products,
  winogradGeometry,
  type WinogradTile,
} from "../../src/nn/winograd.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { maxDiff, randTensor, relErr, TINY_TOWER } from "./helpers.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

// These tests time the tuners: results from an earlier run's disk cache would skip the timing.
// The disk cache off for this module (module state: the environment is shared with the test
// modules running beside this one, tune_cache_test among them).
setTuneCacheEnabled(false);
const ctx = await getGpu();

/** The tuner's winner is its fastest timing. */
function assertFastestWins(r: { winner: string; timings: { name: string; ms: number | null }[] }) {
  const fastest = r.timings.reduce((a, b) => (b.ms! < a.ms! ? b : a));
  assert.equal(r.winner, fastest.name);
}
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("every hardware and test variant fits its threads and generates its kernel", () => {
  const every = [...hardwareCandidates(true), ...splitCandidates(), ...testCandidates()];
  for (const c of every) {
    checkWinoGemm(c.gemm);
    const src = winogradGemmSource(c.gemm, c.half ? "f16" : "f32");
    assert.ok(src.includes("fn gemm("), c.name);
    assert.equal(src.startsWith("enable f16;"), needsF16Plan(c), c.name);
    assert.equal(src.split("enable f16;").length, needsF16Plan(c) ? 2 : 1, `${c.name}: one enable`);
  }
  // The f16-product variants' emulated text (software adapters) has no f16 at all.
  for (const c of testCandidates().filter((c) => c.gemm.f16k && !c.half)) {
    const src = winogradGemmSource(c.gemm, "f32", "f16-emulated");
    assert.ok(src.startsWith("alias h16 = f32;") && !src.includes("enable f16"), c.name);
  }
  // Names say what is new: vec4 U loads (v), padded A rows (p), f16 products in chunks (fN).
  const hw = hardwareCandidates(true).map((c) => c.name);
  for (const n of ["128x128k8t256rudvp", "256x128k8t256rudvp", "128x128k8t256rudvpf4"]) {
    assert.ok(hw.includes(n), n);
  }
  // The 16-column blocks (session 28) are hardware candidates, and have a test twin.
  assert.deepEqual(narrowCandidates().map((c) => c.name), ["64x16k16t64ruvp", "32x16k32t32ruvp"]);
  for (const c of narrowCandidates()) assert.ok(hw.includes(c.name), c.name);
  assert.ok(testCandidates().some((c) => c.name === "32x16k8t32ruvp"), "the narrow twin");
  assert.ok(hardwareCandidates(false).every((c) => !needsF16Plan(c)), "f32 plans: f32 only");
  // The workgroup memory the kernels declare, and every hardware variant within 48 KiB.
  for (const c of every) {
    const src = winogradGemmSource(c.gemm, c.half ? "f16" : "f32");
    const bytes = [...src.matchAll(/var<workgroup> \w+: array<vec4<(\w+)>, (\d+)>/g)]
      .reduce((sum, m) => sum + Number(m[2]) * (m[1] === "h16" ? 8 : 16), 0);
    assert.equal(winoGemmWorkgroupBytes(c.gemm), bytes, c.name);
    assert.ok(bytes <= 48 * 1024, `${c.name}: ${bytes} bytes`);
  }
  assert.throws(() => checkWinoGemm({ ...testCandidates()[0].gemm, f16k: 3 }), /does not fit/);
  assert.throws(
    () => checkWinoGemm({ ...testCandidates()[0].gemm, bk: 6, wx: 2, wy: 2, vecA: true }),
    /does not fit/,
  );
  const names = [...hardwareCandidates(true), ...splitCandidates()].map((c) => c.name);
  assert.equal(new Set(names).size, names.length, "unique names");
  // Split-K twins (session 30): named by their partials, tuned only where few tiles fill the GPU.
  assert.deepEqual(splitCandidates().map((c) => c.name).slice(0, 2), [
    "32x64k32t128ruvps2",
    "32x64k32t128ruvps4",
  ]);
  assert.ok(splitCandidates().every((c) => !hw.includes(c.name) && !needsF16Plan(c)));
  assert.ok(splitTuned(4, { n: 1, ci: 256, co: 256, h: 26, w: 26 }), "batch 1");
  assert.ok(splitTuned(7, { n: 8, ci: 256, co: 256, h: 26, w: 26 }), "batch 8 at F(7x7)");
  assert.ok(!splitTuned(4, { n: 16, ci: 256, co: 256, h: 26, w: 26 }), "batch 16");
  const tuned = (n: number) =>
    defaultCandidates(false, 4, { n, ci: 256, co: 256, h: 26, w: 26 }).map((c) => c.name);
  assert.ok(tuned(1).includes("32x64k32t128ruvps4") && tuned(1).includes(hw[0]), "batch 1");
  assert.ok(!tuned(16).some((c) => /s\d$/.test(c)), "batch 16: no split-K candidates");
  assert.throws(() => checkWinoGemm({ ...testCandidates()[0].gemm, splits: 1 }), /does not fit/);
  assert.deepEqual(
    winoGemmGroups(splitCandidates()[1].gemm, 256, 64, 36),
    [8, 1, 144],
    "z: alpha x splits",
  );
  assert.throws(() => checkWinoGemm({ ...testCandidates()[0].gemm, bk: 3 }), /does not fit/);
});

/** The Winograd conv of one candidate (emulated f16 storage for `half` ones): relu(conv + b + r). */
async function runVariant(
  c: WinoCandidate,
  m: WinogradTile,
  x: CpuTensor,
  w: CpuTensor,
  bias: CpuTensor,
  res: CpuTensor,
): Promise<Float32Array> {
  const pool = new TensorPool(ctx!);
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  await ensureWinogradTile(ctx!, kernels, null, m);
  const rec = new GpuRecorder(ctx!, kernels, pool, true);
  const f16 = needsF16Plan(c);
  if (f16) rec.half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
  const act = f16 ? "f16-emulated" : "f32";
  const up = (t: CpuTensor, half: boolean): GpuTensor => {
    const g = uploadTensor(ctx!, t.shape, t.data);
    return half ? { ...g, half: true } : g;
  };
  const gx = up(x, f16), gr = up(res, f16), gw = up(w, false), gb = up(bias, false);
  const [n, ci, h, wd] = x.shape, co = w.shape[0];
  const u = pool.acquire([(m + 2) * (m + 2), co, ci]);
  rec.winogradFilter(gw, u, m);
  rec.winoChoice.set(winoShapeKey(m, n, ci, co, h, wd), await loadWinoKernels(ctx!, m, act, c));
  const y = rec.convWinogradFused(gx, u, m, gb, gr, true);
  const gemmOp = rec.ops.find((o) => o.label === `wino.${c.name}.gemm`);
  assert.ok(gemmOp, "variant path taken");
  // The tile columns are padded to the variant's block width, not to 128.
  const { alpha, p } = winogradGeometry(m, n, h, wd);
  assert.deepEqual(
    gemmOp.groups,
    winoGemmGroups(c.gemm!, co, variantColumns(c.gemm!, p), alpha),
    "GEMM grid",
  );
  assert.ok(variantColumns(c.gemm!, p) < p + gemmBlock(c.gemm!).bn);
  const planes = rec.ops.some((o) => o.label === `wino.${c.name}.output-planes`);
  assert.equal(
    planes,
    !!c.planeOut,
    "the plane-staged output transform where the candidate has it",
  );
  const staged = rec.ops.some((o) => o.label === `wino.${c.name}.output-staged`);
  assert.equal(
    staged,
    !!c.stagedOut,
    "the column-staged output transform where the candidate has it",
  );
  const stagedIn = rec.ops.some((o) => o.label === `wino.${c.name}.input-staged`);
  assert.equal(stagedIn, !!c.stagedIn, "the column-staged input transform where it has it");
  rec.submit();
  const [got] = await readTensors(ctx!, [y]);
  rec.destroy();
  pool.destroy();
  for (const t of [gx, gw, gb, gr]) t.buffer.destroy();
  return got;
}

// Odd channel counts (not multiples of 4 or of the slice), Co past one row block, boards whose
// tiles leave partial column blocks.
// Ci = 12 takes the vec4 path of the `v` variants' U loads, the others their scalar path.
const CASES = [[2, 6, 70, 6, 6], [1, 5, 3, 7, 5], [2, 19, 20, 9, 11], [1, 12, 37, 6, 7]];
// Hardware adapters (or KIBITZ_TILED_TESTS=1 on a software one: minutes) check the hardware-size
// variants too; their f16 V/M ones run emulated here, so they match f32 as closely.
const hardware = ctx !== null && (!ctx.report.isFallback || !!Deno.env.get("KIBITZ_TILED_TESTS"));
// The training test's tiles: the hardware ones where those variants are checked too.
const netTiles = hardware ? HARDWARE_TILES : TEST_TILES;
// Variants past the device's workgroup memory (llvmpipe: 32 KiB) do not compile there: skipped.
const wgLimit = ctx?.device.limits.maxComputeWorkgroupStorageSize ?? 0;
for (
  const c of [
    ...testCandidates(),
    ...(hardware ? [...hardwareCandidates(true), ...splitCandidates()] : []),
  ]
) {
  Deno.test(
    `Winograd GEMM variant ${c.name} (F(4x4) and F(2x2), fused epilogue) matches CPU`,
    // f16 variants run emulated here (f32 tiles under the f16 text).
    { ...opts, ignore: !ctx || winoGemmWorkgroupBytes(c.gemm, needsF16Plan(c)) > wgLimit },
    async () => {
      for (const [n, ci, co, h, w] of CASES) {
        const x = randTensor([n, ci, h, w], 1), wt = randTensor([co, ci, 3, 3], 2);
        const bias = randTensor([co], 3), res = randTensor([n, co, h, w], 4);
        const want = convFused(x, wt, bias, res, true).data;
        for (const m of [4, 2] as const) {
          const e = relErr(await runVariant(c, m, x, wt, bias, res), want);
          assert.ok(e < 1e-4, `${c.name} F(${m}x${m}) ${[n, ci, co, h, w]}: relative error ${e}`);
        }
      }
    },
  );
}

// Batch 1 on 26 x 26 at F(7x7): 16 tiles, one 16-column block (no padded columns), and at F(4x4)
// 49 tiles in four blocks, the last partial; the hardware-size 16-column blocks too where checked.
const narrow = [
  ...testCandidates().filter((c) => c.name === "32x16k8t32ruvp"),
  ...(hardware ? narrowCandidates() : []),
];
/** Each candidate at F(7x7) and F(4x4) on a batch-1 26 x 26 board, ci channels to 36, against the CPU. */
async function checkBatchOne(cands: WinoCandidate[], ci: number, seed: number): Promise<void> {
  const x = randTensor([1, ci, 26, 26], seed), wt = randTensor([36, ci, 3, 3], seed + 1);
  const bias = randTensor([36], seed + 2), res = randTensor([1, 36, 26, 26], seed + 3);
  const want = convFused(x, wt, bias, res, true).data;
  for (const c of cands) {
    for (const m of [7, 4] as const) {
      const e = relErr(await runVariant(c, m, x, wt, bias, res), want);
      assert.ok(e < 2e-4, `${c.name} F(${m}x${m}): relative error ${e}`);
    }
  }
}

Deno.test(
  "16-column GEMM blocks at F(7x7) and F(4x4) on a batch-1 26 x 26 board match CPU",
  opts,
  async () => {
    assert.ok(narrow.length >= 1);
    await checkBatchOne(narrow, 8, 21);
  },
);

// Split-K GEMMs (session 30) where they run: batch 1 on 26 x 26, F(4x4) and F(7x7), 40 channels in
// (uneven chunks, and an empty last partial in 4 and 8 with 16-deep slices); the hardware-size
// ones where checked.
const splits = [
  ...testCandidates().filter((c) => c.gemm?.splits),
  ...(hardware ? splitCandidates() : []),
];
Deno.test("split-K GEMMs on a batch-1 26 x 26 board match CPU", opts, async () => {
  assert.ok(splits.length >= 2);
  await checkBatchOne(splits, 40, 41);
});

// The plane-staged output transform (`-o` candidates, session 29) against the same GEMM with the
// one-thread-a-tile output transform: one plane a workgroup on 26 x 26 at every tile, five on
// 14 x 14 at F(7x7), and a last workgroup with fewer planes (5 x 7 planes at F(7x7) on 14 x 14).
Deno.test("the plane-staged output transform equals the one-thread-a-tile one", opts, async () => {
  const twin = testCandidates().find((c) => c.planeOut)!;
  const base = testCandidates().find((c) => c.name === twin.name.replace(/-o$/, ""))!;
  assert.ok(base && !base.planeOut);
  assert.deepEqual(
    [[7, 26], [6, 26], [4, 26], [2, 26], [7, 14], [4, 64]].map(([m, s]) =>
      outputPlanesPerGroup(m as WinogradTile, s, s)
    ),
    [1, 1, 1, 1, 5, 0],
  );
  for (const [m, n, ci, co, s] of [[7, 1, 6, 5, 26], [6, 1, 6, 5, 26], [7, 5, 4, 7, 14]] as const) {
    const x = randTensor([n, ci, s, s], 31), wt = randTensor([co, ci, 3, 3], 32);
    const bias = randTensor([co], 33), res = randTensor([n, co, s, s], 34);
    const a = await runVariant(twin, m, x, wt, bias, res);
    const b = await runVariant(base, m, x, wt, bias, res);
    // Hardware compilers may fuse the epilogue's add into the transform's last product in one
    // kernel and not the other.
    const tol = ctx!.report.isFallback ? 0 : 1e-6;
    assert.ok(relErr(a, b) <= tol, `F(${m}x${m}) ${s} x ${s}: ${relErr(a, b)}`);
    const want = convFused(x, wt, bias, res, true).data;
    assert.ok(relErr(a, want) < 2e-4, `F(${m}x${m}) against the CPU: ${relErr(a, want)}`);
  }
});

// The column-staged transforms (`-c` output, `-i` input, `-ic` both; session 32) against the same
// GEMM with the one-thread-a-tile transforms: every tile; a last block of tile columns cut short
// (5 x 16 tiles at F(7x7) on 26 x 26 = 80 columns, 7 a block; 28 with the hardware's 256 threads);
// 14 x 14 boards; split-K partials added as they are read; f16 storage (emulated).
Deno.test("the column-staged transforms equal the one-thread-a-tile ones", opts, async () => {
  const twins = testCandidates().filter((c) => c.stagedOut || c.stagedIn) as GemmCandidate[];
  assert.deepEqual(twins.map((c) => c.name.replace(/^.*-/, "")), ["c64", "i64", "ic64"]);
  const base = testCandidates().find((c) => c.name === twins[0].name.replace(/-c64$/, ""))!;
  assert.ok(base && !base.stagedOut && !base.stagedIn);
  assert.deepEqual(
    ([7, 6, 4, 2] as const).map((m) => stagedColumns(m, 64) * (m + 2)),
    [63, 64, 60, 64],
  );
  const split = splitCandidate(base as GemmCandidate, 2);
  const half = halfTwin(base) as GemmCandidate;
  const cases = [
    [7, 5, 6, 5, 26],
    [6, 1, 6, 5, 26],
    [4, 2, 6, 9, 26],
    [2, 1, 5, 3, 26],
    [7, 5, 4, 7, 14],
    [4, 3, 4, 7, 14],
  ] as const;
  const over: string[] = [];
  for (const [m, n, ci, co, s] of cases) {
    const x = randTensor([n, ci, s, s], 51), wt = randTensor([co, ci, 3, 3], 52);
    const bias = randTensor([co], 53), res = randTensor([n, co, s, s], 54);
    const pairs: [WinoCandidate, WinoCandidate][] = twins.map((t) => [t, base]);
    if (m === 7 || m === 4) {
      pairs.push([stagedCandidate(split, "ic", 64), split]);
      pairs.push([stagedCandidate(half, "ic", 64), half]);
    }
    // The hardware candidates' 256-thread workgroups (28 and 42 tile columns a block) where the
    // hardware-size variants are checked: llvmpipe takes about 40 s to compile the F(7x7) ones.
    if (hardware && s === 26) pairs.push([stagedCandidate(base as GemmCandidate, "ic"), base]);
    for (const [t, b] of pairs) {
      const got = await runVariant(t, m, x, wt, bias, res);
      const want = await runVariant(b, m, x, wt, bias, res);
      // Hardware compilers may fuse a product and a sum into one rounding in one kernel and not
      // the other, and F(6x6)'s and F(7x7)'s transforms magnify it (6.5e-6 at F(7x7) on an H200,
      // session 41); every case is checked before the test fails, so a run shows all the figures.
      const tol = ctx!.report.isFallback ? 0 : 2e-5;
      const e = relErr(got, want);
      if (e > tol) over.push(`${t.name} F(${m}x${m}) ${[n, ci, co, s]}: ${e.toExponential(2)}`);
      const cpu = convFused(x, wt, bias, res, true).data;
      // f16 V and M (the `-h` twin): F(7x7)'s transforms magnify their rounding.
      const bound = t.half ? 2e-2 : 2e-4;
      assert.ok(
        relErr(got, cpu) < bound,
        `${t.name} F(${m}x${m}) against the CPU: ${relErr(got, cpu)}`,
      );
    }
  }
  assert.deepEqual(over, []);
});

Deno.test("f16 storage of V and M: the CPU twin's error against the direct conv (documented tolerance)", () => {
  // 64 channels, 14 x 14, inputs in [-1, 1], weights in [-0.1, 0.1] (folded-conv scale): the f16
  // rounding of V and M costs 1.1e-2 of the output's scale in F(4x4) (its transforms have
  // coefficients up to 8; V alone 7.6e-3, M alone 7.2e-3) and 5.8e-4 in F(2x2), against 3.3e-4
  // for f16 storage of x and w in the direct conv: tolerances 2e-2 and 1e-3.
  const x = randTensor([1, 64, 14, 14], 11), wt = randTensor([64, 64, 3, 3], 12, -0.1, 0.1);
  const want = conv2d(x, wt).data;
  for (const [m, tol] of [[4, 2e-2], [2, 1e-3]] as const) {
    const exact = relErr(winogradConv2d(x, wt, m).data, want);
    const e = relErr(winogradConv2d(x, wt, m, f16round).data, want);
    console.log(`F(${m}x${m}) V, M in f16: relative error ${e.toExponential(2)} (f64: ${exact})`);
    assert.ok(e < tol && e > exact, `F(${m}x${m}): ${e}`);
  }
});

Deno.test("f16 products (fN variants): the CPU twin's error against the direct conv, by chunk", () => {
  // The f16-product twin without any rounding is the Winograd conv itself.
  const xs = randTensor([1, 6, 7, 6], 13), ws = randTensor([5, 6, 3, 3], 14);
  const none = (v: number) => v;
  for (const m of [4, 2] as const) {
    const e = relErr(
      winogradConv2dF16Products(xs, ws, m, 4, none).data,
      winogradConv2d(xs, ws, m).data,
    );
    assert.ok(e < 1e-6, `F(${m}) twin without rounding: ${e}`);
  }
  // 64 channels, 14 x 14, inputs in [-1, 1], weights in [-0.1, 0.1] (as the f16 V/M test). F(4x4):
  // 1.09e-2 with f16 sums of one product (the f16 rounding of U and V alone: the transforms'
  // coefficients up to 8 amplify it), 1.25e-2 in chunks of 4, 1.50e-2 of 8, 2.06e-2 of 16, 4.1e-2
  // summing all 64 in f16; F(2x2): 7.4e-4 to 1.4e-3. f16 storage of x and w in the direct conv:
  // 3.3e-4. So no chunk keeps F(4x4) within the f16 mode's tolerance (one f16 step, 2^-10, per
  // conv): the fN variants are opt-in with the f16 V/M ones (2e-2), chunks of 4 and 8 only.
  const x = randTensor([1, 64, 14, 14], 11), wt = randTensor([64, 64, 3, 3], 12, -0.1, 0.1);
  const want = conv2d(x, wt).data;
  const err = (m: WinogradTile, chunk: number) =>
    relErr(winogradConv2dF16Products(x, wt, m, chunk, f16round).data, want);
  const e4 = [1, 4, 8, 16].map((c) => err(4, c));
  console.log(
    `F(4x4) f16 products, chunks 1/4/8/16: ${e4.map((e) => e.toExponential(2)).join(" / ")}`,
  );
  assert.ok(e4[1] < 2e-2 && e4[2] < 2e-2, `chunks 4 and 8 within the f16 V/M tolerance: ${e4}`);
  assert.ok(e4[0] > 5e-3 && e4[3] > e4[1], `the U/V rounding dominates, long chunks add: ${e4}`);
  const e2 = err(2, 4);
  console.log(`F(2x2) f16 products, chunks of 4: ${e2.toExponential(2)}`);
  assert.ok(e2 < 2e-3, `F(2x2): ${e2}`);
  // Every hardware fN variant's chunk is one of those checked.
  for (const c of hardwareCandidates(true).filter((c) => c.gemm.f16k)) {
    assert.ok([4, 8].includes(c.gemm.f16k!), c.name);
  }
});

Deno.test(
  "Winograd variants with f16 V/M on shader-f16 hardware: within the f16 tolerance of the direct conv",
  { ...opts, ignore: !ctx || !ctx.device.features.has("shader-f16") },
  async () => {
    const x = randTensor([1, 64, 14, 14], 11), wt = randTensor([64, 64, 3, 3], 12, -0.1, 0.1);
    const zero = randTensor([64], 0, 0, 0), res = randTensor([1, 64, 14, 14], 0, 0, 0);
    const want = conv2d(x, wt).data;
    for (const c of hardwareCandidates(true).filter(needsF16Plan)) {
      const pool = new TensorPool(ctx!);
      const rec = new GpuRecorder(ctx!, await loadKernels(ctx!, undefined, "tiled"), pool, true);
      const u = pool.acquire([36, 64, 64]);
      const [gx, gw, gb, gr] = [x, wt, zero, res].map((t) => uploadTensor(ctx!, t.shape, t.data));
      rec.winogradFilter(gw, u, 4);
      rec.winoChoice.set(
        winoShapeKey(4, 1, 64, 64, 14, 14),
        await loadWinoKernels(ctx!, 4, "f32", c),
      );
      const y = rec.convWinogradFused(gx, u, 4, gb, gr, false);
      rec.submit();
      const [got] = await readTensors(ctx!, [y]);
      const e = relErr(got, want);
      console.log(`${c.name}: relative error against the direct conv ${e.toExponential(2)}`);
      assert.ok(e < 2e-2, `${c.name}: ${e}`);
      if (c.gemm.f16k) {
        // Against its CPU twin (same f16 roundings and chunks; the GPU's transforms run in f32).
        // On an H100 (2026-11-26) the fN kernel was 1.07e-2 from its twin and 1.33e-2 from the
        // direct conv: the twin does not reproduce the hardware's f16 rounding order, so this
        // bounds the distance (opt-in kernels) rather than asserting bit-level agreement.
        const twin = winogradConv2dF16Products(
          x,
          wt,
          4,
          c.gemm.f16k,
          f16round,
          c.half ? f16round : (v) => v,
        );
        const et = relErr(got, twin.data);
        console.log(`${c.name}: against its f16-product twin ${et.toExponential(2)}`);
        assert.ok(et < 2e-2, `${c.name} against its twin: ${et}`);
      }
      rec.destroy();
      pool.destroy();
    }
  },
);

Deno.test(
  "the autotuner times the built-in GEMM and every candidate and keeps the fastest",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    const cands = testCandidates().filter((c) => !c.half).slice(0, 2);
    const r = await tuneWinograd(ctx!, kernels, null, 4, { n: 1, ci: 8, co: 8, h: 7, w: 7 }, cands);
    assert.deepEqual(r.timings.map((t) => t.name), [LEGACY, ...cands.map((c) => c.name)]);
    for (const t of r.timings) {
      assert.ok(
        t.ms !== null && t.ms > 0 && t.gemmMs !== null && t.gemmMs > 0,
        `${t.name}: ${t.error}`,
      );
    }
    assertFastestWins(r);
    // Same shape again: the cached result.
    const again = await tuneWinograd(
      ctx!,
      kernels,
      null,
      4,
      { n: 1, ci: 8, co: 8, h: 7, w: 7 },
      cands,
    );
    assert.equal(again, r);
    // Forced names: legacy is the built-in GEMM; unknown names and f16 variants in f32 plans fail.
    const shape = { n: 1, ci: 8, co: 8, h: 7, w: 7 };
    assert.equal(await pickWinoKernels(ctx!, kernels, null, 4, shape, LEGACY), null);
    const forced = await pickWinoKernels(ctx!, kernels, null, 4, shape, cands[1].name);
    assert.equal(forced?.candidate.name, cands[1].name);
    await assert.rejects(
      () => pickWinoKernels(ctx!, kernels, null, 4, shape, "nope"),
      /not one of/,
    );
    const h = testCandidates().find((c) => c.half)!.name;
    await assert.rejects(() => pickWinoKernels(ctx!, kernels, null, 4, shape, h), /f16 plan/);
  },
);

const cfg: NetConfig = TINY_TOWER;
Deno.test(
  "fused GPU network with a forced Winograd GEMM variant matches the CPU reference",
  opts,
  async () => {
    const w = initWeights(cfg, 9);
    const cpu = new CpuNet(w);
    const name = testCandidates()[1].name;
    const net = await GpuNet.create(ctx!, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      winograd: 4,
      winogradGemm: name,
    });
    const batch = syntheticBatch(cfg, 3, 6);
    const want = await cpu.infer(batch);
    const got = await net.infer(batch);
    assert.ok(maxDiff(got.probs, want.probs) < 1e-5, "probs");
    assert.ok(maxDiff(got.value, want.value) < 1e-5, "value");
    const labels = (await net.planFor(3, false)).ops.map((o) => o.label);
    assert.ok(labels.includes(`wino.${name}.gemm`), labels.join(" "));
    net.dispose();
  },
);

Deno.test(
  "training with Winograd forward, input gradient and weight gradient (forced F(4x4), F(2x2), split-K F(4x4)): weights after two steps match the CPU",
  opts,
  async () => {
    const w = initWeights(cfg, 21);
    const h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    const cpu = new CpuNet(w);
    // And F(4x4) through a split-K GEMM (its partials added by the output transforms).
    const split = testCandidates().find((c) => c.gemm?.splits)!.name;
    const nets = await Promise.all(
      ([[4], [2], [4, split]] as const).map(([m, winogradGemm]) =>
        GpuNet.create(ctx!, w, {
          tiled: true,
          tiles: netTiles,
          fused: true,
          winograd: m,
          ...(winogradGemm ? { winogradGemm } : {}),
        })
      ),
    );
    for (let step = 0; step < 2; step++) {
      const b = syntheticBatch(cfg, 3, 40 + step);
      const want = await cpu.trainStep(b, h);
      for (const net of nets) {
        const got = await net.trainStep(b, h);
        assert.ok(Math.abs(got.loss - want.loss) < 1e-5, `step ${step} loss`);
      }
    }
    const ref = await cpu.weights();
    for (const net of nets) {
      const labels = (await net.planFor(3, true)).ops.map((o) => o.label);
      const m = net.winograd;
      for (const k of [`winogradFilter${m}`, `winogradDout${m}`, `winogradFilterGrad${m}`]) {
        assert.ok(labels.includes(k), `${k} in training: ${labels.join(" ")}`);
      }
      if (net.winogradGemm) {
        assert.ok(labels.includes(`wino.${split}.gemm`), `the split GEMM: ${labels.join(" ")}`);
      }
      const got = await net.weights();
      for (const [name, t] of ref.tensors) {
        const d = maxDiff(got.tensors.get(name)!.data, t.data);
        assert.ok(d < 2e-5, `F(${m}) ${name}: ${d}`);
      }
      net.dispose();
    }
  },
);

Deno.test(
  "direct fused conv at forced split-K factors and tile families (the split tuner's options) matches CPU",
  opts,
  async () => {
    // The hardware tiles on a hardware adapter (the families the tuner picks there).
    const kernels = await loadKernels(ctx!, netTiles, "tiled");
    const half = await loadHalfKernels(ctx!, netTiles, "f16-emulated");
    for (const k of [3, 1]) {
      const [n, ci, co, h, w] = [1, 64, 20, 7, 7];
      const x = randTensor([n, ci, h, w], 31), wt = randTensor([co, ci, k, k], 32);
      const bias = randTensor([co], 33), res = randTensor([n, co, h, w], 34);
      const want = convFused(x, wt, bias, res, true).data;
      for (const f16 of [false, true]) {
        for (
          const [sp, tile] of [[1, "small"], [2, "wide"], [3, "small"], [8, "wide"], [
            1,
            "wide",
          ]] as const
        ) {
          const pool = new TensorPool(ctx!);
          const rec = new GpuRecorder(ctx!, kernels, pool, true);
          if (f16) rec.half = half;
          const up = (t: CpuTensor, h16: boolean): GpuTensor => {
            const g = uploadTensor(ctx!, t.shape, t.data);
            return h16 ? { ...g, half: true } : g;
          };
          const [gx, gw, gr, gb] = [up(x, f16), up(wt, f16), up(res, f16), up(bias, false)];
          rec.splitChoice.set(directShapeKey(n, ci, co, h, w, k, f16), sp);
          rec.tileChoice.set(directShapeKey(n, ci, co, h, w, k, f16), tile);
          const y = rec.convFused(gx, gw, gb, gr, true);
          const sums = rec.ops.filter((o) => o.label.startsWith("sumSplits")).length;
          assert.equal(sums, sp > 1 ? 1 : 0, `k ${k} splits ${sp}: ${rec.ops.map((o) => o.label)}`);
          const conv = rec.ops.find((o) => o.label.startsWith("convForward"))!;
          assert.equal(conv.label.includes("Wide"), tile === "wide", conv.label);
          rec.submit();
          const [got] = await readTensors(ctx!, [y]);
          const e = relErr(got, want);
          assert.ok(e < 1e-5, `k ${k} f16 ${f16} splits ${sp}: ${e}`);
          rec.destroy();
          pool.destroy();
          for (const t of [gx, gw, gr, gb]) t.buffer.destroy();
        }
      }
    }
  },
);

Deno.test(
  "fused conv with the small-batch Winograd override (F(4x4) below the table's threshold) matches CPU",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, netTiles, "tiled");
    const half = await loadHalfKernels(ctx!, netTiles, "f16-emulated");
    // 16 F(4x4) tiles: the selection table keeps this layer direct.
    const [n, ci, co, h, w] = [1, 64, 24, 14, 14];
    const x = randTensor([n, ci, h, w], 41), wt = randTensor([co, ci, 3, 3], 42, -0.1, 0.1);
    const bias = randTensor([co], 43), res = randTensor([n, co, h, w], 44);
    const want = convFused(x, wt, bias, res, true).data;
    for (const f16 of [false, true]) {
      for (const override of [4, null] as const) {
        const pool = new TensorPool(ctx!);
        const rec = new GpuRecorder(ctx!, kernels, pool, true);
        rec.winograd = "auto";
        if (f16) rec.half = half;
        const up = (t: CpuTensor, h16: boolean): GpuTensor => {
          const g = uploadTensor(ctx!, t.shape, t.data);
          return h16 ? { ...g, half: true } : g;
        };
        const [gx, gw, gr, gb, w32] = [
          up(x, f16),
          up(wt, f16),
          up(res, f16),
          up(bias, false),
          up(wt, false),
        ];
        const u = uploadTensor(ctx!, [36, co, ci], new Float32Array(36 * co * ci));
        rec.winogradFilter(w32, u, 4);
        if (override) rec.winoOverride.set(directShapeKey(n, ci, co, h, w, 3, f16), override);
        const y = rec.convFused(gx, gw, gb, gr, true, u);
        const wino = rec.ops.some((o) => o.label.startsWith("winogradInput"));
        assert.equal(wino, override === 4, `f16 ${f16}: ${rec.ops.map((o) => o.label)}`);
        rec.submit();
        const [got] = await readTensors(ctx!, [y]);
        const e = relErr(got, want);
        assert.ok(e < 1e-4, `f16 ${f16} override ${override}: ${e}`);
        rec.destroy();
        pool.destroy();
        for (const t of [gx, gw, gr, gb, w32, u]) t.buffer.destroy();
      }
    }
  },
);

Deno.test(
  "the split-K tuner times 1, half, the default and twice the default and keeps the fastest",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    const shape = { n: 1, ci: 64, co: 16, h: 7, w: 7, k: 3 };
    // TEST_TILES: 16 x 16 output tiles, 4 x 1 of them; K = 576: default min(264 / 4, 576 / 128) = 4.
    const r = await tuneDirectSplits(ctx!, kernels, null, shape);
    assert.ok(r);
    assert.deepEqual(r.timings.map((t) => t.name), [
      "splits=1",
      "splits=2",
      "splits=4",
      "splits=8",
    ]);
    assertFastestWins(r);
    assert.equal(await tuneDirectSplits(ctx!, kernels, null, { ...shape, n: 64 }), null);
  },
);

Deno.test(
  "direct or F(4x4): a direct conv with nothing to tune is still timed against F(4x4), alone and in a bridged chain",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    // No split-K or tile options here (as 256 channels at batch 16 on hardware tiles): the
    // comparison once returned null, and the layer stayed direct untimed.
    const shape = { n: 2, ci: 16, co: 16, h: 6, w: 6, k: 3 };
    assert.equal(await tuneDirectSplits(ctx!, kernels, null, shape), null);
    const cands = testCandidates().filter((c) => !c.half).slice(0, 1);
    const r = await compareSmallBatch(ctx!, kernels, null, shape, cands);
    assert.ok(r);
    assert.deepEqual(r.timings.map((t) => t.name.split(" ")[0]), ["direct", "F4"]);
    assert.equal(r.timings[0].name, "direct splits=1");
    for (const t of r.timings) assert.ok(t.ms !== null && t.ms > 0, t.name);
    assertFastestWins(r);
    // With bridges: also what one conv adds to a chain of bridged convs, which can win.
    const b = await compareSmallBatch(ctx!, kernels, null, shape, cands, true);
    assert.ok(b);
    assert.deepEqual(b.timings.map((t) => t.name.replace(/^F4 [^ ]+/, "F4")), [
      "direct splits=1",
      "F4",
      "F4 in a bridged chain",
      "F4 in a staged-bridged chain",
    ]);
    for (const t of b.timings.slice(0, 2)) assert.ok(t.ms !== null && t.ms > 0, t.name);
    // The chained timing is what a conv of a bridged residual block costs: (three bridged convs
    // less one) / 2; where a loaded software adapter times three convs no slower than one, the
    // row says so and has no time.
    const chain = await timeBridgedChain(ctx!, kernels, null, shape, b.timings[1].name.slice(3));
    assert.deepEqual(chain.timings.map((t) => t.name), Object.values(CHAIN_RUNS));
    const [one, , three, staged] = chain.timings.map((t) => t.ms!);
    if (three > one) {
      assert.equal(b.timings[2].ms, (three - one) / 2);
      assert.equal(b.timings[3].ms, staged > one ? (staged - one) / 2 : null);
      assertFastestWins({ winner: b.winner, timings: b.timings.filter((t) => t.ms !== null) });
    } else {
      assert.equal(b.timings[2].ms, null);
      assert.match(b.timings[2].error!, /not more than one's/);
      assert.match(b.timings[3].error!, /not more than one's/);
      assertFastestWins({ winner: b.winner, timings: b.timings.slice(0, 2) });
    }
    // Ci != Co: no chain of this shape to time.
    const other = await compareSmallBatch(ctx!, kernels, null, { ...shape, co: 8 }, cands, true);
    assert.equal(other?.timings.length, 2);
  },
);

Deno.test(
  "the split-K tuner also times the small tile family where the default is the wide one",
  () => {
    // 128 channels, 144 columns: wide by default. TEST_TILES: 16 x 16 tiles, 9 x 8 of them; K =
    // 288: default min(264 / 72, 288 / 128) = 2 for both families, capped at 288 / 64 = 4.
    const shape = { n: 1, ci: 32, co: 128, h: 12, w: 12, k: 3 };
    assert.deepEqual(directOptions(TEST_TILES, shape).map((o) => [o.name, o.tile, o.splits]), [
      ["splits=1", "wide", 1],
      ["splits=2", "wide", 2],
      ["splits=4", "wide", 4],
      ["16x16 splits=1", "small", 1],
      ["16x16 splits=2", "small", 2],
      ["16x16 splits=4", "small", 4],
    ]);
    // The hardware tiles at batch 1 and 8 of the 19 x 256 model's tower.
    const hw = HARDWARE_TILES;
    const b1 = { n: 1, ci: 256, co: 256, h: 26, w: 26, k: 3 };
    assert.deepEqual(directOptions(hw, b1).map((o) => o.name), [
      "splits=1",
      "splits=9",
      "splits=18",
      "splits=36",
      "64x64 splits=1",
      "64x64 splits=3",
      "64x64 splits=6",
      "64x64 splits=12",
    ]);
    assert.deepEqual(directOptions(hw, { ...b1, n: 8 }).map((o) => o.name), [
      "splits=1",
      "splits=3",
      "splits=6",
      "64x64 splits=1",
      "64x64 splits=2",
    ]);
    assert.deepEqual(directOptions(hw, { ...b1, n: 64 }), []);
    // Winner names map back to one option each (pickDirectSplits looks the winner up by name).
    const names = directOptions(hw, b1).map((o) => o.name);
    assert.equal(new Set(names).size, names.length);
  },
);

Deno.test(
  "an f16 plan's training plans take f32 Winograd kernels, its inference plans f16 ones",
  opts,
  async () => {
    const w = initWeights(cfg, 5);
    const name = testCandidates()[0].name;
    const net = await GpuNet.create(ctx!, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      f16Emulate: true,
      winograd: 4,
      winogradGemm: name,
    });
    const want = await new CpuNet(w).infer(syntheticBatch(cfg, 2, 7));
    const got = await net.infer(syntheticBatch(cfg, 2, 7));
    assert.ok(maxDiff(got.probs, want.probs) < 1e-5, "probs (emulated f16 stores f32)");
    await net.trainStep(syntheticBatch(cfg, 2, 8), { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 });
    const infer = [...(await net.planFor(2, false)).winoChoice.values()];
    const train = [...(await net.planFor(2, true)).winoChoice.values()];
    assert.ok(infer.length > 0 && infer.every((k) => k.act === "f16-emulated"), "inference: f16");
    assert.ok(train.length > 0 && train.every((k) => k.act === "f32"), "training: f32");
    net.dispose();
  },
);

Deno.test(
  "the vp weight-gradient GEMMs (vec4 loads along the tiles, padded rows; unrolled, double-buffered, 16-deep slices) match the CPU, as the built-in one",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, netTiles, "tiled");
    // Odd channels; F(2x2) with 2,883 tile columns (two split-K chunks, the last ending off a
    // multiple of 4) and F(4x4) with 6; Ci, Co past 128 take the wide tile where those are bigger.
    const cases = [[3, 5, 7, 61, 61, 2], [1, 5, 7, 9, 5, 4], [1, 130, 129, 5, 6, 4]] as const;
    for (const [n, ci, co, h, w, m] of cases) {
      const x = randTensor([n, ci, h, w], 51), dy = randTensor([n, co, h, w], 52);
      const want = conv2dBackwardWeight(x, dy, 3).data;
      for (const v of [null, ...WGRAD_VARIANTS]) {
        const pool = new TensorPool(ctx!);
        const rec = new GpuRecorder(ctx!, kernels, pool, true);
        rec.winogradTrain = true;
        rec.winograd = m;
        const tile = wgradTileOf(kernels.tiles, co, ci);
        if (v) {
          const k = await loadWgradVariant(ctx!, tile, v);
          assert.equal(k.tile.bk, v.bk ?? tile.bk, v.name);
          rec.wgradChoice.set(winoShapeKey(m, n, ci, co, h, w), k);
        }
        const vp = v?.name ?? "legacy";
        const [gx, gdy] = [x, dy].map((t) => uploadTensor(ctx!, t.shape, t.data));
        const gw = uploadTensor(ctx!, [co, ci, 3, 3], new Float32Array(co * ci * 9));
        const dw = pool.acquire([co, ci, 3, 3]);
        rec.conv2dBackward(gx, gw, gdy, dw, false);
        const labels = rec.ops.map((o) => o.label);
        const gemm = labels.find((l) => l.startsWith("winogradWgradGemm"))!;
        assert.match(
          gemm,
          new RegExp(`^winogradWgradGemm(Wide)?${v ? v.name.toUpperCase() : ""}$`),
        );
        rec.submit();
        const [got] = await readTensors(ctx!, [dw]);
        const e = relErr(got, want);
        assert.ok(e < 1e-4, `${[n, ci, co, h, w]} F(${m}) vp ${vp}: ${e}`);
        rec.destroy();
        pool.destroy();
        for (const t of [gx, gdy, gw]) t.buffer.destroy();
      }
    }
  },
);

Deno.test(
  "the weight-gradient tuner times the built-in and vp GEMMs; forced names; training with each matches the CPU",
  opts,
  async () => {
    const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
    const shape = { n: 1, ci: 8, co: 12, h: 7, w: 7 };
    const r = await tuneWgrad(ctx!, kernels, 4, shape);
    assert.deepEqual(r.timings.map((t) => t.name), [LEGACY, "vp", "vpu", "vpud", "vpu16"]);
    for (const t of r.timings) assert.ok(t.ms! > 0 && t.gemmMs! > 0, t.name);
    assert.equal(r.winner, r.timings.reduce((a, b) => (b.ms! < a.ms! ? b : a)).name);
    assert.equal(await tuneWgrad(ctx!, kernels, 4, shape), r, "cached");
    assert.equal(await pickWgradKernel(ctx!, kernels, 4, shape, LEGACY), null);
    for (const v of WGRAD_VARIANTS) {
      assert.equal((await pickWgradKernel(ctx!, kernels, 4, shape, v.name))?.name, v.name);
    }
    await assert.rejects(() => pickWgradKernel(ctx!, kernels, 4, shape, "nope"), /not one of/);
    // Software adapters do not tune: the built-in GEMM unless forced.
    if (ctx!.report.isFallback) {
      assert.equal(await pickWgradKernel(ctx!, kernels, 4, shape, undefined), null);
    }
    // Two training steps with the unrolled, double-buffered variant forced: weights as the CPU's.
    const w = initWeights(cfg, 23);
    const h = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
    const cpu = new CpuNet(w);
    const net = await GpuNet.create(ctx!, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      winograd: 4,
      wgradGemm: "vpud",
    });
    for (let step = 0; step < 2; step++) {
      const b = syntheticBatch(cfg, 3, 60 + step);
      const want = await cpu.trainStep(b, h);
      const got = await net.trainStep(b, h);
      assert.ok(Math.abs(got.loss - want.loss) < 1e-5, `step ${step} loss`);
    }
    const labels = (await net.planFor(3, true)).ops.map((o) => o.label);
    assert.ok(labels.includes("winogradWgradGemmVPUD"), labels.join(" "));
    const ref = await cpu.weights(), got = await net.weights();
    for (const [name, t] of ref.tensors) {
      const d = maxDiff(got.tensors.get(name)!.data, t.data);
      assert.ok(d < 2e-5, `${name}: ${d}`);
    }
    net.dispose();
  },
);
