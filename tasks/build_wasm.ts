import { buildWasm } from "../src/poker/wasm/build.ts";
import { runMain } from "../src/cli/main.ts";
import { parseTaskArgs } from "../src/cli/args.ts";

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task build-wasm",
    "Compiles the AssemblyScript kernels (src/poker/wasm/asm/) into src/poker/wasm/*_wasm.ts.",
    {},
  );
  if (!args) return;
  for (const line of await buildWasm(true)) console.log(line);
});
