// Browser bundle of the public API: `mod.ts` as one ES module (WGSL inlined as text, the npm
// dependencies included) plus the CFR worker-thread entry beside it. Built with esbuild, which
// does not resolve Deno's `npm:` imports or text imports itself: the plugins below do both.
import * as esbuild from "esbuild";
import { KibitzError } from "../errors.ts";

/** File names of the bundle's two outputs. */
export const BUNDLE_FILES = { main: "kibitz.js", worker: "kibitz-worker.js" } as const;

/** What bundleBrowser wrote. */
export interface BundleResult {
  files: { path: string; bytes: number }[];
  warnings: string[];
}

/** Options of bundleBrowser. */
export interface BundleOptions {
  /** Output folder (created if missing). */
  outDir: string;
  /** Minify identifiers and whitespace (default true). */
  minify?: boolean;
}

const root = new URL("../../", import.meta.url);

function path(rel: string): string {
  return decodeURIComponent(new URL(rel, root).pathname);
}

/** The npm packages of deno.json's import map, as name -> version. */
async function npmImports(): Promise<Map<string, string>> {
  const cfg = JSON.parse(await Deno.readTextFile(path("deno.json")));
  const out = new Map<string, string>();
  for (const [name, spec] of Object.entries(cfg.imports ?? {})) {
    const m = /^npm:(@?[^@]+)@(.+)$/.exec(String(spec));
    if (m && m[1] === name) out.set(name, m[2]);
  }
  return out;
}

async function denoJson(args: string[]): Promise<Record<string, string>> {
  const out = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new KibitzError(
      "bundle_failed",
      `deno ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Picks the browser ES module entry from a package.json `exports` value. */
function exportEntry(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  for (const key of ["browser", "import", "default", "."]) {
    if (key in v) {
      const hit = exportEntry(v[key]);
      if (hit) return hit;
    }
  }
  return null;
}

/** Resolves the import map's npm packages to their files in Deno's npm cache. */
async function npmPlugin(): Promise<esbuild.Plugin> {
  const packages = await npmImports();
  // Make sure every package is in the cache (a fresh clone may not have run anything yet).
  await denoJson(["info", "--json", path("mod.ts")]);
  const cache = (await denoJson(["info", "--json"])).npmCache;
  const dirs = new Map<string, string>();
  for (const [name, version] of packages) {
    dirs.set(name, `${cache}/registry.npmjs.org/${name}/${version}`);
  }
  const names = [...packages.keys()].map((n) => n.replace(/[/\\^$.*+?()[\]{}|-]/g, "\\$&"));
  return {
    name: "deno-npm",
    setup(b) {
      if (names.length === 0) return;
      b.onResolve({ filter: new RegExp(`^(${names.join("|")})$`) }, async (args) => {
        const dir = dirs.get(args.path)!;
        let pkg: Record<string, unknown>;
        try {
          pkg = JSON.parse(await Deno.readTextFile(`${dir}/package.json`));
        } catch {
          throw new KibitzError(
            "bundle_failed",
            `npm package ${args.path} is not in Deno's cache at ${dir}; run \`deno cache mod.ts\``,
          );
        }
        const exp = pkg.exports as Record<string, unknown> | string | undefined;
        const entry =
          (typeof exp === "object" && exp && "." in exp ? exportEntry(exp["."]) : null) ??
            exportEntry(exp) ?? (pkg.module as string | undefined) ?? (pkg.main as string) ??
            "index.js";
        return { path: `${dir}/${entry.replace(/^\.\//, "")}` };
      });
    },
  };
}

/** WGSL imported `with { type: "text" }` becomes a string constant. */
const wgslPlugin: esbuild.Plugin = {
  name: "wgsl-text",
  setup(b) {
    b.onLoad({ filter: /\.wgsl$/ }, async (args) => ({
      contents: await Deno.readTextFile(args.path),
      loader: "text",
    }));
  },
};

/** The worker pool starts `./worker.ts` beside its module; in the bundle that file is the worker bundle. */
const workerUrlPlugin: esbuild.Plugin = {
  name: "worker-url",
  setup(b) {
    b.onLoad({ filter: /[/\\]src[/\\]cfr[/\\]parallel\.ts$/ }, async (args) => {
      const text = await Deno.readTextFile(args.path);
      const rewritten = text.replace(
        'new URL("./worker.ts", import.meta.url)',
        () => `new URL("./${BUNDLE_FILES.worker}", import.meta.url)`,
      );
      if (rewritten === text) {
        throw new KibitzError("bundle_failed", `${args.path} no longer starts ./worker.ts`);
      }
      return { contents: rewritten, loader: "ts" };
    });
    // The threaded Wasm walk's workers import its task loop's module; in the bundle that is the
    // bundle itself (mod.ts exports serveWalkTasks).
    b.onLoad({ filter: /[/\\]src[/\\]poker[/\\]wasm[/\\]walk\.ts$/ }, async (args) => {
      const text = await Deno.readTextFile(args.path);
      const rewritten = text.replace(
        'new URL("./walk_worker.ts", import.meta.url).href',
        () => "import.meta.url",
      );
      if (rewritten === text) {
        throw new KibitzError("bundle_failed", `${args.path} no longer names ./walk_worker.ts`);
      }
      return { contents: rewritten, loader: "ts" };
    });
  },
};

/** Builds the browser bundle of mod.ts (and the CFR worker entry) into `outDir`. */
export async function bundleBrowser(options: BundleOptions): Promise<BundleResult> {
  await Deno.mkdir(options.outDir, { recursive: true });
  const plugins = [wgslPlugin, workerUrlPlugin, await npmPlugin()];
  const common: esbuild.BuildOptions = {
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: options.minify ?? true,
    sourcemap: false,
    plugins,
    logLevel: "silent",
    metafile: true,
  };
  const warnings: string[] = [];
  try {
    for (
      const [entry, file] of [["mod.ts", BUNDLE_FILES.main], [
        "src/cfr/worker.ts",
        BUNDLE_FILES.worker,
      ]]
    ) {
      const r = await esbuild.build({
        ...common,
        entryPoints: [path(entry)],
        outfile: `${options.outDir}/${file}`,
      });
      for (const w of r.warnings) warnings.push(`${file}: ${w.text}`);
    }
  } catch (e) {
    const errors = (e as { errors?: esbuild.Message[] }).errors;
    if (!errors) throw e;
    const text = errors.map((m) =>
      `  ${m.location ? `${m.location.file}:${m.location.line}: ` : ""}${m.text}`
    ).join("\n");
    throw new KibitzError("bundle_failed", `esbuild failed:\n${text}`);
  } finally {
    await esbuild.stop();
  }
  const files = [];
  for (const file of [BUNDLE_FILES.main, BUNDLE_FILES.worker]) {
    const p = `${options.outDir}/${file}`;
    files.push({ path: p, bytes: (await Deno.stat(p)).size });
  }
  return { files, warnings };
}
