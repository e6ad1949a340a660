// f16 storage with f32 accumulation for inference (src/nn/gpu/f16.ts, src/nn/f16.ts).
// CPU: the f16 rounding against known values, the f16 twin against the f32 fused reference.
// Text: the f16 kernels are the f16-emulated kernels plus `enable f16;` and the f16 alias, and
// every storage read converts to f32 and every store rounds to s16.
// GPU, any adapter: the f16 code path with f32 storage ("f16-emulated": same kernel text, s16 bound
// to f32) against the f32 CPU reference, per conv (split-K included) and for the whole network.
// GPU with shader-f16 (skipped by name elsewhere): real f16 storage against the CPU f16 twin.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { convFused, foldBn } from "../../src/nn/cpu/fused.ts";
import { cpuFusedInfer, f16round, f16roundSoft, roundF16 } from "../../src/nn/f16.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import { convForwardSource, f16Prelude } from "../../src/nn/gpu/conv_gemm.ts";
import { deviceHasF16, f16Entries, f16MiscSource, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import { AUTO_F16, GpuNet, resolvePrecision } from "../../src/nn/net.ts";
import { initWeights, type NetWeights } from "../../src/nn/params.ts";
import { type CpuTensor, rng } from "../../src/nn/tensor.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { winogradSource } from "../../src/nn/winograd.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";

const ctx = await getGpu();
const hasF16 = !!ctx && deviceHasF16(ctx);
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const f16opts = { ignore: !hasF16, sanitizeResources: false, sanitizeOps: false };
const software = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const tiles = software ? TEST_TILES : HARDWARE_TILES;
const cfg: NetConfig = {
  blocks: 2,
  filters: 8,
  planes: 4,
  height: 6,
  width: 6,
  moves: 12,
  valueHidden: 16,
};

function close(name: string, got: Float32Array, want: Float32Array, tol: number): void {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = maxDiff(got, want);
  assert.ok(err <= tol, `${name}: max difference ${err} > ${tol}`);
}

/** Weights whose batch norms are far from identity (random gamma, beta, running mean and var). */
function unevenWeights(c: NetConfig, seed: number): NetWeights {
  const w = initWeights(c, seed);
  const next = rng(seed + 100);
  for (const s of w.specs) {
    const d = w.tensors.get(s.name)!.data;
    for (let i = 0; i < d.length; i++) {
      if (s.role === "gamma") d[i] = 0.5 + next();
      else if (s.role === "beta" || s.role === "mean") d[i] = next() - 0.5;
      else if (s.role === "var") d[i] = 0.2 + 2 * next();
    }
  }
  return w;
}

// [value, nearest f16]: exact values, ties to even, the largest finite, overflow, subnormals.
const KNOWN: [number, number][] = [
  [1, 1],
  [-2.5, -2.5],
  [0.1, 0.0999755859375],
  [1 + 2 ** -11, 1], // tie: down to the even mantissa
  [1 + 3 * 2 ** -11, 1 + 2 ** -9], // tie: up to the even mantissa
  [1 + 2 ** -11 + 2 ** -20, 1 + 2 ** -10],
  [65504, 65504],
  [65519.99, 65504],
  [65520, Infinity], // the tie above the largest finite value rounds to infinity
  [-1e6, -Infinity],
  [2 ** -14, 2 ** -14],
  [2 ** -24, 2 ** -24],
  [2 ** -25, 0], // tie between 0 and the smallest subnormal: 0 is even
  [3 * 2 ** -26, 2 ** -24],
  [5 * 2 ** -25, 2 * 2 ** -24], // 2.5 subnormal steps: tie to 2
  [1e-8, 0],
  [3.14159265, 3.140625],
];

Deno.test("f16 rounding: known values (native Math.f16round if present, and the soft fallback)", () => {
  for (const [x, want] of KNOWN) {
    assert.equal(f16roundSoft(x), want, `soft f16round(${x})`);
    assert.equal(f16round(x), want, `f16round(${x})`);
  }
  assert.ok(Number.isNaN(f16roundSoft(NaN)));
  assert.ok(Object.is(f16roundSoft(-0), -0));
  assert.ok(Object.is(f16roundSoft(-(2 ** -26)), -0));
});

Deno.test("f16 rounding: the soft fallback equals Math.f16round on 50,000 f32 values", {
  ignore: !(Math as { f16round?: unknown }).f16round,
}, () => {
  const next = rng(7);
  const native = (Math as unknown as { f16round: (x: number) => number }).f16round;
  for (let i = 0; i < 50000; i++) {
    const x = Math.fround((next() - 0.5) * 2 ** (next() * 60 - 34));
    assert.equal(f16roundSoft(x), native(x), `f16round(${x})`);
  }
});

Deno.test("f16 twin: close to the f32 fused reference on the tiny model, and really rounded", () => {
  // Measured: probs differ by at most ~2.4e-5, values by ~3e-4 (seeds 1-3): 11-bit mantissas at
  // every stored activation. Tolerance: probs 1e-3, value 2e-3.
  for (const seed of [1, 2, 3]) {
    const w = unevenWeights(cfg, seed);
    const batch = syntheticBatch(cfg, 5, seed);
    const full = cpuFusedInfer(w, batch, false), half = cpuFusedInfer(w, batch, true);
    close(`seed ${seed} probs`, half.probs, full.probs, 1e-3);
    close(`seed ${seed} value`, half.value, full.value, 2e-3);
    assert.ok(maxDiff(half.value, full.value) > 0, "the twin rounds (differs from f32)");
  }
});

Deno.test("f16 WGSL: the f16 kernels are the emulated ones under `enable f16;`, loads convert, stores round", () => {
  const emu = f16Prelude("f16-emulated"), real = f16Prelude("f16");
  assert.ok(real.startsWith("enable f16;\nalias s16 = f16;"));
  assert.equal(emu, "alias s16 = f32;\n\n");
  const a = Object.values(f16Entries(HARDWARE_TILES, "f16"));
  const b = Object.values(f16Entries(HARDWARE_TILES, "f16-emulated"));
  for (let i = 0; i < a.length; i++) {
    assert.equal(a[i][0].slice(real.length), b[i][0].slice(emu.length), `kernel ${i}`);
    assert.ok(a[i][0].startsWith(real));
  }
  for (const k of [1, 3]) {
    for (const t of [HARDWARE_TILES.small, HARDWARE_TILES.wide]) {
      const src = convForwardSource(t, k, true, false, "f16");
      for (const v of ["in0", "in1", "out", "res"]) {
        assert.match(src, new RegExp(`${v}: array<s16>`));
      }
      assert.match(src, /bias: array<f32>/);
      // Every read of an s16 array converts to f32; every store rounds to s16.
      for (const m of src.matchAll(/(in0|in1|res)\[/g)) {
        assert.equal(src.slice(m.index! - 4, m.index!), "f32(", `unconverted read at ${m.index}`);
      }
      const stores = [...src.matchAll(/out\[zoff \+ o\] = (.*);/g)];
      assert.ok(stores.length > 0 && stores.every((m) => m[1].startsWith("s16(epi(")));
      const part = convForwardSource(t, k, false, false, "f16", true);
      assert.match(part, /out: array<f32>/);
      assert.doesNotMatch(part, /s16\(/);
    }
    // The f32 kernels carry no trace of the f16 path.
    assert.doesNotMatch(convForwardSource(HARDWARE_TILES.small, k, true), /s16|f16/);
  }
  assert.match(f16MiscSource("f16"), /out\[i\] = s16\(s\);/);
  for (const m of [2, 4, 7] as const) {
    const src = winogradSource(m, "f16");
    assert.ok(src.startsWith(real));
    assert.match(src, /x: array<s16>/);
    assert.match(src, /res: array<s16>/);
    assert.match(src, /y: array<s16>/);
    assert.match(src, /v_out: array<f32>/);
    assert.match(src, /y\[at\] = s16\(r\);/);
    assert.doesNotMatch(winogradSource(m), /s16|f16/);
  }
});

Deno.test(
  "f16 precision: never chosen without shader-f16; auto is f16 on hardware adapters that have " +
    "it, f32 elsewhere; KIBITZ_NN_F16 overrides",
  opts,
  () => {
    const prev = Deno.env.get("KIBITZ_NN_F16");
    try {
      Deno.env.delete("KIBITZ_NN_F16");
      const auto = hasF16 && !ctx!.report.isFallback ? "f16" : "f32";
      assert.equal(AUTO_F16, true);
      assert.equal(resolvePrecision(ctx!, "auto", true, true), auto);
      assert.equal(resolvePrecision(ctx!, undefined, true, true), auto);
      assert.equal(resolvePrecision(ctx!, "auto", false, true), "f32");
      assert.equal(resolvePrecision(ctx!, "f32", true, true), "f32");
      assert.equal(resolvePrecision(ctx!, "f16", true, true, true), "f16-emulated");
      Deno.env.set("KIBITZ_NN_F16", "1");
      assert.equal(resolvePrecision(ctx!, undefined, true, true), hasF16 ? "f16" : "f32");
      assert.equal(resolvePrecision(ctx!, "auto", true, true), hasF16 ? "f16" : "f32");
      assert.equal(resolvePrecision(ctx!, "auto", false, true), "f32");
      assert.equal(resolvePrecision(ctx!, "auto", true, false), "f32");
      assert.equal(resolvePrecision(ctx!, "f32", true, true), "f32");
      Deno.env.set("KIBITZ_NN_F16", "0");
      assert.equal(resolvePrecision(ctx!, "auto", true, true), "f32");
      if (!hasF16) assert.throws(() => resolvePrecision(ctx!, "f16", true, true), /shader-f16/);
      else assert.equal(resolvePrecision(ctx!, "f16", true, true), "f16");
      assert.throws(() => resolvePrecision(ctx!, "f16", false, true), /tiled/);
    } finally {
      if (prev === undefined) Deno.env.delete("KIBITZ_NN_F16");
      else Deno.env.set("KIBITZ_NN_F16", prev);
    }
  },
);

// [k, n, ci, co, h, w]: plain, the 128-wide tiles, and batch-1 deep-K cases that split K.
const CASES = [
  [3, 2, 6, 70, 6, 6],
  [1, 2, 5, 3, 5, 4],
  [3, 2, 15, 130, 8, 9],
  [3, 1, 50, 20, 5, 5],
  [1, 1, 300, 8, 4, 4],
];

/** Runs the f16 fused conv (with residual and ReLU, and without) on the GPU; reads y back as f32. */
async function halfConv(
  storage: "f16" | "f16-emulated",
  x: CpuTensor,
  f: { w: CpuTensor; b: CpuTensor },
  res: CpuTensor,
): Promise<Float32Array[]> {
  const pool = new TensorPool(ctx!);
  const r = new GpuRecorder(ctx!, await loadKernels(ctx!, tiles, "tiled"), pool, true);
  r.half = await loadHalfKernels(ctx!, tiles, storage);
  const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
  const [gx, gw, gb, gres] = [x, f.w, f.b, res].map(up);
  const wh = r.toHalf(gw), resh = r.toHalf(gres);
  const y1 = r.toFull(r.convFused(gx, wh, gb, resh, true));
  const y2 = r.toFull(r.convFused(gx, wh, gb, null, false));
  r.submit();
  const out = await readTensors(ctx!, [y1, y2]);
  // Batch-1 deep-K cases must take the split-K path (its f16 sum kernel).
  const split = r.ops.some((o) => o.label === "sumSplitsFusedH");
  assert.equal(split, x.shape[0] === 1, `split-K: ${r.ops.map((o) => o.label).join(" ")}`);
  r.destroy();
  pool.destroy();
  return out;
}

for (const [k, n, ci, co, h, wd] of CASES) {
  const name = `${k}x${k} ${n}x${ci}x${h}x${wd} -> ${co}`;
  const inputs = () => {
    const x = randTensor([n, ci, h, wd], 1), w = randTensor([co, ci, k, k], 2);
    const res = randTensor([n, co, h, wd], 3);
    const f = foldBn(
      w,
      randTensor([co], 4, 0.5, 1.5),
      randTensor([co], 5),
      randTensor([co], 6),
      randTensor([co], 7, 0.2, 2),
    );
    return { x, res, f };
  };
  Deno.test(
    `f16-emulated fused conv ${name}: the f16 code path with f32 storage matches CPU`,
    opts,
    async () => {
      const { x, res, f } = inputs();
      const [a, b] = await halfConv("f16-emulated", x, f, res);
      const want1 = convFused(x, f.w, f.b, res, true).data;
      close("conv + bias + residual + ReLU", a, want1, 1e-4 * Math.max(1, maxAbs(want1)));
      const want2 = convFused(x, f.w, f.b, null, false).data;
      close("conv + bias", b, want2, 1e-4 * Math.max(1, maxAbs(want2)));
    },
  );
  Deno.test(`f16 fused conv ${name}: f16 storage matches the CPU f16 twin`, f16opts, async () => {
    const { x, res, f } = inputs();
    const [a, b] = await halfConv("f16", x, f, res);
    const [xr, wr, rr] = [x, f.w, res].map(roundF16);
    const want1 = roundF16(convFused(xr, wr, f.b, rr, true)).data;
    const want2 = roundF16(convFused(xr, wr, f.b, null, false)).data;
    // Same rounded inputs, f32 sums in another order: outputs differ by at most one f16 step
    // (2^-10 relative) where the sums straddle a rounding boundary, plus the f32 order noise.
    for (const [got, want] of [[a, want1], [b, want2]]) {
      for (let i = 0; i < want.length; i++) {
        const tol = 2 ** -10 * Math.abs(want[i]) + 1e-5 * Math.max(1, maxAbs(want));
        assert.ok(Math.abs(got[i] - want[i]) <= tol, `${i}: ${got[i]} vs ${want[i]}`);
      }
    }
  });
}

Deno.test(
  "f16-emulated GPU network matches the f32 CPU reference; the plan stores f16 between convs",
  opts,
  async () => {
    const w = unevenWeights(cfg, 5);
    const gpu = await GpuNet.create(ctx!, w, { tiled: true, tiles, fused: true, f16Emulate: true });
    assert.equal(gpu.precision, "f16-emulated");
    for (const size of [1, 3]) {
      const batch = syntheticBatch(cfg, size, 6 + size);
      const want = cpuFusedInfer(w, batch, false);
      const got = await gpu.infer(batch);
      close(`batch ${size} probs`, got.probs, want.probs, 1e-5);
      close(`batch ${size} value`, got.value, want.value, 1e-5);
    }
    const labels = (await gpu.planFor(3, false)).ops.map((o) => o.label);
    // The stem's input cast, stem + 2 per block + 2 head convs in f16, the heads' casts back to f32.
    assert.equal(labels.filter((l) => l === "toHalf").length, 1, labels.join(" "));
    assert.equal(labels.filter((l) => l === "toFull").length, 2, labels.join(" "));
    assert.equal(
      labels.filter((l) => /^convForward(Wide)?(FusedH|PartH)/.test(l)).length,
      2 * cfg.blocks + 3,
    );
    assert.ok(!labels.some((l) => l.startsWith("winograd")), labels.join(" "));
    gpu.dispose();
  },
);

Deno.test(
  "f16-emulated GPU network with Winograd F(2x2)/F(4x4)/F(7x7) (f16 input/output transforms) matches the f32 CPU reference",
  opts,
  async () => {
    const w = unevenWeights(cfg, 8);
    const batch = syntheticBatch(cfg, 2, 4);
    const want = cpuFusedInfer(w, batch, false);
    for (const winograd of [2, 4, 7] as const) {
      const gpu = await GpuNet.create(ctx!, w, {
        tiled: true,
        tiles,
        fused: true,
        f16Emulate: true,
        winograd,
        // F(7x7) without bridges: its f16 bridges' bits are checked against these transforms in
        // tests/nn/winograd_bridge_test.ts, and each costs about 15 s to compile on llvmpipe.
        winogradBridge: winograd !== 7,
        // The built-in GEMM: on hardware the autotuner may pick a generated variant, whose plan
        // converts around f32 transforms (labels wino.<variant>.*), not the f16 transforms tested here.
        winogradGemm: "legacy",
      });
      const got = await gpu.infer(batch);
      // Winograd's own error (README: up to ~1e-5 relative for F(4x4)) on top of f32 order noise.
      close(`F(${winograd}) probs`, got.probs, want.probs, 1e-4);
      close(`F(${winograd}) value`, got.value, want.value, 1e-4);
      const labels = (await gpu.planFor(2, false)).ops.map((o) => o.label);
      // Each conv ends in the f16 output transform or in a bridge to the next (f16 activations).
      assert.equal(
        labels.filter((l) =>
          l === `winogradOutputH${winograd}` || l.startsWith(`wino.bridge.F${winograd}.`)
        ).length,
        2 * cfg.blocks + 1,
        labels.join(" "),
      );
      const half = winograd === 7 ? "winogradInputH7" : ".f16-emulated.";
      assert.ok(labels.some((l) => l.includes(half)), labels.join(" "));
      gpu.dispose();
    }
  },
);

// A wider model on hardware: 128 filters take the 128 x 128 tiles, batch 1 splits K.
const wideCfg: NetConfig = { ...cfg, filters: 128, blocks: 2, height: 8, width: 8, moves: 40 };

Deno.test(
  "f16 GPU network matches the CPU f16 twin (tiny and 128-filter models, batch 1 and 8, Winograd auto and F(4x4))",
  f16opts,
  async () => {
    // Tolerance: the GPU and the twin round the same values to f16 except where f32 sums in another
    // order straddle a rounding step (one f16 ulp, 2^-11 relative), compounding over the layers:
    // probs within 2e-3 absolute, values within 5e-3.
    // The 128-filter model also runs with Winograd F(4x4) forced (f16 transforms; its own error,
    // ~1e-5 relative, is far inside the tolerance).
    const runs = [[cfg, "auto"], [wideCfg, "auto"], [wideCfg, 4]] as const;
    for (const [c, winograd] of runs) {
      const w = unevenWeights(c, 9);
      const gpu = await GpuNet.create(ctx!, w, {
        tiled: true,
        fused: true,
        precision: "f16",
        winograd,
      });
      assert.equal(gpu.precision, "f16");
      for (const size of [1, 8]) {
        const batch = syntheticBatch(c, size, 11 + size);
        const want = cpuFusedInfer(w, batch, true);
        const got = await gpu.infer(batch);
        const what = `${c.filters} filters, Winograd ${winograd}, batch ${size}`;
        close(`${what} probs`, got.probs, want.probs, 2e-3);
        close(`${what} value`, got.value, want.value, 5e-3);
      }
      gpu.dispose();
    }
  },
);

Deno.test(
  "f16 WGSL type-checks with s16 bound to i32 (a type f32 never mixes with implicitly): every load and store converts",
  opts,
  async () => {
    // Shader-module validation only (no pipeline build), so the hardware tiles are cheap here.
    for (const t of [HARDWARE_TILES, TEST_TILES]) {
      for (const [name, [src]] of Object.entries(f16Entries(t, "f16-emulated"))) {
        const text = "alias s16 = i32;\n\n" + src.slice(f16Prelude("f16-emulated").length);
        ctx!.device.pushErrorScope("validation");
        const module = ctx!.device.createShaderModule({ code: text, label: name });
        const info = await module.getCompilationInfo();
        const err = await ctx!.device.popErrorScope();
        const msgs = info.messages.filter((m) => m.type === "error").map((m) => m.message);
        assert.ok(!err && msgs.length === 0, `${name}: ${err?.message ?? msgs.join("; ")}`);
      }
    }
    // The check has teeth: a store without its conversion fails to validate.
    const bad = "alias s16 = i32;\n\n" +
      f16MiscSource("f16-emulated").slice(f16Prelude("f16-emulated").length).replace(
        "out[i] = s16(s);",
        "out[i] = s;",
      );
    ctx!.device.pushErrorScope("validation");
    const m = ctx!.device.createShaderModule({ code: bad });
    const info = await m.getCompilationInfo();
    const err = await ctx!.device.popErrorScope();
    assert.ok(
      err || info.messages.some((x) => x.type === "error"),
      "an unconverted store validates",
    );
  },
);
