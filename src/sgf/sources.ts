import { KibitzError } from "../errors.ts";
import { type ByteSource, bytesSource, fileSource, readZipEntry, zipEntries } from "./zip.ts";

/** One record file to ingest: a display name (`a.zip/x.sgf` for archive members) and its text. */
export interface SourceFile {
  name: string;
  text: string;
}

/** A source that could not be read at all (missing file, broken archive, over a size cap). */
export interface SourceFailure {
  name: string;
  reason: string;
  message: string;
}

/** Size caps for untrusted input: one record file (or archive member), and one whole archive. */
export interface SourceLimits {
  /** Bytes of one record file or uncompressed archive member (default 16 MiB). */
  maxMemberBytes?: number;
  /** Uncompressed bytes read from one archive, all members together (default 1 GiB). */
  maxArchiveBytes?: number;
}

/** Default cap on one record file or archive member: 16 MiB (boardspace records are ~2-20 KB). */
export const DEFAULT_MAX_MEMBER_BYTES = 16 << 20;
/** Default cap on the uncompressed bytes of one archive: 1 GiB. */
export const DEFAULT_MAX_ARCHIVE_BYTES = 1 << 30;

const decoder = new TextDecoder("utf-8");

function isSgf(name: string): boolean {
  return name.toLowerCase().endsWith(".sgf");
}

function isZip(name: string): boolean {
  return name.toLowerCase().endsWith(".zip");
}

/** A folder entry followed or reported: symlinks are followed; a broken one is a failure. */
type Walked = { path: string } | SourceFailure;

/**
 * Lists `.sgf` and `.zip` files under a folder, recursively, sorted for a stable order. Symbolic
 * links are followed (to files and folders, each real folder once, so a link loop ends); a broken
 * link is reported instead of skipped.
 */
async function walk(dir: string, seen = new Set<string>()): Promise<Walked[]> {
  const real = await Deno.realPath(dir);
  if (seen.has(real)) return [];
  seen.add(real);
  const out: Walked[] = [];
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(dir)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = `${dir.replace(/\/+$/, "")}/${e.name}`;
    let isDir = e.isDirectory, isFile = e.isFile;
    if (e.isSymlink) {
      try {
        const target = await Deno.stat(path);
        isDir = target.isDirectory;
        isFile = target.isFile;
      } catch (err) {
        if (isSgf(e.name) || isZip(e.name)) {
          out.push({
            name: path,
            reason: "unreadable",
            message: `${path}: broken symbolic link (${(err as Error).message})`,
          });
        }
        continue;
      }
    }
    if (isDir) out.push(...await walk(path, seen));
    else if (isFile && (isSgf(e.name) || isZip(e.name))) out.push({ path });
  }
  return out;
}

/**
 * The `.sgf` members of a zip archive, sorted by member name, each read with a cap on its real
 * uncompressed size; a member over a cap is a `too_large` failure and the others go on. Memory
 * stays within one member, whatever the archive declares.
 */
export async function* sgfMembersOfZip(
  archive: Uint8Array | ByteSource,
  name: string,
  limits: SourceLimits = {},
): AsyncGenerator<SourceFile | SourceFailure> {
  const src = archive instanceof Uint8Array ? bytesSource(archive) : archive;
  const maxMember = limits.maxMemberBytes ?? DEFAULT_MAX_MEMBER_BYTES;
  let budget = limits.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES;
  const entries = (await zipEntries(src, name))
    .filter((e) => isSgf(e.name) && !e.name.endsWith("/"))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const where = `${name}/${entry.name}`;
    const limit = Math.min(maxMember, budget);
    const cap = limit < maxMember ? "the archive's cap" : "the member cap";
    if (entry.declaredSize > limit) {
      yield {
        name: where,
        reason: "too_large",
        message: `${where}: declares ${entry.declaredSize} bytes, over ${cap} (${limit} bytes)`,
      };
      continue;
    }
    try {
      const bytes = await readZipEntry(src, entry, limit, where);
      budget -= bytes.length;
      yield { name: where, text: decoder.decode(bytes) };
    } catch (e) {
      if (!(e instanceof KibitzError)) throw e;
      if (e.code === "too_large") {
        // A lying member cost its whole limit of work: count it against the archive.
        budget -= limit;
        yield { name: where, reason: e.code, message: `${e.message} (${cap})` };
      } else yield { name: where, reason: e.code, message: e.message };
    }
  }
}

/** Reads a plain record file, refusing one larger than the member cap before reading it. */
async function readRecordFile(
  path: string,
  maxMember: number,
): Promise<SourceFile | SourceFailure> {
  const size = (await Deno.stat(path)).size;
  if (size > maxMember) {
    return {
      name: path,
      reason: "too_large",
      message: `${path}: ${size} bytes, over the member cap (${maxMember} bytes)`,
    };
  }
  return { name: path, text: decoder.decode(await Deno.readFile(path)) };
}

/**
 * Streams the record files named by `inputs` (files, folders searched recursively, .zip archives)
 * in a stable order. Unreadable or oversized inputs are yielded as failures so a batch goes on.
 */
export async function* sourceFiles(
  inputs: string[],
  limits: SourceLimits = {},
): AsyncGenerator<SourceFile | SourceFailure> {
  const maxMember = limits.maxMemberBytes ?? DEFAULT_MAX_MEMBER_BYTES;
  for (const input of inputs) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(input);
    } catch (e) {
      yield { name: input, reason: "unreadable", message: `${input}: ${(e as Error).message}` };
      continue;
    }
    let paths: Walked[];
    try {
      paths = info.isDirectory ? await walk(input) : [{ path: input }];
    } catch (e) {
      yield { name: input, reason: "unreadable", message: `${input}: ${(e as Error).message}` };
      continue;
    }
    for (const item of paths) {
      if (!("path" in item)) {
        yield item;
        continue;
      }
      const path = item.path;
      let file: Deno.FsFile | null = null;
      try {
        if (isZip(path)) {
          file = await Deno.open(path, { read: true });
          yield* sgfMembersOfZip(await fileSource(file), path, limits);
        } else {
          yield await readRecordFile(path, maxMember);
        }
      } catch (e) {
        const reason = e instanceof KibitzError ? e.code : "unreadable";
        yield { name: path, reason, message: (e as Error).message };
      } finally {
        file?.close();
      }
    }
  }
}
