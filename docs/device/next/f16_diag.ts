// Session 29 device diagnostic (hardware with shader-f16 only): how far real f16 training (f16 V,
// M and dM) moves each weight tensor from f32 training, as a fraction of what f32 training moved
// it, after 1 and 3 steps, beside an f32 run with another GEMM tiling (rounding-level control);
// and how far real-f16 bridged Winograd chains are from separate transforms. Prints JSON lines.
import { getGpu } from "../../../src/gpu/device.ts";
import { NET_PRESETS, type NetConfig } from "../../../src/nn/config.ts";
import { deviceHasF16 } from "../../../src/nn/gpu/f16.ts";
import { TEST_TILES } from "../../../src/nn/gpu/kernels.ts";
import { testCandidates } from "../../../src/nn/gpu/winograd_gemm.ts";
import { CpuNet, GpuNet, type TrainPrecision } from "../../../src/nn/net.ts";
import { initWeights, type NetWeights } from "../../../src/nn/params.ts";
import { syntheticBatch } from "../../../src/nn/train.ts";
import { maxDiff } from "../../../tests/nn/helpers.ts";

const ctx = await getGpu();
// DIAG_EMULATE=1: a dry run where f16 is emulated by f32 storage (every f16 figure then 0).
const emulate = Deno.env.get("DIAG_EMULATE") === "1";
if (!ctx || (!emulate && !deviceHasF16(ctx))) throw new Error("f16_diag: needs shader-f16");
const cfg = { ...NET_PRESETS.tiny, filters: 16, blocks: 2 };
const hyper = { lr: 0.05, momentum: 0.9, weightDecay: 1e-4 };
const vec = testCandidates().filter((c) => !c.half && !c.gemm?.f16k && c.gemm?.vecA);

async function train(p: TrainPrecision, gemm: string, steps: number): Promise<NetWeights> {
  const net = await GpuNet.create(ctx!, initWeights(cfg, 3), {
    tiled: true,
    tiles: TEST_TILES,
    winograd: 4,
    winogradGemm: gemm,
    wgradGemm: "vp",
    trainPrecision: p,
  });
  for (let s = 0; s < steps; s++) await net.trainStep(syntheticBatch(cfg, 5, 20 + s), hyper);
  const w = await net.weights();
  net.dispose();
  return w;
}

const w0 = initWeights(cfg, 3);
for (const steps of [1, 3]) {
  const a = await train("f32", vec[0].name, steps);
  const b = await train(emulate ? "f16-emulated" : "f16", vec[0].name, steps);
  const c = await train("f32", (vec[1] ?? vec[0]).name, steps);
  for (const [name, t] of a.tensors) {
    if (!/conv|fc/.test(name)) continue;
    const upd = maxDiff(t.data, w0.tensors.get(name)!.data);
    const f16 = maxDiff(b.tensors.get(name)!.data, t.data) / upd;
    const f32 = maxDiff(c.tensors.get(name)!.data, t.data) / upd;
    console.log(JSON.stringify({ train: steps, name, upd, f16OfUpd: f16, otherTilingOfUpd: f32 }));
  }
}

const base = { planes: 4, moves: 12, valueHidden: 16, filters: 8 };
const configs: NetConfig[] = [
  { ...NET_PRESETS.tiny, ...base, blocks: 2, height: 7, width: 7 },
  { ...NET_PRESETS.tiny, ...base, blocks: 1, height: 6, width: 9 },
  { ...NET_PRESETS.tiny, ...base, blocks: 1, height: 18, width: 18 },
];
for (const cfg of configs) {
  const w = initWeights(cfg, 17);
  const batch = syntheticBatch(cfg, 3, 6);
  const want = await new CpuNet(w).infer(batch);
  const make = (winogradBridge: boolean) =>
    GpuNet.create(ctx, w, {
      tiled: true,
      tiles: TEST_TILES,
      fused: true,
      winograd: 4,
      winogradGemm: "legacy",
      ...(emulate ? { f16Emulate: true } : { precision: "f16" as const }),
      winogradBridge,
    });
  const [on, off] = await Promise.all([make(true), make(false)]);
  const a = await on.infer(batch), b = await off.infer(batch);
  console.log(JSON.stringify({
    bridge: `${cfg.height}x${cfg.width}`,
    probs: maxDiff(a.probs, b.probs),
    value: maxDiff(a.value, b.value),
    bridgedVsCpu: maxDiff(a.probs, want.probs),
    separateVsCpu: maxDiff(b.probs, want.probs),
  }));
  on.dispose();
  off.dispose();
}
