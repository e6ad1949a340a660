// The thin fused 1x1 conv (src/nn/gpu/conv_thin.ts), the heads' convs at large batches: the same
// bits as the unsplit tiled conv it replaces (f32, f16-emulated, and real f16 where the adapter has
// shader-f16), near the CPU reference, and taken exactly where thinConvFits says.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { convFused } from "../../src/nn/cpu/fused.ts";
import { GpuRecorder } from "../../src/nn/gpu/backend.ts";
import {
  THIN_CO_MAX,
  THIN_MIN_COLS,
  thinConvFits,
  thinConvSource,
} from "../../src/nn/gpu/conv_thin.ts";
import { thinConvParity } from "../../src/nn/gpu/conv_thin_check.ts";
import { deviceHasF16, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, TensorPool, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import type { CpuTensor } from "../../src/nn/tensor.ts";
import { maxAbs, maxDiff, randTensor } from "./helpers.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const software = ctx?.report.isFallback && !Deno.env.get("KIBITZ_TILED_TESTS");
const tiles = software ? TEST_TILES : HARDWARE_TILES;
type Storage = "f32" | "f16-emulated" | "f16";
const storages: Storage[] = [
  "f32",
  "f16-emulated",
  ...(ctx && deviceHasF16(ctx) ? ["f16" as const] : []),
];

Deno.test("thinConvFits: 1x1, at most THIN_CO_MAX outputs, at least THIN_MIN_COLS pixels", () => {
  assert.equal(thinConvFits(1, 2, 256 * 676), true);
  assert.equal(thinConvFits(1, THIN_CO_MAX, THIN_MIN_COLS), true);
  assert.equal(thinConvFits(1, 2, 8 * 676), false, "batch 8's heads stay tiled");
  assert.equal(thinConvFits(1, 2, THIN_MIN_COLS - 1), false);
  assert.equal(thinConvFits(1, THIN_CO_MAX + 1, 1 << 20), false);
  assert.equal(thinConvFits(3, 2, 1 << 20), false);
  // The f16 text is the emulated one under the f16 prelude.
  const body = (s: string) => s.slice(s.indexOf("struct Params"));
  assert.ok(thinConvSource("f16").startsWith("enable f16;"));
  assert.equal(body(thinConvSource("f16")), body(thinConvSource("f16-emulated")));
});

/**
 * The fused conv y = act(conv(x, w) + b + res) through convFused with the thin kernel on or off,
 * read back as f32, and the kernels recorded.
 */
async function fusedConv(
  storage: Storage,
  thin: boolean,
  x: CpuTensor,
  w: CpuTensor,
  b: CpuTensor,
  res: CpuTensor | null,
  relu: boolean,
): Promise<{ y: Float32Array; labels: string[] }> {
  const pool = new TensorPool(ctx!);
  const r = new GpuRecorder(ctx!, await loadKernels(ctx!, tiles, "tiled"), pool, true);
  r.thinConv = thin;
  const half = storage !== "f32";
  if (half) r.half = await loadHalfKernels(ctx!, tiles, storage);
  const up = (t: CpuTensor) => uploadTensor(ctx!, t.shape, t.data);
  const h = (t: ReturnType<typeof up>) => half ? r.toHalf(t) : t;
  const gres = res ? h(up(res)) : null;
  const y = r.convFused(h(up(x)), h(up(w)), up(b), gres, relu);
  const out = half ? r.toFull(y) : y;
  r.submit();
  const [got] = await readTensors(ctx!, [out]);
  const labels = r.ops.map((o) => o.label);
  r.destroy();
  pool.destroy();
  return { y: got, labels };
}

// [n, ci, co, h, w]: the heads' kinds (2 and 1 outputs), channel counts that leave a remainder
// after the 8-channel steps, and 3 and 4 outputs; every one at least THIN_MIN_COLS pixels.
const CASES = [
  [4, 64, 2, 70, 60],
  [3, 19, 1, 80, 70],
  [2, 13, 3, 100, 90],
  [5, 8, 4, 60, 60],
];

for (const storage of storages) {
  for (const [n, ci, co, h, wd] of CASES) {
    Deno.test(
      `thin 1x1 conv ${n}x${ci}x${h}x${wd} -> ${co} (${storage}): the tiled kernel's bits, near the CPU`,
      opts,
      async () => {
        const x = randTensor([n, ci, h, wd], 1), w = randTensor([co, ci, 1, 1], 2);
        const b = randTensor([co], 3), res = randTensor([n, co, h, wd], 4);
        for (const [r, relu] of [[res, true], [null, false]] as const) {
          const thin = await fusedConv(storage, true, x, w, b, r, relu);
          const tiled = await fusedConv(storage, false, x, w, b, r, relu);
          assert.ok(thin.labels.includes(storage === "f32" ? "convThinFused" : "convThinFusedH"));
          assert.ok(!tiled.labels.some((l) => l.startsWith("convThin")), tiled.labels.join(" "));
          assert.ok(tiled.labels.some((l) => /^convForward(Wide)?(Fused|Part)/.test(l)));
          assert.equal(maxDiff(thin.y, tiled.y), 0, `${storage}: thin and tiled differ`);
          const want = convFused(x, w, b, r, relu).data;
          // f16 storage rounds x, w, res and y to f16: 2^-9 of the largest output covers it.
          const tol = (storage === "f32" ? 1e-5 : 2 ** -9) * Math.max(1, maxAbs(want));
          const err = maxDiff(thin.y, want);
          assert.ok(err <= tol, `${storage}: ${err} from the CPU > ${tol}`);
        }
      },
    );
  }
}

Deno.test(
  "thinConvParity (the browser check's): the thin kernel equals the direct fused conv",
  opts,
  async () => {
    assert.deepEqual(await thinConvParity(ctx!), []);
  },
);
