import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ensureOutputDir } from "../src/cli/paths.ts";
import { type BenchSuite, reportMarkdown, writeReport } from "../src/bench/report.ts";
import { releaseGpu } from "../src/gpu/mod.ts";

// Each suite lives beside the code it measures; add one line per suite.
const SUITES: Record<string, () => Promise<{ suite: BenchSuite }>> = {
  quant: () => import("../src/quant/bench.ts"),
  cfr: () => import("../src/cfr/bench.ts"),
  hive: () => import("../src/hive/bench.ts"),
  uhp: () => import("../src/uhp/bench.ts"),
  ingest: () => import("../src/sgf/bench.ts"),
  warmstart: () => import("../src/poker/warmstart_bench.ts"),
  solve: () => import("../src/poker/bench.ts"),
  "gpu-solve": () => import("../src/poker/gpu_bench.ts"),
  "gpu-mem": () => import("../src/gpu/mem_bench.ts"),
  "gpu-fma": () => import("../src/gpu/fma_bench.ts"),
  nn: () => import("../src/nn/bench.ts"),
  "nn-cells": () => import("../src/nn/cells_bench.ts"),
  "hive-strength": () => import("../src/hiveplayer/strength_bench.ts"),
  "hive-mcts": () => import("../src/hiveplayer/throughput_bench.ts"),
  "hive-selfplay": () => import("../src/alphazero/hive_bench.ts"),
  mcts: () => import("../src/alphazero/bench.ts"),
};

await runMain(async () => {
  const names = Object.keys(SUITES).join("|");
  const args = parseTaskArgs(
    Deno.args,
    `deno task bench <${names}> [--out DIR] [--backend auto|cpu|gpu] [--full]`,
    "Runs a benchmark suite and writes <DIR>/<suite>.json and <DIR>/<suite>.md.",
    {
      out: { type: "string", default: "bench-out", help: "output folder" },
      backend: { type: "string", default: "auto", help: "cpu, gpu or auto" },
      full: { type: "boolean", help: "run the large configuration" },
      refsolve: {
        type: "string",
        help: "solve: the reference solver binary, run interleaved with ours for ratios",
      },
      repeats: { type: "string", help: "solve: repeats of the interleaved runs (default 3)" },
    },
  );
  if (!args) {
    // `deno task bench SUITE --help`: that suite's own arguments as well.
    const named = Deno.args.find((a) => Object.hasOwn(SUITES, a));
    const { suite } = named ? await SUITES[named]() : { suite: null };
    if (suite?.usage) console.log(`\n${named}: ${suite.description}\narguments:\n${suite.usage}`);
    return;
  }
  const [name, ...rest] = args.positionals;
  if (!name) throw new KibitzError("bad_args", `SUITE: missing; give one of ${names}`);
  const load = SUITES[name];
  if (!load) {
    throw new KibitzError("bad_args", `unknown bench suite "${name}": valid suites are ${names}`);
  }
  await ensureOutputDir(String(args.values.out), "--out");
  const { suite } = await load();
  const report = await suite.run({
    full: args.values.full === true,
    backend: String(args.values.backend),
    args: [
      ...rest,
      ...(["refsolve", "repeats"] as const).flatMap((k) =>
        typeof args.values[k] === "string" ? [`--${k}`, String(args.values[k])] : []
      ),
    ],
    log: (line) => console.error(`[${name}] ${line}`),
    out: String(args.values.out),
  });
  console.log(reportMarkdown(report));
  const paths = await writeReport(report, String(args.values.out));
  console.log(`wrote ${paths.join(", ")}`);
  await releaseGpu();
});
