import { buildWasm } from "../src/cfr/wasm/build.ts";
import { runMain } from "../src/cli/main.ts";
import { parseTaskArgs } from "../src/cli/args.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task build-wasm",
    "Compiles the AssemblyScript kernels (src/{cfr,poker}/wasm/asm/) into their *_wasm.ts modules.",
    {},
  );
  if (!args) return;
  for (const line of await buildWasm(true)) console.log(line);
});
