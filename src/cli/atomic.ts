// Atomic writes, and the temp files they leave while in flight: an interrupted run (Ctrl-C,
// SIGTERM) removes every registered temp file before it exits, so no `*.tmp` is left behind.

const live = new Set<string>();

/** The signals that mean "interrupted" here (read lazily: this module also loads in browsers). */
function signals(): Deno.Signal[] {
  return Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
}

function onInterrupt(): void {
  for (const path of live) {
    try {
      Deno.removeSync(path, { recursive: true });
    } catch { /* already gone */ }
  }
  live.clear();
  Deno.exit(130);
}

/** Registers a temp path to remove if the process is interrupted (installs the signal handler). */
export function registerTemp(path: string): void {
  if (live.size === 0) {
    for (const s of signals()) {
      try {
        Deno.addSignalListener(s, onInterrupt);
      } catch { /* signal not supported here */ }
    }
  }
  live.add(path);
}

/** Forgets a temp path (renamed into place or removed); the last one uninstalls the handler. */
export function unregisterTemp(path: string): void {
  if (!live.delete(path) || live.size > 0) return;
  for (const s of signals()) {
    try {
      Deno.removeSignalListener(s, onInterrupt);
    } catch { /* not installed */ }
  }
}

/** A temp file name beside `path`, unique to this process and moment. */
export function tempPathFor(path: string): string {
  return `${path}.${Deno.pid}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}.tmp`;
}

/** Writes a file atomically (temp file in the same folder, then rename) so a crash never leaves half a file. */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const tmp = tempPathFor(path);
  registerTemp(tmp);
  try {
    if (typeof data === "string") await Deno.writeTextFile(tmp, data);
    else await Deno.writeFile(tmp, data);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  } finally {
    unregisterTemp(tmp);
  }
}

/**
 * Writes chunks (each valid until the next is asked for) to a temp file beside `path`, then renames
 * it: a crash never leaves half a file. Not registered for interrupts: for callers that handle
 * Ctrl-C themselves and finish their write (the solve).
 */
export async function streamFileAtomic(path: string, chunks: Iterable<Uint8Array>): Promise<void> {
  const tmp = tempPathFor(path);
  try {
    const f = await Deno.open(tmp, { write: true, create: true, truncate: true });
    try {
      for (const c of chunks) {
        for (let off = 0; off < c.length;) off += await f.write(c.subarray(off));
      }
    } finally {
      f.close();
    }
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}
