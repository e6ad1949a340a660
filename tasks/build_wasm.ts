import { buildWasm } from "../src/cfr/wasm/build.ts";
import { buildNnWasm } from "../src/nn/cpu/wasm_build.ts";
import { runMain } from "../src/cli/main.ts";
import { parseTaskArgs } from "../src/cli/args.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task build-wasm",
    "Compiles the AssemblyScript kernels (src/{cfr,poker}/wasm/asm/, src/nn/cpu/asm/) into their\n" +
      "*_wasm.ts modules.",
    {},
  );
  if (!args) return;
  for (const line of await buildWasm(true)) console.log(line);
  for (const line of await buildNnWasm(true)) console.log(line);
});
