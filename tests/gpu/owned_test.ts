// GPU memory of one pass is freed on every exit. withOwned destroys what a pass owned, latest first,
// when it returns and when it throws. Then every readback, parity check and update that allocates
// GPU buffers runs on a device that fails its k-th buffer allocation, for each k up to the number
// the run makes. Each time, every buffer made before the failure must be destroyed afterwards. The
// device itself must see each one as destroyed: a write to it fails validation.
import assert from "node:assert/strict";
import { faultyGpu } from "../helpers/gpu_faults.ts";
import { writeFails } from "../helpers/gpu_freed.ts";
import { getGpu, type GpuContext, readBuffer, storageBuffer } from "../../src/gpu/mod.ts";
import { readStaging } from "../../src/gpu/buffers.ts";
import { GpuCfrSolver } from "../../src/cfr/gpu/solver.ts";
import { CfrSolver } from "../../src/cfr/solver.ts";
import { buildTree } from "../../src/cfr/tree.ts";
import { kuhnGame } from "../../src/games/kuhn.ts";
import { withOwned, withRollback } from "../../src/gpu/owned.ts";
import { fcBothWays } from "../../src/nn/gpu/fc_check.ts";
import { thinConvParity } from "../../src/nn/gpu/conv_thin_check.ts";
import { winogradMixedParity } from "../../src/nn/gpu/winograd_mixed_check.ts";
import { TEST_TILES } from "../../src/nn/gpu/kernels.ts";
import { readTensors, uploadTensor } from "../../src/nn/gpu/tensor.ts";
import {
  createQuantStore,
  destroyGpuQuantStore,
  gpuUpdate,
  uploadQuantStore,
} from "../../src/quant/mod.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const COPY_DST = 0x8;

Deno.test("withOwned destroys what the pass owned, latest first, on return and on throw", async () => {
  for (const ending of ["returns", "throws"] as const) {
    const order: string[] = [];
    const item = (name: string) => ({ destroy: () => order.push(name) });
    const pass = withOwned(async (own) => {
      own(item("pool"));
      await Promise.resolve();
      own(item("recorder"));
      own(item("buffer"));
      if (ending === "throws") throw new Error("lost");
      return 7;
    });
    if (ending === "throws") await assert.rejects(pass, /lost/);
    else assert.equal(await pass, 7);
    assert.deepEqual(order, ["buffer", "recorder", "pool"], ending);
  }
});

Deno.test("withRollback keeps what was built when it returns and destroys it when it throws", async () => {
  for (const ending of ["returns", "throws"] as const) {
    const order: string[] = [];
    const item = (name: string) => ({ destroy: () => order.push(name) });
    const build = withRollback(async (keep) => {
      keep(item("buffers"));
      await Promise.resolve();
      keep(item("bind group"));
      if (ending === "throws") throw new Error("out of memory");
      return 3;
    });
    if (ending === "throws") await assert.rejects(build, /out of memory/);
    else assert.equal(await build, 3);
    assert.deepEqual(order, ending === "throws" ? ["bind group", "buffers"] : [], ending);
  }
});

/** Fails unless every writable buffer in `made` is destroyed (the others cannot be probed). */
async function assertFreed(made: GPUBuffer[], what: string): Promise<void> {
  for (const [i, b] of made.entries()) {
    if (b.usage & COPY_DST) {
      assert.ok(await writeFails(ctx!, b), `${what}: buffer ${i} (${b.label}) lives`);
    }
  }
}

/**
 * Runs `pass` once to count its buffers, then once failing at each of them; every run must leave
 * none alive. Returns how many buffers a whole run makes.
 */
async function freedOnEveryExit(
  name: string,
  pass: (c: GpuContext) => Promise<unknown>,
): Promise<number> {
  const whole = faultyGpu(ctx!);
  await pass(whole.ctx);
  await assertFreed(whole.made, `${name}, whole run`);
  for (let k = 1; k <= whole.made.length; k++) {
    const run = faultyGpu(ctx!, { failAt: k });
    await assert.rejects(pass(run.ctx), /injected/, `${name}: failing at buffer ${k}`);
    assert.equal(run.made.length, k - 1);
    await assertFreed(run.made, `${name}, failing at buffer ${k}`);
  }
  return whole.made.length;
}

