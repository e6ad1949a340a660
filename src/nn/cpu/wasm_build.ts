// The network's Wasm kernels (sources in asm/, built modules beside them), built with the same
// pinned AssemblyScript compiler and flags as the CFR and poker kernels (src/cfr/wasm/build.ts).
import { compileKernel, kernelModule, kernelSource, sourceHash } from "../../cfr/wasm/build.ts";

/** Kernel sources (DIR/asm/NAME.ts under src/) and the modules they build (DIR/NAME_wasm.ts). */
export const NN_KERNELS: { dir: string; name: string }[] = [
  { dir: "nn/cpu", name: "conv" },
  { dir: "nn/cpu", name: "dense" },
];

/** Builds the network's kernels; with `write`, replaces the committed modules. One line each. */
export async function buildNnWasm(write: boolean): Promise<string[]> {
  const report: string[] = [];
  for (const k of NN_KERNELS) {
    const text = await Deno.readTextFile(kernelSource(k));
    const wasm = await compileKernel(k);
    const hash = await sourceHash(text);
    if (write) {
      const out = new URL(`../../${k.dir}/${k.name}_wasm.ts`, import.meta.url);
      await Deno.writeTextFile(out, kernelModule(k.name, wasm, hash));
    }
    report.push(`${k.name}: ${wasm.length} bytes, source ${hash.slice(0, 12)}`);
  }
  return report;
}
