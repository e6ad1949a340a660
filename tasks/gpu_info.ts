import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { describeAdapter, getGpu, gpuSelfTest, releaseGpu } from "../src/gpu/mod.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task gpu-info [--json]",
    "Prints the WebGPU adapter, its features and key limits, and runs a self-test kernel.",
    { json: { type: "boolean", help: "print one JSON object" } },
  );
  if (!args) return;
  const ctx = await getGpu();
  if (!ctx) {
    throw new KibitzError(
      "no_gpu",
      "WebGPU: no adapter found; every feature still works with --backend cpu",
    );
  }
  const test = await gpuSelfTest(ctx);
  if (args.values.json) {
    console.log(
      JSON.stringify({ adapter: ctx.report, timestamps: ctx.timestamps, selfTest: test }),
    );
  } else {
    const r = ctx.report;
    console.log(`adapter:      ${describeAdapter(r)}`);
    console.log(
      `vendor:       ${r.vendor || "-"}  architecture: ${r.architecture || "-"}  device: ${
        r.device || "-"
      }`,
    );
    console.log(
      `backend:      WebGPU (${
        r.isFallback ? "software/fallback adapter: correct but slow" : "hardware"
      })`,
    );
    console.log(`timestamps:   ${ctx.timestamps ? "yes (timestamp-query)" : "no"}`);
    console.log(`features:     ${r.features.join(", ") || "-"}`);
    console.log("limits:");
    for (const [k, v] of Object.entries(r.limits)) console.log(`  ${k.padEnd(36)} ${v}`);
    console.log(
      `self-test:    ${test.ok ? "PASS" : "FAIL"} (${test.n} elements${
        test.ok ? "" : `, ${test.mismatches} wrong, ${test.firstMismatch}`
      })`,
    );
  }
  await releaseGpu();
  if (!test.ok) {
    throw new KibitzError("gpu_selftest", "GPU self-test: the kernels produced wrong results");
  }
});