Deno.test(
  "the probe sees a live buffer as live and a destroyed one as destroyed",
  opts,
  async () => {
    const b = storageBuffer(ctx!, 16, "probe");
    assert.equal(await writeFails(ctx!, b), false);
    b.destroy();
    assert.ok(await writeFails(ctx!, b));
  },
);

Deno.test("readbacks free their staging buffer on every exit", opts, async () => {
  const src = storageBuffer(ctx!, new Float32Array([1, 2, 3]), "src");
  const t = uploadTensor(ctx!, [5], new Float32Array([1, 2, 3, 4, 5]), "t");
  assert.equal(await freedOnEveryExit("readBuffer", (c) => readBuffer(c, src, 12)), 1);
  assert.equal(await freedOnEveryExit("readTensors", (c) => readTensors(c, [t, t])), 1);
  // A map that fails (a buffer that cannot be mapped for reading) still destroys it.
  const unmappable = ctx!.device.createBuffer({ size: 16, usage: COPY_DST });
  ctx!.device.pushErrorScope("validation");
  await assert.rejects(readStaging(unmappable));
  assert.ok(await ctx!.device.popErrorScope(), "mapping it fails validation");
  assert.ok(await writeFails(ctx!, unmappable));
  src.destroy();
  t.buffer.destroy();
});

Deno.test("parity checks free their buffers on every exit", opts, async () => {
  const fc = await freedOnEveryExit("fcBothWays", async (c) => {
    const { out } = await fcBothWays(c, TEST_TILES, [9, 5, 12], 3);
    assert.equal(out.length, 2);
  });
  const thin = await freedOnEveryExit("thinConvParity", async (c) => {
    assert.deepEqual(await thinConvParity(c, [[3, 13, 3, 7, 5]]), []);
  });
  const mixed = await freedOnEveryExit("winogradMixedParity", async (c) => {
    assert.deepEqual(await winogradMixedParity(c, [[2, 5, 3, 13, 13]]), []);
  });
  assert.ok(fc >= 6 && thin >= 9 && mixed >= 12, `${fc} ${thin} ${mixed} buffers`);
});

Deno.test(
  "a quantized update that fails on a non-finite result frees its parameters",
  opts,
  async () => {
    const tracked = faultyGpu(ctx!);
    const g = uploadQuantStore(tracked.ctx, createQuantStore("u8", [4]));
    const before = tracked.made.length;
    const input = storageBuffer(ctx!, new Float32Array([1, Infinity, 2, 3]), "input");
    const key = { seed: 1, iteration: 1, mode: "nearest" as const };
    await assert.rejects(gpuUpdate(g, "set", input, 0, 0, key), /non-finite|NaN|infinite/i);
    const params = tracked.made.slice(before);
    assert.ok(params.length >= 1, "the update made its parameter buffer");
    await assertFreed(params, "gpuUpdate");
    destroyGpuQuantStore(g);
    input.destroy();
  },
);

Deno.test(
  "a GPU solve's creation and store readback free their buffers on every exit",
  opts,
  async () => {
    const game = kuhnGame(), tree = buildTree(game);
    const cpu = new CfrSolver(tree, game, { regretBits: 8, strategyBits: 8, algorithm: "dcfr+" });
    const made = await freedOnEveryExit("GpuCfrSolver create + copyTo", async (c) => {
      const gpu = await GpuCfrSolver.create(c, tree, game, cpu.options);
      try {
        gpu.run(3);
        await gpu.copyTo(cpu);
      } finally {
        gpu.destroy();
      }
    });
    assert.equal(cpu.iteration, 3);
    assert.ok(made >= 5, `${made} buffers`);
  },
);
