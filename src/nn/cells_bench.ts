// `deno task bench nn-cells`: the cells policy head against the fully connected head on the GPU,
// the same tower and batch: inference call and plan time, training step and plan time, and the
// cells kernels' share of the training plan (per-dispatch GPU timing).
import { benchKeyValues, type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, getGpu } from "../gpu/device.ts";
import { callMs, median, planCost } from "./bench_latency.ts";
import { profilePlan } from "./bench_profile.ts";
import { syntheticCellsBatch } from "./cells_batch.ts";
import { type NetConfig, netPreset } from "./config.ts";
import { GpuNet } from "./net.ts";
import { initWeights } from "./params.ts";

const USAGE = [
  "model=NAME     tower preset (default small on hardware, tiny on a software adapter)",
  "batch=1,64,256 batch sizes (default 1,64,256 on hardware, 2 on a software adapter)",
  "width=N        move-table entries a position (default 96; legal moves past it are dropped)",
  "hidden=N       the cells head's hidden channels (default 16; planes 16, biases 17)",
].join("\n");

function intList(kv: Map<string, string>, key: string, def: string): number[] {
  return (kv.get(key) ?? def).split(",").filter((x) => x).map((x) => {
    const v = Number(x);
    if (!Number.isInteger(v) || v < 1) {
      throw new KibitzError("bad_args", `nn-cells: ${key}= takes positive integers, got "${x}"`);
    }
    return v;
  });
}

/** The suite: one row per (batch, head). */
export const suite: BenchSuite = {
  description:
    "nn-cells: GPU inference and training, cells policy head vs fully connected head, same tower",
  usage: USAGE,
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("nn-cells", opts.args);
    for (const k of kv.keys()) {
      if (!["model", "batch", "width", "hidden"].includes(k)) {
        throw new KibitzError(
          "bad_args",
          `nn-cells: unknown argument "${k}=": valid are model=, batch=, width=, hidden=`,
        );
      }
    }
    if (opts.backend === "cpu") {
      throw new KibitzError("bad_args", "nn-cells: a GPU bench (--backend gpu or auto)");
    }
    const ctx = await getGpu();
    if (!ctx) throw new KibitzError("no_gpu", "nn-cells: no WebGPU adapter found");
    const soft = ctx.report.isFallback;
    const tower = netPreset(kv.get("model") ?? (soft ? "tiny" : "small"));
    const batches = intList(kv, "batch", soft ? "2" : "1,64,256");
    const [width] = intList(kv, "width", "96");
    const [hidden] = intList(kv, "hidden", "16");
    const cellsCfg: NetConfig = { ...tower, cells: { hidden, planes: 16, biases: 17 } };
    const budget = soft ? 0 : 1500;
    const report = newReport("nn-cells", describeAdapter(ctx.report));
    const rows: (string | number | null)[][] = [];
    report.tables.push({
      title:
        `${tower.blocks} x ${tower.filters} tower, ${tower.height}x${tower.width}, ${tower.moves} moves; ` +
        `cells head hidden ${hidden}, 16 planes, 17 biases; move table ${width} entries a position`,
      columns: [
        "head",
        "batch",
        "infer call ms",
        "infer plan GPU ms",
        "train step ms",
        "train plan GPU ms",
        "cells kernels ms (train plan)",
        "policy head params",
      ],
      rows,
    });
    const hyper = { lr: 0, momentum: 0.9, weightDecay: 1e-4 };
    for (const size of batches) {
      // One batch for both heads: the FC head ignores the table (the mask is the table's moves).
      const batch = syntheticCellsBatch(cellsCfg, size, width, 5);
      for (const [head, cfg] of [["fc", tower], ["cells", cellsCfg]] as const) {
        const w = initWeights(cfg, 3);
        const params = w.specs.filter((s) => s.name.startsWith("policy."))
          .reduce((a, s) => a + s.shape.reduce((x, y) => x * y, 1), 0);
        const net = await GpuNet.create(ctx, w);
        try {
          const call = await callMs(net, batch, budget);
          const inferPlan = (await planCost(ctx, net, size)).gpuMs;
          const steps: number[] = [];
          const t0 = performance.now();
          do {
            const t = performance.now();
            await net.trainStep(batch, hyper);
            steps.push(performance.now() - t);
          } while (performance.now() - t0 < budget || steps.length < 3);
          const prof = await profilePlan(ctx, await net.planFor(size, true), {
            warmMs: soft ? 0 : 300,
            samples: soft ? 1 : 3,
          });
          const cellsMs = prof.rows.filter((r) => r.kernel.startsWith("cell"))
            .reduce((a, r) => a + r.ms, 0);
          rows.push([
            head,
            size,
            call,
            inferPlan,
            median(steps),
            prof.planMs,
            head === "cells" ? cellsMs : null,
            params,
          ]);
          opts.log(
            `${head} batch ${size}: infer ${call.toFixed(2)} ms, step ${
              median(steps).toFixed(2)
            } ms`,
          );
        } finally {
          net.dispose();
        }
      }
    }
    report.notes.push(
      "Wall-clock medians (call: upload, plan, readback); plan GPU ms: timestamp queries where " +
        "the adapter has them, else wall clock of one submitted pass. Compare rows of one run only.",
    );
    return report;
  },
};
