import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl, pathToFileURL } from "node:url";

// Every import cycle between the files of src/ (value, type-only and dynamic imports alike), found
// from `deno info --json` over a module that imports every file, as strongly connected components.

const ROOT = fromFileUrl(new URL("../../", import.meta.url));

/**
 * Cycles accepted for now, each the sorted file list of one strongly connected component; none
 * today. The test also fails when a listed cycle disappears, so the list never goes stale.
 */
const KNOWN_CYCLES: string[][] = [];

async function srcFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...await srcFiles(p));
    else if (e.isFile && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The import graph of src/: file (relative to the repo) -> files it imports. */
async function importGraph(): Promise<Map<string, string[]>> {
  const files = (await srcFiles(`${ROOT}src`)).sort();
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import type {} from "${pathToFileURL(f).href}";`).join("\n") + "\n",
    );
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", `${ROOT}deno.json`, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(r.success, new TextDecoder().decode(r.stderr));
    const info = JSON.parse(new TextDecoder().decode(r.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
      }[];
    };
    const inSrc = (spec: string) =>
      spec.startsWith("file://") && relative(ROOT, fromFileUrl(spec)).startsWith("src/");
    const graph = new Map<string, string[]>();
    for (const m of info.modules) {
      if (!inSrc(m.specifier)) continue;
      const deps = new Set<string>();
      for (const d of m.dependencies ?? []) {
        for (const s of [d.code?.specifier, d.type?.specifier]) {
          if (s && inSrc(s)) deps.add(relative(ROOT, fromFileUrl(s)));
        }
      }
      graph.set(relative(ROOT, fromFileUrl(m.specifier)), [...deps].sort());
    }
    return graph;
  } finally {
    await Deno.remove(entry);
  }
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), out: string[][] = [];
  const connect = (v: string) => {
    index.set(v, counter), low.set(v, counter), counter++;
    stack.push(v), onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) connect(w), low.set(v, Math.min(low.get(v)!, low.get(w)!));
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      for (let w = ""; w !== v;) w = stack.pop()!, onStack.delete(w), comp.push(w);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

Deno.test("cycles: Tarjan finds a three-file loop and a self-import, not a chain", () => {
  const g = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a", "d"]], ["d", []], ["e", ["e"]]]);
  assert.deepEqual(cycles(g), [["a", "b", "c"], ["e"]]);
});

Deno.test("structure: no import cycle between the files of src/ beyond the known list", async () => {
  const found = cycles(await importGraph());
  const key = (c: string[]) => c.join(" ");
  const known = new Set(KNOWN_CYCLES.map(key));
  const fresh = found.filter((c) => !known.has(key(c)));
  assert.deepEqual(fresh, [], `import cycles in src/:\n${fresh.map(key).join("\n")}`);
  const gone = KNOWN_CYCLES.filter((c) => !found.some((f) => key(f) === key(c)));
  assert.deepEqual(gone, [], "known cycles that no longer exist: remove them from KNOWN_CYCLES");
});
