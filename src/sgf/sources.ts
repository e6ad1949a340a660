import { unzipSync } from "fflate";
import { KibitzError } from "../errors.ts";

/** One record file to ingest: a display name (`a.zip/x.sgf` for archive members) and its text. */
export interface SourceFile {
  name: string;
  text: string;
}

/** A source that could not be read at all (missing file, broken archive). */
export interface SourceFailure {
  name: string;
  reason: string;
  message: string;
}

const decoder = new TextDecoder("utf-8");

function isSgf(name: string): boolean {
  return name.toLowerCase().endsWith(".sgf");
}

function isZip(name: string): boolean {
  return name.toLowerCase().endsWith(".zip");
}

/** Lists `.sgf` and `.zip` files under a folder, recursively, sorted for a stable order. */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = `${dir.replace(/\/+$/, "")}/${e.name}`;
    if (e.isDirectory) out.push(...await walk(path));
    else if (e.isFile && (isSgf(e.name) || isZip(e.name))) out.push(path);
  }
  return out;
}

/** The `.sgf` members of a zip archive (bytes), sorted by member name. */
export function sgfMembersOfZip(bytes: Uint8Array, name: string): SourceFile[] {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes, { filter: (f) => isSgf(f.name) });
  } catch (e) {
    throw new KibitzError(
      "bad_zip",
      `${name}: not a readable zip archive (${(e as Error).message})`,
    );
  }
  return Object.keys(files).sort().map((m) => ({
    name: `${name}/${m}`,
    text: decoder.decode(files[m]),
  }));
}

/**
 * Streams the record files named by `inputs` (files, folders searched recursively, .zip archives)
 * in a stable order. Unreadable inputs are yielded as failures so a batch goes on.
 */
export async function* sourceFiles(inputs: string[]): AsyncGenerator<SourceFile | SourceFailure> {
  for (const input of inputs) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(input);
    } catch (e) {
      yield { name: input, reason: "unreadable", message: `${input}: ${(e as Error).message}` };
      continue;
    }
    let paths: string[];
    try {
      paths = info.isDirectory ? await walk(input) : [input];
    } catch (e) {
      yield { name: input, reason: "unreadable", message: `${input}: ${(e as Error).message}` };
      continue;
    }
    for (const path of paths) {
      try {
        if (isZip(path)) {
          yield* sgfMembersOfZip(await Deno.readFile(path), path);
        } else {
          yield { name: path, text: decoder.decode(await Deno.readFile(path)) };
        }
      } catch (e) {
        const reason = e instanceof KibitzError ? e.code : "unreadable";
        yield { name: path, reason, message: (e as Error).message };
      }
    }
  }
}
