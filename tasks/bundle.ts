import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { ensureOutputDir } from "../src/cli/paths.ts";
import { formatBytes } from "../src/poker/memory.ts";
import { BUNDLE_FILES, bundleBrowser } from "../src/build/bundle.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task bundle [--out DIR] [--no-minify]",
    "Builds the browser bundle of the public API (mod.ts): one ES module with the WGSL kernels\n" +
      `inlined, ${BUNDLE_FILES.main}, and the CFR worker-thread entry beside it, ${BUNDLE_FILES.worker}.`,
    {
      out: { type: "string", default: "dist", help: "output folder" },
      "no-minify": { type: "boolean", help: "keep names and whitespace" },
    },
  );
  if (!args) return;
  if (args.positionals.length) {
    throw new KibitzError(
      "bad_args",
      `argument "${args.positionals[0]}": unexpected (this task takes options only)`,
    );
  }
  await ensureOutputDir(String(args.values.out), "--out");
  const r = await bundleBrowser({
    outDir: String(args.values.out),
    minify: args.values["no-minify"] !== true,
  });
  for (const w of r.warnings) console.error(`warning: ${w}`);
  for (const f of r.files) console.log(`wrote ${f.path} (${formatBytes(f.bytes)})`);
});
