// Checks of a task's path arguments before the long work starts (a solve, an ingest, a training
// run), so a bad --out fails in a second with `error: --out DIR: why` instead of after the work.
import { KibitzError } from "../errors.ts";
import { registerTemp, unregisterTemp } from "./atomic.ts";

/** The reason an OS error gives, without Deno's "(os error N)" and path suffix. */
export function osReason(e: unknown): string {
  if (e instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (e instanceof Deno.errors.NotFound) return "no such file or folder";
  if (e instanceof Deno.errors.NotADirectory) return "a path component is a file, not a folder";
  if (e instanceof Deno.errors.IsADirectory) return "is a folder";
  if (e instanceof Deno.errors.AlreadyExists) return "already exists";
  if (e instanceof Deno.errors.AddrInUse) return "address already in use";
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/\s*\(os error \d+\).*$/s, "").replace(/:\s*$/, "") || msg;
}

/** bad_args for a path that cannot be right (a file where a folder must be), else unwritable. */
function pathError(e: unknown, what: string, path: string, doing = ""): KibitzError {
  const input = e instanceof Deno.errors.NotADirectory || e instanceof Deno.errors.AlreadyExists;
  const why = doing ? `${doing} (${osReason(e)})` : osReason(e);
  return new KibitzError(input ? "bad_args" : "unwritable", `${what} ${path}: ${why}`);
}

async function statOrNull(path: string, what: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw pathError(e, what, path);
  }
}

/** The folder part of a path ("." when it has none). */
export function parentDir(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  const i = trimmed.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : trimmed.slice(0, i);
}

/** Proves a folder writable by creating and removing a probe file in it. */
async function probe(dir: string, what: string): Promise<void> {
  const file = `${dir.replace(/\/+$/, "") || "/"}/.kibitz-probe-${Deno.pid}-${Date.now()}.tmp`;
  registerTemp(file);
  try {
    await Deno.writeFile(file, new Uint8Array(0), { createNew: true });
  } catch (e) {
    throw pathError(e, what, dir, "cannot write there");
  } finally {
    await Deno.remove(file).catch(() => {});
    unregisterTemp(file);
  }
}

/**
 * Makes sure `dir` is (or can become) a writable folder: creates it, rejects a file in its place
 * (`bad_args`, exit 2) and a folder that cannot be written (`unwritable`, exit 1).
 */
export async function ensureOutputDir(dir: string, what: string): Promise<void> {
  const info = await statOrNull(dir, what);
  if (info && !info.isDirectory) {
    throw new KibitzError("bad_args", `${what} ${dir}: is a file, not a folder`);
  }
  if (!info) {
    try {
      await Deno.mkdir(dir, { recursive: true });
    } catch (e) {
      throw pathError(e, what, dir, "cannot create the folder");
    }
  }
  await probe(dir, what);
}

/**
 * Makes sure `file` can be written (created or replaced atomically): its folder is created and
 * writable, and the path is not a folder. Writes nothing at `file` itself.
 */
export async function ensureOutputFile(file: string, what: string): Promise<void> {
  if (file === "" || file.endsWith("/")) {
    throw new KibitzError("bad_args", `${what} "${file}": needs a file name`);
  }
  const info = await statOrNull(file, what);
  if (info?.isDirectory) throw new KibitzError("bad_args", `${what} ${file}: is a folder`);
  await ensureOutputDir(parentDir(file), what);
}

/** Makes sure an input path exists (`missing_input`, exit 2, naming the argument otherwise). */
export async function ensureInput(path: string, what: string): Promise<Deno.FileInfo> {
  try {
    return await Deno.stat(path);
  } catch (e) {
    const code = e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory
      ? "missing_input"
      : "io_error";
    throw new KibitzError(code, `${what} ${path}: ${osReason(e)}`);
  }
}
