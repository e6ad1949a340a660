// The Winograd bridge (src/nn/gpu/winograd_bridge.ts): a fused network whose chained Winograd
// convs are joined by bridges gives the same bits as with separate output and input transforms,
// for F(2x2), F(4x4) and F(6x6), the built-in GEMM and tuned variants (f32 and f16 V/M), f32 and emulated
// f16 activations, square and oblong boards (real f16 activations: within rounding, not the same
// bits); its plan has the bridges in place of the transforms;
// an unwritten bridge output cannot be read by anything but its consumer.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { GpuRecorder, winoShapeKey } from "../../src/nn/gpu/backend.ts";
import { deviceHasF16, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import {
  BRIDGE_CASES,
  contractionTolerance,
  winogradBridgeParity,
} from "../../src/nn/gpu/winograd_bridge_check.ts";
import { TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  bridgeFits,
  bridgeName,
  bridgeStagedFits,
  bridgeStagedThreads,
  type BridgeStyle,
  bridgeThreads,
  loadWinogradBridge,
  parseBridgeStyle,
  winogradBridgeSource,
} from "../../src/nn/gpu/winograd_bridge.ts";
import { testCandidates } from "../../src/nn/gpu/winograd_gemm.ts";
import {
  CHAIN_RUNS,
  recordTowerRun,
  stagedBridgesTuned,
  towerCosts,
  unbridgedWinner,
} from "../../src/nn/gpu/winograd_tune.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { towerChain } from "../../src/nn/graph_fused.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import { maxDiff, randTensor, tuneResult } from "./helpers.ts";
import { setTuneCacheEnabled } from "../../src/nn/gpu/tune_cache.ts";

Deno.env.set("KIBITZ_NN_F16", "0");
// The disk cache off for this module (module state: the environment is shared with the test
// modules running beside this one, tune_cache_test among them).
setTuneCacheEnabled(false);
const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

const base = { planes: 4, moves: 12, valueHidden: 16, filters: 8 };
const configs: NetConfig[] = [
  { ...base, blocks: 2, height: 7, width: 7 },
  { ...base, blocks: 1, height: 6, width: 9 },
  // F(2x2): 81 tiles a plane, more than a 64-thread workgroup (each thread loops twice).
  { ...base, blocks: 1, height: 18, width: 18 },
];

Deno.test("the tower chain: each conv's next reader, and which outputs have others", () => {
  const chain = towerChain(configs[0]);
  assert.deepEqual(chain.map((l) => [l.conv, l.next, l.keepY]), [
    ["stem.conv", "block0.conv1", true],
    ["block0.conv1", "block0.conv2", false],
    ["block0.conv2", "block1.conv1", true],
    ["block1.conv1", "block1.conv2", false],
    ["block1.conv2", null, true],
  ]);
});

Deno.test("bridge kernels: workgroup-memory fit, one f16 kind, y only when kept", () => {
  assert.ok(bridgeFits(4, 26, 26)); // 30 x 30 floats
  assert.ok(!bridgeFits(4, 64, 64));
  const spec = {
    m: 4 as const,
    act: "f32" as const,
    mIn: "f32" as const,
    vOut: "f16" as const,
    h: 26,
    w: 26,
    keepY: false,
  };
  const src = winogradBridgeSource(spec);
  assert.ok(src.startsWith("enable f16;") && !src.includes("var<storage, read_write> y"));
  assert.ok(winogradBridgeSource({ ...spec, keepY: true }).includes("read_write> y"));
  assert.throws(
    () => winogradBridgeSource({ ...spec, mIn: "f16-emulated" }),
    /mixed f16 storages/,
  );
  assert.throws(() => winogradBridgeSource({ ...spec, h: 64, w: 64 }), /does not fit/);
  assert.notEqual(bridgeName(spec), bridgeName({ ...spec, keepY: true }));
  // One thread a tile: 49 F(4x4) tiles of 26 x 26 take 64, 25 F(6x6) tiles 32, 16 F(7x7) 32.
  assert.equal(bridgeThreads(4, 26, 26), 64);
  assert.equal(bridgeThreads(6, 26, 26), 32);
  assert.equal(bridgeThreads(7, 26, 26), 32);
  assert.ok(winogradBridgeSource({ ...spec, m: 6 }).includes("@workgroup_size(32)"));
});

/** The test twin that splits its GEMM into n partials. */
function splitTwin(n: number): string {
  return testCandidates().find((c) => c.gemm?.splits === n)!.name;
}

const cases: {
  name: string;
  winograd: 2 | 4 | 6;
  gemm: string;
  f16?: boolean | "real";
}[] = [
  { name: "F(2x2), built-in GEMM", winograd: 2, gemm: "legacy" },
  { name: "F(4x4), built-in GEMM", winograd: 4, gemm: "legacy" },
  { name: "F(6x6), built-in GEMM", winograd: 6, gemm: "legacy" },
  { name: "F(6x6), variant", winograd: 6, gemm: testCandidates()[2].name },
  { name: "F(4x4), variant", winograd: 4, gemm: testCandidates()[1].name },
  { name: "F(4x4), f16 activations", winograd: 4, gemm: "legacy", f16: true },
  { name: "F(4x4), f16 V/M variant", winograd: 4, gemm: testCandidates()[4].name, f16: true },
  // Split-K GEMMs: the bridges add the partials (".sN" bridges).
  { name: "F(4x4), split-K variant", winograd: 4, gemm: splitTwin(2) },
  { name: "F(6x6), split-K variant, f16 activations", winograd: 6, gemm: splitTwin(3), f16: true },
  // Real f16 storage where the adapter has shader-f16 (hardware runs).
  ...(ctx && deviceHasF16(ctx)
    ? [{ name: "F(4x4), real f16", winograd: 4 as const, gemm: "legacy", f16: "real" as const }]
    : []),
];

/** A case's network on `w`, bridged or not (`style`: which bridges). */
function caseNet(
  w: ReturnType<typeof initWeights>,
  c: (typeof cases)[number],
  winogradBridge: boolean,
  style: BridgeStyle = "tuned",
): Promise<GpuNet> {
  return GpuNet.create(ctx!, w, {
    tiled: true,
    tiles: TEST_TILES,
    fused: true,
    winograd: c.winograd,
    winogradGemm: c.gemm,
    ...(c.f16 === "real" ? { precision: "f16" as const } : { f16Emulate: c.f16 === true }),
    winogradBridge,
    bridgeStyle: style,
  });
}

Deno.test("bridged Winograd chains give the same bits as separate transforms", opts, async () => {
  for (const cfg of configs) {
    const w = initWeights(cfg, 17);
    const batch = syntheticBatch(cfg, 3, 6);
    const want = await new CpuNet(w).infer(batch);
    for (const c of cases) {
      const what = `${c.name}, ${cfg.height} x ${cfg.width}`;
      const [on, off] = await Promise.all([caseNet(w, c, true), caseNet(w, c, false)]);
      const a = await on.infer(batch), b = await off.infer(batch);
      if (c.f16 === "real") {
        // Real f16 on hardware: the two kernels' f32 arithmetic may round differently (probably
        // multiply-adds fused in one kernel and not in the other), and an f16 store then rounds some
        // activations to the neighbouring f16. Measured on an H200 (session 29): at most 1.4e-5
        // in probs and 4.4e-5 in value, each path within 1.7e-5 of the CPU in probs.
        assert.ok(maxDiff(a.probs, b.probs) <= 2e-4, `${what}: probs`);
        assert.ok(maxDiff(a.value, b.value) <= 2e-4, `${what}: value`);
      } else {
        assert.deepEqual(a.probs, b.probs, `${what}: probs`);
        assert.deepEqual(a.value, b.value, `${what}: value`);
      }
      const tol = c.f16 === "real" ? 2e-2 : 1e-4;
      assert.ok(maxDiff(a.probs, want.probs) < tol, `${what}: probs against the CPU`);
      const labels = (await on.planFor(3, false)).ops.map((o) => o.label);
      const count = (p: (l: string) => boolean) => labels.filter(p).length;
      // The stem is Winograd too (forced): every tower conv but the last ends in a bridge, and
      // only the stem runs an input transform.
      const convs = 2 * cfg.blocks + 1;
      assert.equal(count((l) => l.startsWith("wino.bridge.")), convs - 1, `${what}: bridges`);
      const split = testCandidates().find((t) => t.name === c.gemm)?.gemm?.splits;
      assert.equal(
        count((l) => /^wino\.bridge\..*\.s\d+(\.y)?$/.test(l)),
        split ? convs - 1 : 0,
        `${what}: bridges adding split-K partials`,
      );
      assert.equal(
        count((l) => /^winogradInput|^wino\.[^.]+\.input$/.test(l) && !l.startsWith("wino.bridge")),
        1,
        `${what}: input transforms: ${labels.join(" ")}`,
      );
      // The inner activations are not written: kept outputs are bridges with ".y".
      assert.equal(count((l) => l.startsWith("wino.bridge.") && l.endsWith(".y")), cfg.blocks);
      const offLabels = (await off.planFor(3, false)).ops.map((o) => o.label);
      assert.ok(!offLabels.some((l) => l.startsWith("wino.bridge.")), `${what}: off`);
      on.dispose();
      off.dispose();
    }
  }
});

Deno.test(
  "column-staged bridges in a network: the plan takes them, outputs within rounding of separate transforms",
  opts,
  async () => {
    // Every case but F(2x2) (the bridged-chains test covers it plainly); real f16 on hardware.
    const staged = cases.filter((c) => c.winograd !== 2);
    for (const cfg of configs.slice(0, 2)) {
      const w = initWeights(cfg, 17);
      const batch = syntheticBatch(cfg, 3, 6);
      for (const c of staged) {
        const what = `${c.name}, ${cfg.height} x ${cfg.width}`;
        const [on, off] = await Promise.all([
          caseNet(w, c, true, "staged"),
          caseNet(w, c, false, "staged"),
        ]);
        assert.equal(on.bridgeStyle, "staged");
        const a = await on.infer(batch), b = await off.infer(batch);
        // f16 activations: an activation may round to the neighbouring f16 (2^-11 of it).
        const tol = c.f16 ? 2e-3 : 1e-5;
        assert.ok(maxDiff(a.probs, b.probs) <= tol, `${what}: probs ${maxDiff(a.probs, b.probs)}`);
        assert.ok(maxDiff(a.value, b.value) <= tol, `${what}: value ${maxDiff(a.value, b.value)}`);
        const labels = (await on.planFor(3, false)).ops.map((o) => o.label);
        const bridges = labels.filter((l) => l.startsWith("wino.bridge."));
        assert.equal(bridges.length, 2 * cfg.blocks, `${what}: bridges`);
        assert.ok(bridges.every((l) => l.endsWith(".c")), `${what}: ${bridges.join(" ")}`);
        on.dispose();
        off.dispose();
      }
    }
    assert.throws(() => parseBridgeStyle("fast"), /KIBITZ_NN_WINO_BRIDGE_STYLE must be/);
  },
);

Deno.test(
  "bridge kernels equal the output then input transforms bit for bit (f32 and f16-emulated activations)",
  opts,
  async () => {
    assert.deepEqual(await winogradBridgeParity(ctx!), []);
    const half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
    assert.deepEqual(await winogradBridgeParity(ctx!, half), []);
  },
);

Deno.test(
  "column-staged bridge kernels equal the output then input transforms within rounding",
  opts,
  async () => {
    const tolerance = contractionTolerance(null);
    assert.deepEqual(await winogradBridgeParity(ctx!, null, BRIDGE_CASES, { tolerance }), []);
    const half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
    const staged = { tolerance: contractionTolerance(half) };
    assert.deepEqual(await winogradBridgeParity(ctx!, half, BRIDGE_CASES, staged), []);
  },
);

Deno.test("column-staged bridges: workgroup memory, threads, name", () => {
  // 26 x 26 at F(4x4): a 30 x 30 plane and 49 tiles of 36 floats (2,664 floats, 10.7 kB).
  assert.ok(bridgeStagedFits(4, 26, 26) && bridgeStagedFits(6, 26, 26));
  assert.ok(bridgeStagedFits(7, 26, 26) && bridgeStagedFits(2, 26, 26));
  assert.ok(!bridgeStagedFits(4, 40, 40) && bridgeFits(4, 40, 40));
  // (m + 2) x tiles jobs a stage: 294 at F(4x4) (two passes of 160), 144 at F(7x7) (one of 160).
  assert.equal(bridgeStagedThreads(4, 26, 26), 160);
  assert.equal(bridgeStagedThreads(7, 26, 26), 160);
  assert.equal(bridgeStagedThreads(6, 26, 26), 224);
  const spec = {
    m: 7 as const,
    act: "f32" as const,
    mIn: "f32" as const,
    vOut: "f32" as const,
    h: 26,
    w: 26,
    keepY: true,
  };
  const src = winogradBridgeSource({ ...spec, staged: true });
  assert.ok(src.includes("@workgroup_size(160)") && src.includes("column-staged"));
  assert.equal(bridgeName({ ...spec, staged: true }), `${bridgeName(spec)}.c`);
  assert.throws(
    () => winogradBridgeSource({ ...spec, m: 4, h: 40, w: 40, staged: true }),
    /does not fit workgroup memory staged/,
  );
});

/** A recorder with the F(4x4) bridge of an 8-channel 6 x 6 conv chain, and its operands. */
async function bridgedRecorder() {
  const kernels = await loadKernels(ctx!, TEST_TILES, "tiled");
  const rec = new GpuRecorder(ctx!, kernels, new TensorPool(ctx!), true);
  rec.winograd = 4;
  const t = (shape: number[], seed: number) => {
    const r = randTensor(shape, seed);
    return uploadTensor(ctx!, r.shape, r.data);
  };
  const x = t([1, 8, 6, 6], 1), w = t([8, 8, 3, 3], 2), b = t([8], 3), u = t([36, 8, 8], 4);
  const plan = rec.winoPlanOf(1, 8, 8, 6, 6, 36);
  const spec = rec.bridgeSpec(plan, plan, 6, 6, false)!;
  rec.bridges.set(bridgeName(spec), await loadWinogradBridge(ctx!, spec));
  return { rec, x, w, b, u };
}

Deno.test(
  "the tuner's tower runs: a conv, one with a residual, a block bridged as a tower bridges it",
  opts,
  async () => {
    const { rec, x, b, u } = await bridgedRecorder();
    const plan = rec.winoPlanOf(1, 8, 8, 6, 6, 36);
    const kept = rec.bridgeSpec(plan, plan, 6, 6, true)!;
    rec.bridges.set(bridgeName(kept), await loadWinogradBridge(ctx!, kept));
    const labels = (run: (typeof CHAIN_RUNS)[keyof typeof CHAIN_RUNS]) => {
      const from = rec.ops.length;
      recordTowerRun(rec, run, x, u, 4, b);
      return rec.ops.slice(from).map((o) => o.label);
    };
    const one = labels(CHAIN_RUNS.one);
    assert.ok(!one.some((l) => l.includes("bridge")), one.join());
    assert.deepEqual(labels(CHAIN_RUNS.residual), one);
    // Three GEMMs; the first bridge writes no y, the second adds the residual and writes y.
    const block = labels(CHAIN_RUNS.block);
    assert.equal(block.filter((l) => /gemm/i.test(l)).length, 3, block.join());
    assert.deepEqual(block.filter((l) => l.includes("bridge")), [
      `wino.bridge.${bridgeName({ ...kept, keepY: false })}`,
      `wino.bridge.${bridgeName(kept)}`,
    ]);
    // The staged run: the same block, its shape in stagedBridges, joined by `.c` bridges.
    rec.stagedBridges.add(winoShapeKey(4, 1, 8, 8, 6, 6));
    for (const keepY of [false, true]) {
      const spec = rec.bridgeSpec(plan, plan, 6, 6, keepY, true)!;
      assert.equal(spec.staged, true);
      rec.bridges.set(bridgeName(spec), await loadWinogradBridge(ctx!, spec));
    }
    const staged = labels(CHAIN_RUNS.staged);
    assert.deepEqual(staged.filter((l) => l.includes("bridge")), [
      `wino.bridge.${bridgeName({ ...kept, keepY: false, staged: true })}`,
      `wino.bridge.${bridgeName({ ...kept, staged: true })}`,
    ]);
  },
);

Deno.test("an unwritten bridge output read by another op is an error", opts, async () => {
  const { rec, x, w, b, u } = await bridgedRecorder();
  const y = rec.convFused(x, w, b, null, true, u, { u, keepY: false });
  assert.ok(rec.ops.some((o) => o.label.startsWith("wino.bridge.")));
  // A direct conv (no filter transform) would read y itself, which was never written.
  assert.throws(() => rec.convFused(y, w, b, null, true), /bridged conv output/);
  // Its consumer takes the bridge's V.
  rec.convFused(y, w, b, null, true, u);
  assert.ok(!rec.ops.slice(1).some((o) => /input/i.test(o.label)));
});

Deno.test(
  "a shape the tuner runs unbridged ends in the output transform, not a bridge",
  opts,
  async () => {
    const { rec, x, w, b, u } = await bridgedRecorder();
    rec.unbridged.add(winoShapeKey(4, 1, 8, 8, 6, 6));
    const y = rec.convFused(x, w, b, null, true, u, { u, keepY: false });
    assert.ok(!rec.ops.some((o) => o.label.startsWith("wino.bridge.")), "no bridge");
    assert.ok(rec.ops.some((o) => /^winogradOutput/.test(o.label)), "the output transform");
    // y is written: a direct conv may read it, and the next Winograd conv runs its input transform.
    rec.convFused(y, w, b, null, true);
    const before = rec.ops.length;
    rec.convFused(y, w, b, null, true, u);
    assert.ok(rec.ops.slice(before).some((o) => /^winogradInput/.test(o.label)));
  },
);

Deno.test("unbridgedWinner: a lone row winning a bridged comparison", () => {
  const r = tuneResult({
    winner: "F7 128x128k8t256ruvp-o",
    timer: "the tuners' best times; lone and chained figures decide",
  });
  assert.equal(unbridgedWinner(r), true);
  assert.equal(unbridgedWinner({ ...r, winner: `${r.winner} in a bridged chain` }), false);
  // Where the chained costs were not all timed, the lone rows decide alone: nothing to say.
  assert.equal(unbridgedWinner({ ...r, timer: "the tuners' best times" }), false);
});

Deno.test("towerCosts: a conv's cost in a tower each way; a failed staged block keeps the others", () => {
  const row = (name: string, ms: number | null, error?: string) => ({
    name,
    ms,
    gemmMs: null,
    ...(error ? { error } : {}),
  });
  const runs = [row(CHAIN_RUNS.one, 2), row(CHAIN_RUNS.residual, 2.5), row(CHAIN_RUNS.block, 6)];
  // (block - one) / 2, (staged - one) / 2, (one + residual) / 2.
  assert.deepEqual(towerCosts(tuneResult({ timings: [...runs, row(CHAIN_RUNS.staged, 5)] })), {
    bridged: 2,
    staged: { ms: 1.5 },
    unbridged: 2.25,
  });
  // Not timed (the plane does not fit): no staged cost; noisy: no time.
  assert.equal((towerCosts(tuneResult({ timings: runs })) as { staged: null }).staged, null);
  const noisy = towerCosts(tuneResult({ timings: [...runs, row(CHAIN_RUNS.staged, 1.5)] }));
  assert.deepEqual((noisy as { staged: unknown }).staged, { ms: null });
  // Failed to compile: its reason, and the other costs stand.
  const failed = towerCosts(
    tuneResult({
      timings: [...runs, row(CHAIN_RUNS.staged, null, "column-staged bridges failed")],
    }),
  );
  assert.deepEqual(failed, {
    bridged: 2,
    staged: { ms: null, error: "column-staged bridges failed" },
    unbridged: 2.25,
  });
  // The block itself noisy: an error for the whole tower.
  const bad = towerCosts(tuneResult({ timings: [runs[0], runs[1], row(CHAIN_RUNS.block, 1)] }));
  assert.match((bad as { error: string }).error, /not more than one's/);
});

Deno.test("KIBITZ_NN_WINO_BRIDGE_STAGED=0 keeps the staged bridges out of the tower timing", () => {
  assert.equal(stagedBridgesTuned(undefined), true);
  assert.equal(stagedBridgesTuned("1"), true);
  assert.equal(stagedBridgesTuned("0"), false);
});
