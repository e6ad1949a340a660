// The compact readback, f16 input planes and the sparse plane upload on any WebGPU implementation,
// against the full readback and dense f32 planes of the same net: a tiny net (direct kernels, which
// compile in seconds anywhere, Chromium's SwiftShader included) with 40 moves reading back 6 slots
// a position. The browser check runs it in Chromium; compact_probs_test on Deno's adapters.
import type { GpuContext } from "../gpu/device.ts";
import { NET_PRESETS, type NetConfig } from "./config.ts";
import { GpuNet, type NetBatch, type NetOutputs } from "./net.ts";
import { initWeights } from "./params.ts";
import { randomMask } from "./mask_bits.ts";
import { hasFloat16Array } from "./planes.ts";
import { rng } from "./tensor.ts";
import { syntheticBatch } from "./train.ts";

/** Moves and compact slots of the check's net. */
const MOVES = 40, WIDTH = 6;

/**
 * Runs batches that fit the compact readback and some that do not (a row of 7 legal moves, no
 * mask), with f32 and f16 planes, uploaded sparse and dense; returns what differs from the same
 * net reading back every move from dense f32 planes, or where the compact readback or the sparse
 * upload was not used as it should ([] when all agree).
 */
export async function compactReadbackParity(ctx: GpuContext): Promise<string[]> {
  const cfg: NetConfig = { ...NET_PRESETS.tiny, moves: MOVES };
  const net = await GpuNet.create(ctx, initWeights(cfg, 9), { tiled: false, precision: "f32" });
  const bad: string[] = [];
  try {
    net.compactWidth = WIDTH;
    net.compactMinBatch = 1;
    net.sparseMinBatch = 1;
    const next = rng(77);
    const batch = (legal: number[]): NetBatch => ({
      ...syntheticBatch(cfg, legal.length, 40 + legal[0]),
      mask: randomMask(legal.length, MOVES, (r) => legal[r], next),
    });
    const batches = [batch([6, 1, 3]), batch([2, 7, 4]), batch([5, 6]), {
      ...syntheticBatch(cfg, 2, 3),
      mask: undefined,
    }];
    const fits = [true, false, true, false];
    const same = (a: NetOutputs, b: NetOutputs) =>
      a.probs.every((v, k) => Object.is(v, b.probs[k])) &&
      a.value.every((v, k) => Object.is(v, b.value[k]));
    for (const [i, b] of batches.entries()) {
      // The reference: every move read back, dense f32 planes.
      net.compactReadback = false;
      net.sparseUpload = false;
      const want = await net.infer(b);
      net.sparseUpload = true;
      const sparse = net.sparseCalls;
      if (!same(await net.infer(b), want)) bad.push(`batch ${i}: sparse upload`);
      if (net.sparseCalls === sparse) bad.push(`batch ${i}: sparse upload not used`);
      net.compactReadback = true;
      const before = net.compactCalls;
      if (!same(await net.infer(b), want)) bad.push(`batch ${i}: compact readback`);
      if ((net.compactCalls > before) !== fits[i]) {
        bad.push(`batch ${i}: compact readback ${fits[i] ? "not used" : "used"}`);
      }
      if (!hasFloat16Array()) continue;
      // f16 planes of multiples of 1/8 (exact in f16): the f32 plan widens them to the same values.
      const exact = b.planes.map((v) => Math.round(v * 8) / 8);
      net.compactReadback = false;
      const wantExact = await net.infer({ ...b, planes: exact });
      net.compactReadback = true;
      if (!same(await net.infer({ ...b, planes: new Float16Array(exact) }), wantExact)) {
        bad.push(`batch ${i}: f16 planes`);
      }
    }
  } finally {
    net.dispose();
  }
  return bad;
}
