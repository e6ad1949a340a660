import assert from "node:assert/strict";
import { T1_SPOT } from "../../src/poker/config.ts";
import type { ProbeResult } from "../../src/poker/rss_probe.ts";

// Spots of three sizes, each solved in a process of its own (src/poker/rss_probe.ts), which reads
// its peak RSS (VmHWM) at the end, after writing result.json and solve.bin. Above the runtime's
// stated baseline, the measured peak must be within 15 % of the estimate.
const T2_SIZES = T1_SPOT.replaceAll('"60%, e, a"', '"33%, 66%, 100%, 150%, a"')
  .replaceAll('"2.5x"', '"2.5x, a"').replace(/oop_donk = .*\n/, "");
const SPOTS: [string, string][] = [
  ["T1 f32, 1 thread", `${T1_SPOT}\n[solver]\nthreads = 1\n`],
  [
    "T1 16/16, 2 threads",
    `${T1_SPOT}\n[solver]\nthreads = 2\nregret_bits = 16\nstrategy_bits = 16\n`,
  ],
  ["T2 f32 (5 bet sizes), 1 thread", `${T2_SIZES}\n[solver]\nthreads = 1\n`],
];

async function probe(config: string, dir: string): Promise<ProbeResult> {
  const path = `${dir}/spot.toml`;
  await Deno.writeTextFile(path, config + "max_iterations = 1\ntarget_exploitability_pct = 0\n");
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../src/poker/rss_probe.ts", import.meta.url).pathname,
      path,
      `${dir}/out`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(text.trim().split("\n").at(-1)!);
}

Deno.test({
  name: "memory: measured peak RSS is within 15 % of the estimate above the runtime baseline",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dirs = await Promise.all(SPOTS.map(() => Deno.makeTempDir()));
    try {
      const results = await Promise.all(SPOTS.map(([, c], i) => probe(c, dirs[i])));
      const sizes: number[] = [];
      results.forEach((r, i) => {
        const est = r.estimateBytes - r.baselineBytes, got = r.peakRssBytes - r.baselineBytes;
        sizes.push(est);
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
        sizes[2] > 2 * sizes[0],
        "three sizes: the third spot needs at least twice the first",
      );
    } finally {
      for (const d of dirs) await Deno.remove(d, { recursive: true });
    }
  },
});
