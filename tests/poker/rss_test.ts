import assert from "node:assert/strict";
import { T1_SPOT } from "../../src/poker/config.ts";
import { type ProbeResult, runRssProbe } from "../../src/poker/rss_probe.ts";
import { estimateMemory, type GameSize, GPU_PROBE_BYTES } from "../../src/poker/memory.ts";

// Spots of three sizes, each solved in a process of its own (src/poker/rss_probe.ts), which reads
// its peak RSS (VmHWM) at the end, after writing result.json and solve.bin. Above the runtime's
// stated baseline, the measured peak must be within 15 % of the estimate. The solves say
// backend = "cpu": "auto" would also load the WebGPU driver (GPU_PROBE_BYTES, tested below).
// T1's board and stacks with T2's bet sizes; T3 adds wider ranges (about 2x the hands). Big enough
// that V8's heap sizing (a few MB from run to run) stays well inside the tolerance.
const T2 = T1_SPOT.replaceAll('"60%, e, a"', '"33%, 66%, 100%, 150%, a"')
  .replaceAll('"2.5x"', '"2.5x, a"').replace(/oop_donk = .*\n/, "");
const T3 = T2.replace(
  /^oop = .*$/m,
  'oop = "22+,A2s+,K5s+,Q8s+,J8s+,T7s+,96s+,85s+,75s+,64s+,54s,A8o+,KTo+,QTo+,JTo"',
).replace(
  /^ip = .*$/m,
  'ip = "22+,A2s+,K2s+,Q5s+,J7s+,T7s+,96s+,85s+,74s+,63s+,53s+,43s,A2o+,K9o+,Q9o+,J9o+,T9o"',
);
const SPOTS: [string, string][] = [
  ["T2 f32, 1 thread", `${T2}\n[solver]\nbackend = "cpu"\nthreads = 1\n`],
  [
    "T3 16/16, 2 threads",
    `${T3}\n[solver]\nbackend = "cpu"\nthreads = 2\nregret_bits = 16\nstrategy_bits = 16\n`,
  ],
  ["T3 f32, 1 thread", `${T3}\n[solver]\nbackend = "cpu"\nthreads = 1\n`],
  // The threaded Wasm walk: its workers (WALK_WORKER_BYTES) and task rows.
  ["T2 f32, 3 threads", `${T2}\n[solver]\nbackend = "cpu"\nthreads = 3\n`],
  // Quantized stores on the threaded Wasm walk, 15 walk workers (memory does not need the cores).
  [
    "T2 16/16, 16 threads",
    `${T2}\n[solver]\nbackend = "cpu"\nthreads = 16\nregret_bits = 16\nstrategy_bits = 16\n`,
  ],
];

async function probe(config: string, dir: string): Promise<ProbeResult> {
  const path = `${dir}/spot.toml`;
  await Deno.writeTextFile(path, config + "max_iterations = 1\ntarget_exploitability_pct = 0\n");
  return await runRssProbe(path, `${dir}/out`);
}

Deno.test({
  name: "memory: measured peak RSS is within 15 % of the estimate above the runtime baseline",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dirs = await Promise.all(SPOTS.map(() => Deno.makeTempDir()));
    try {
      // One at a time: solves running side by side shift V8's GC timing, and with it the peak.
      const results: ProbeResult[] = [];
      for (let i = 0; i < SPOTS.length; i++) results.push(await probe(SPOTS[i][1], dirs[i]));
      const sizes: number[] = [];
      results.forEach((r, i) => {
        const est = r.estimateBytes - r.baselineBytes, got = r.peakRssBytes - r.baselineBytes;
        sizes.push(est);
        console.log(
          `${SPOTS[i][0]}: peak - baseline ${(got / 2 ** 20).toFixed(1)} MB, estimate - baseline ${
            (est / 2 ** 20).toFixed(1)
          } MB (${(100 * (got / est - 1)).toFixed(1)} %)`,
        );
        const mb = (x: number) => (x / 2 ** 20).toFixed(1);
        assert.ok(r.baselineBytes > 0 && r.peakRssBytes > r.baselineBytes, SPOTS[i][0]);
        assert.ok(
          Math.abs(got - est) <= 0.15 * est,
          `${SPOTS[i][0]}: peak ${mb(r.peakRssBytes)} MB, estimate ${mb(r.estimateBytes)} MB ` +
            `(above the ${mb(r.baselineBytes)} MB baseline: ${mb(got)} vs ${mb(est)} MB)`,
        );
        // The files were written (the peak includes writing them).
        assert.ok(Deno.statSync(`${dirs[i]}/out/solve.bin`).size > 0);
      });
      assert.ok(
        sizes[0] < sizes[1] && sizes[1] < sizes[2],
        "three sizes, growing (the first three)",
      );
      assert.ok(sizes[2] > 1.5 * sizes[0], "the largest at least 1.5x the smallest");
    } finally {
      for (const d of dirs) await Deno.remove(d, { recursive: true });
    }
  },
});

Deno.test("memory: looking for a WebGPU adapter (backend auto or gpu) is in the estimate", () => {
  const size = { publicNodes: 1000, decisionNodes: 100, elements: 10_000 } as GameSize;
  const base = { algorithm: "dcfr", regretBits: 32, strategyBits: 32 } as const;
  const cpu = estimateMemory(size, { ...base, backend: "cpu" }, [10, 10]);
  const auto = estimateMemory(size, { ...base, backend: "auto" }, [10, 10]);
  assert.equal(cpu.gpuProbeBytes, 0);
  assert.equal(auto.gpuProbeBytes, GPU_PROBE_BYTES);
  assert.equal(auto.total - cpu.total, GPU_PROBE_BYTES);
  // auto where no hardware GPU can exist (hardwareGpuAbsent): no probe, no driver.
  const shape = { threads: 1, levels: 0, maxActions: 0 };
  const skipped = estimateMemory(size, { ...base, backend: "auto" }, [10, 10], 0, {
    ...shape,
    gpuProbe: false,
  });
  assert.equal(skipped.gpuProbeBytes, 0);
  assert.equal(skipped.total, cpu.total);
});
