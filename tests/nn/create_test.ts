// createNet's backends: `auto` takes a hardware GPU, else the fast CPU ops (never a software
// adapter, tens of times slower than the CPU for these networks); the explicit names do as told.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { createNet } from "../../src/nn/create.ts";
import { CpuNet, GpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";

const ctx = await getGpu();
const w = initWeights({ ...NET_PRESETS.tiny, blocks: 1, filters: 4 }, 2);

Deno.test({
  name: "createNet: auto is a hardware GPU, else the fast CPU ops; cpu, cpu-fast, gpu as named",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const auto = await createNet(w, "auto");
    if (ctx && !ctx.report.isFallback) assert(auto instanceof GpuNet);
    else assert(auto instanceof CpuNet && auto.fastOps, "auto: the fast CPU ops");
    auto.dispose();
    const ref = await createNet(w, "cpu");
    assert(ref instanceof CpuNet && !ref.fastOps, "cpu: the reference ops");
    const fast = await createNet(w, "cpu-fast");
    assert(fast instanceof CpuNet && fast.fastOps);
    if (ctx) {
      // Named, a software adapter is still used (tests and CI run the kernels there this way).
      const gpu = await createNet(w, "gpu");
      assert(gpu instanceof GpuNet);
      gpu.dispose();
    }
    await assert.rejects(() => createNet(w, "tpu"), /unknown backend "tpu"/);
  },
});
