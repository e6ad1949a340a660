import { KibitzError } from "../errors.ts";
import { writeFileAtomic } from "../cli/atomic.ts";

/** One table of a benchmark report: column names and rows of cells. */
export interface BenchTable {
  title: string;
  columns: string[];
  rows: (string | number | null)[][];
}

/** A benchmark suite's result, written as JSON and Markdown. */
export interface BenchReport {
  suite: string;
  date: string;
  machine: { cores: number; os: string; deno: string; adapter: string | null };
  tables: BenchTable[];
  notes: string[];
}

/** Options every benchmark suite receives from `deno task bench`. */
export interface BenchOptions {
  /** Run the larger, slower configuration (`--full`). */
  full: boolean;
  /** `cpu`, `gpu` or `auto`. */
  backend: string;
  /** Extra positional arguments after the suite name. */
  args: string[];
  /** Prints a progress line. */
  log: (line: string) => void;
  /** The output folder (`--out`), for suites that write their partial report as rows complete. */
  out?: string;
}

/** A benchmark suite module: `deno task bench NAME` imports it and calls `run`. */
export interface BenchSuite {
  description: string;
  /** The suite's own arguments, one per line (`deno task bench SUITE --help` prints them). */
  usage?: string;
  run(opts: BenchOptions): Promise<BenchReport>;
}

/** Creates an empty report for `suite` stamped with the machine facts. */
export function newReport(suite: string, adapter: string | null): BenchReport {
  return {
    suite,
    date: new Date().toISOString(),
    machine: {
      cores: navigator.hardwareConcurrency,
      os: `${Deno.build.os}-${Deno.build.arch}`,
      deno: Deno.version.deno,
      adapter,
    },
    tables: [],
    notes: [],
  };
}

function cell(v: string | number | null): string {
  if (v === null) return "-";
  if (typeof v === "number") {
    if (Number.isInteger(v)) return String(v);
    const a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e7) ? v.toExponential(3) : v.toPrecision(4);
  }
  return v;
}

/** Renders a report as Markdown. */
export function reportMarkdown(r: BenchReport): string {
  const out = [
    `# Benchmark: ${r.suite}`,
    "",
    `${r.date} · ${r.machine.cores} cores · ${r.machine.os} · Deno ${r.machine.deno} · adapter: ${
      r.machine.adapter ?? "none"
    }`,
    "",
  ];
  for (const t of r.tables) {
    out.push(
      `## ${t.title}`,
      "",
      `| ${t.columns.join(" | ")} |`,
      `|${t.columns.map(() => " --- ").join("|")}|`,
    );
    for (const row of t.rows) out.push(`| ${row.map(cell).join(" | ")} |`);
    out.push("");
  }
  if (r.notes.length) out.push("## Notes", "", ...r.notes.map((n) => `- ${n}`), "");
  return out.join("\n");
}

/** Writes `<dir>/<suite>.json` and `<dir>/<suite>.md` atomically and returns their paths. */
export async function writeReport(r: BenchReport, dir: string): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  const json = `${dir}/${r.suite}.json`;
  const md = `${dir}/${r.suite}.md`;
  await writeFileAtomic(json, JSON.stringify(r, null, 2) + "\n");
  await writeFileAtomic(md, reportMarkdown(r));
  return [json, md];
}

/** Whether a suite's `key=` argument is switched on (1, true or yes). */
export function benchFlag(kv: Map<string, string>, key: string): boolean {
  return ["1", "true", "yes"].includes(kv.get(key) ?? "");
}

/**
 * A suite's `key=` argument as a positive integer, `fallback` when it is absent; anything else is
 * an error that names the argument.
 */
export function benchPositiveInt(
  suite: string,
  kv: Map<string, string>,
  key: string,
  fallback: number,
): number {
  const raw = kv.get(key);
  const v = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(v) || v < 1) {
    throw new KibitzError("bad_args", `${suite}: ${key} must be a positive integer, got ${raw}`);
  }
  return v;
}

/**
 * A suite's `key=value` arguments (e.g. `net=default seconds=60`) as a map; anything else is an
 * error, and so is a key outside `known` when it is given.
 */
export function benchKeyValues(
  suite: string,
  args: string[],
  known?: readonly string[],
): Map<string, string> {
  const m = new Map<string, string>();
  for (const a of args) {
    const i = a.indexOf("=");
    if (i < 0) throw new KibitzError("bad_args", `${suite}: expected key=value, got "${a}"`);
    const k = a.slice(0, i);
    if (known && !known.includes(k)) {
      throw new KibitzError(
        "bad_args",
        `${suite}: unknown argument "${k}=": valid are ${known.map((x) => `${x}=`).join(", ")}`,
      );
    }
    m.set(k, a.slice(i + 1));
  }
  return m;
}
