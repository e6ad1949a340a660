import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { runMain } from "../src/cli/main.ts";
import { describeAdapter, getGpu, releaseGpu, resolveBackend } from "../src/gpu/mod.ts";
import { cpuSpeed, gpuSpeed, roundTripError } from "../src/quant/bench.ts";
import { QUANT_FORMATS, storeBytes } from "../src/quant/mod.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task quant-demo [--backend auto|cpu|gpu] [--elements N]",
    "Quantized storage demo: bytes per element, round-trip error and update speed of every format.",
    {
      backend: { type: "string", default: "auto", help: "cpu, gpu or auto (GPU when one exists)" },
      elements: { type: "string", default: "262144", help: "elements per measurement" },
    },
  );
  if (!args) return;
  const n = intOption(args.values, "elements", 262144, 256, 1 << 26);
  const backend = await resolveBackend(String(args.values.backend));
  const ctx = backend === "gpu" ? await getGpu() : null;
  console.log(`backend: ${ctx ? `gpu, ${describeAdapter(ctx.report)}` : "cpu"}`);
  console.log(
    `\n${"format".padEnd(7)} ${"bytes/elem".padStart(10)} ${
      "max rel err".padStart(12)
    }  update elements/s`,
  );
  for (const format of QUANT_FORMATS) {
    const bpe = storeBytes(format, n, n / 256) / n;
    const err = roundTripError(format);
    const op = format.startsWith("u") ? "strategy" : "dcfr";
    const speed = ctx
      ? await gpuSpeed(ctx, op, format, n, 256)
      : await cpuSpeed(op, format, n, 256);
    console.log(
      `${format.padEnd(7)} ${bpe.toFixed(4).padStart(10)} ${err.toExponential(2).padStart(12)}  ${
        (speed.elementsPerSecond / 1e6).toFixed(1)
      } M/s (${op})`,
    );
  }
  console.log(
    "\nmax rel err: largest |decode(encode(x)) - x| / block max, nearest rounding, blocks of 256.",
  );
  await releaseGpu();
});
