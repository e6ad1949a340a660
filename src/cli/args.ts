import { parseArgs, type ParseArgsConfig } from "node:util";
import { KibitzError } from "../errors.ts";

/** Option table for a task: node:util parseArgs options plus a help line for each. */
export type TaskOptions = Record<
  string,
  {
    type: "string" | "boolean";
    short?: string;
    default?: string | boolean;
    multiple?: boolean;
    help: string;
  }
>;

/** A parsed command line: named values and positional arguments. */
export interface ParsedArgs {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** Formats a task's usage text from its synopsis and option table. */
export function usage(synopsis: string, description: string, options: TaskOptions): string {
  const lines = [`usage: ${synopsis}`, "", description, "", "options:"];
  const all: TaskOptions = {
    ...options,
    help: { type: "boolean", short: "h", help: "show this help" },
  };
  for (const [name, o] of Object.entries(all)) {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${
      o.type === "string" ? " VALUE" : ""
    }`;
    const def = o.default !== undefined && o.default !== false ? ` (default: ${o.default})` : "";
    lines.push(`  ${flag.padEnd(28)} ${o.help}${def}`);
  }
  return lines.join("\n");
}

/** Rewrites a node:util parseArgs message as `<option>: <why>` (the one error style). */
function argsProblem(message: string): string {
  const opt = /'(-{1,2}[^'\s]+)'/.exec(message)?.[1];
  if (!opt) return `arguments: ${message}`;
  if (/^Unknown option/.test(message)) return `${opt}: unknown option (--help lists them)`;
  if (/ambiguous/.test(message)) {
    return `${opt}: needs a value; write ${opt}=VALUE when the value starts with "-"`;
  }
  if (/argument missing/.test(message)) return `${opt}: needs a value`;
  if (/does not take an argument/.test(message)) return `${opt}: takes no value`;
  return `${opt}: ${message}`;
}

/** Parses a task's arguments strictly; unknown flags become a KibitzError naming the flag. */
export function parseTaskArgs(
  args: string[],
  synopsis: string,
  description: string,
  options: TaskOptions,
): ParsedArgs | null {
  const config: ParseArgsConfig["options"] = { help: { type: "boolean", short: "h" } };
  for (const [name, o] of Object.entries(options)) {
    const entry: Record<string, unknown> = { type: o.type };
    if (o.short) entry.short = o.short;
    if (o.default !== undefined) entry.default = o.default;
    if (o.multiple) entry.multiple = true;
    config[name] = entry as never;
  }
  let parsed;
  try {
    parsed = parseArgs({ args, options: config, allowPositionals: true, strict: true });
  } catch (e) {
    throw new KibitzError(
      "bad_args",
      `${argsProblem((e as Error).message)}\n\n${usage(synopsis, description, options)}`,
    );
  }
  if (parsed.values.help) {
    console.log(usage(synopsis, description, options));
    return null;
  }
  return { values: parsed.values as ParsedArgs["values"], positionals: parsed.positionals };
}

/** Reads an integer option, rejecting non-numeric or out-of-range values with the option's name. */
export function intOption(
  values: ParsedArgs["values"],
  name: string,
  fallback: number,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new KibitzError(
      "bad_args",
      `--${name} must be an integer in [${min}, ${max}]: got "${raw}"`,
    );
  }
  return n;
}

/** Reads a numeric option, rejecting non-finite values with the option's name. */
export function numberOption(values: ParsedArgs["values"], name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) {
    throw new KibitzError("bad_args", `--${name} must be a number: got "${raw}"`);
  }
  return n;
}
