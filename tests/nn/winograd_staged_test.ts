// The column-staged Winograd transforms (src/nn/gpu/winograd_staged.ts) kernel by kernel against
// the one-thread-a-tile ones: winogradStagedParity, the browser check's, on every tile in f32,
// emulated f16 and (on adapters with shader-f16) real f16 activations, at the test twins' 64
// threads and the hardware candidates' 256. The staged transforms inside convs and training:
// winograd_gemm_test and train_f16_test.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { deviceHasF16, loadHalfKernels } from "../../src/nn/gpu/f16.ts";
import { HARDWARE_TILES, TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { STAGED_CASES, winogradStagedParity } from "../../src/nn/gpu/winograd_staged_check.ts";
import { stagedColumns } from "../../src/nn/gpu/winograd_staged.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

Deno.test("a workgroup's tile columns: (m + 2) threads a column, at least one column", () => {
  assert.deepEqual(([7, 6, 4, 2] as const).map((m) => stagedColumns(m, 256)), [28, 32, 42, 64]);
  assert.deepEqual(([7, 6, 4, 2] as const).map((m) => stagedColumns(m, 64)), [7, 8, 10, 16]);
  assert.equal(stagedColumns(7, 4), 1);
});

Deno.test(
  "winogradStagedParity: the staged transforms equal the one-thread-a-tile ones (f32, 64 threads)",
  opts,
  async () => {
    assert.deepEqual(await winogradStagedParity(ctx!), []);
  },
);

Deno.test("winogradStagedParity: emulated f16 activations", opts, async () => {
  const half = await loadHalfKernels(ctx!, TEST_TILES, "f16-emulated");
  assert.deepEqual(await winogradStagedParity(ctx!, half), []);
});

// Real f16 activations where the adapter has shader-f16 (hardware; llvmpipe has not).
Deno.test(
  "winogradStagedParity: real f16 activations, 64 and 256 threads",
  { ...opts, ignore: !ctx || !deviceHasF16(ctx) },
  async () => {
    const half = await loadHalfKernels(ctx!, HARDWARE_TILES, "f16");
    assert.deepEqual(await winogradStagedParity(ctx!, half), []);
    assert.deepEqual(await winogradStagedParity(ctx!, half, STAGED_CASES, 256), []);
  },
);

// The hardware candidates' 256-thread workgroups: F(2x2) on software adapters (llvmpipe takes about
// 25 s to compile F(4x4)'s and 40 s for F(7x7)'s), every tile on hardware adapters.
Deno.test("winogradStagedParity: 256-thread workgroups", opts, async () => {
  const cases = ctx!.report.isFallback ? [STAGED_CASES[0]] : STAGED_CASES;
  assert.deepEqual(await winogradStagedParity(ctx!, null, cases, 256), []);
});
