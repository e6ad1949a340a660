import { encodeBase64 } from "./base64.ts";

/** The AssemblyScript compiler, pinned (its output is committed, so a rebuild must match). */
export const ASC = "npm:assemblyscript@0.28.9/asc";
/** Compiler flags of every kernel: 128-bit SIMD, no runtime (the JS side lays out memory). */
export const ASC_FLAGS = ["--enable", "simd", "-O3", "--runtime", "stub", "--noAssert"];
/** Extra flags of a kernel that runs on a shared memory its threads import (env.memory). */
export const SHARED_MEMORY_FLAGS = [
  "--enable",
  "threads",
  "--importMemory",
  "--sharedMemory",
  "--maximumMemory",
  "65536",
  "--noExportMemory",
];

/**
 * One kernel build: DIR/asm/NAME.ts into DIR/OUT_wasm.ts (OUT: NAME unless given), with `flags`
 * after ASC_FLAGS.
 */
export interface Kernel {
  dir: string;
  name: string;
  out?: string;
  deps?: string[];
  flags?: string[];
}

/**
 * Kernel sources (DIR/asm/NAME.ts under src/) and the modules they build (DIR/NAME_wasm.ts):
 * the CFR engine's own, then the games'. `deps`: the other kernel sources (src/-relative) the
 * source imports, hashed with it.
 */
export const KERNELS: Kernel[] = [
  { dir: "cfr/wasm", name: "regret" },
  { dir: "poker/wasm", name: "terminal" },
  {
    dir: "poker/wasm",
    name: "walk",
    deps: ["poker/wasm/asm/terminal.ts", "cfr/wasm/asm/regret.ts", "cfr/wasm/asm/quant.ts"],
  },
  {
    // The same walk on a memory it imports, shared between threads (each thread's instance keeps
    // its own globals and scratch); declared up to 4 GiB, the JS side creates it at the size needed.
    dir: "poker/wasm",
    name: "walk",
    out: "walk_mt",
    deps: ["poker/wasm/asm/terminal.ts", "cfr/wasm/asm/regret.ts", "cfr/wasm/asm/quant.ts"],
    flags: SHARED_MEMORY_FLAGS,
  },
];

const src = new URL("../../", import.meta.url);

/** The source file of a kernel. */
export function kernelSource(k: { dir: string; name: string }): URL {
  return new URL(`${k.dir}/asm/${k.name}.ts`, src);
}

/** The text a kernel's recorded hash covers: its source, then each source it imports. */
export async function kernelText(k: Kernel): Promise<string> {
  let text = await Deno.readTextFile(kernelSource(k));
  for (const d of k.deps ?? []) text += await Deno.readTextFile(new URL(d, src));
  return text;
}

/** SHA-256 of a source text, hex: recorded in the built module so a test sees a stale binary. */
export async function sourceHash(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compiles one kernel source with asc into bytes (needs the npm registry or its cache). */
export async function compileKernel(k: Kernel): Promise<Uint8Array> {
  const name = k.name, path = kernelSource(k).pathname;
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/${name}.wasm`;
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ASC, path, "-o", out, ...ASC_FLAGS, ...k.flags ?? []],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!r.success) {
      throw new Error(`asc ${name}: ${new TextDecoder().decode(r.stderr).trim()}`);
    }
    return await Deno.readFile(out);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The TypeScript module that carries a built kernel (base64, so bundles need no file loads). */
export function kernelModule(name: string, wasm: Uint8Array, hash: string): string {
  const b64 = encodeBase64(wasm);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 96) lines.push(`  "${b64.slice(i, i + 96)}"`);
  return `// Built by \`deno task build-wasm\` from asm/${name}.ts: do not edit.\n\n` +
    `/** SHA-256 of asm/${name}.ts when this binary was built. */\n` +
    `export const SOURCE_SHA256 = "${hash}";\n\n` +
    `/** The compiled module, base64. */\n` +
    `export const WASM_BASE64 =\n${lines.join(" +\n")};\n`;
}

/** Builds every kernel; with `write`, replaces the committed modules. Returns one line per kernel. */
export async function buildWasm(write: boolean): Promise<string[]> {
  const report: string[] = [];
  for (const k of KERNELS) {
    const name = k.out ?? k.name;
    const text = await kernelText(k);
    const wasm = await compileKernel(k);
    const hash = await sourceHash(text);
    if (write) {
      const out = new URL(`${k.dir}/${name}_wasm.ts`, src);
      await Deno.writeTextFile(out, kernelModule(k.name, wasm, hash));
    }
    report.push(`${name}: ${wasm.length} bytes, source ${hash.slice(0, 12)}`);
  }
  return report;
}
