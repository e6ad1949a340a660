// Atomic writes, and the temp files they leave while in flight: an interrupted run (Ctrl-C,
// SIGTERM) removes every registered temp file before it exits, so no `*.tmp` is left behind.

const live = new Set<string>();

/** The signals that mean "interrupted" here (read lazily: this module also loads in browsers). */
function signals(): Deno.Signal[] {
  return Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
}

/** Jobs listening for a stop (listenForStop): while any does, its handler decides when to quit. */
let stopListeners = 0;

function onInterrupt(): void {
  // A job that stops at its next durable point finishes the write in flight on the first signal.
  if (stopListeners > 0) return;
  exitInterrupted();
}

/** Removes every temp file in flight and exits with 130 (interrupted): a second Ctrl-C. */
export function exitInterrupted(): never {
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

/**
 * Runs `write` on a temp file beside `path`, then renames it over `path`: a crash never leaves half
 * a file. The temp file is registered (removed when Ctrl-C quits) and removed if `write` fails.
 */
async function replaceAtomically(
  path: string,
  write: (tmp: string) => Promise<void>,
): Promise<void> {
  const tmp = tempPathFor(path);
  registerTemp(tmp);
  try {
    await write(tmp);
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  } finally {
    unregisterTemp(tmp);
  }
}

/** Writes a file atomically (temp file in the same folder, then rename) so a crash never leaves half a file. */
export function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  return replaceAtomically(
    path,
    (tmp) => typeof data === "string" ? Deno.writeTextFile(tmp, data) : Deno.writeFile(tmp, data),
  );
}

/**
 * Writes chunks (each valid until the next is asked for) to a temp file beside `path`, then renames
 * it: a crash never leaves half a file. With `overlap`, a chunk is written while the next one is
 * made, so each must stay valid until the one after it has been asked for. Its temp file is
 * registered as writeFileAtomic's is: removed when Ctrl-C quits the process.
 */
export function streamFileAtomic(
  path: string,
  chunks: Iterable<Uint8Array>,
  overlap = false,
): Promise<void> {
  return replaceAtomically(path, async (tmp) => {
    const f = await Deno.open(tmp, { write: true, create: true, truncate: true });
    const writeAll = async (c: Uint8Array) => {
      for (let off = 0; off < c.length;) off += await f.write(c.subarray(off));
    };
    let pending: Promise<void> | null = null;
    try {
      for (const c of chunks) {
        if (!overlap) await writeAll(c);
        else {
          // The next chunk is made (read, checksummed) while this one is written.
          await pending;
          pending = writeAll(c);
        }
      }
      await pending;
    } finally {
      await pending?.catch(() => {});
      f.close();
    }
  });
}

/**
 * Listens for Ctrl-C and SIGTERM (a scheduler's stop): the first calls `onStop`, for a long job to
 * stop at its next durable point; a second quits at once (exitInterrupted). Returns the function
 * that stops listening.
 */
export function listenForStop(onStop: () => void): () => void {
  let stopping = false;
  const handler = () => {
    if (stopping) exitInterrupted();
    stopping = true;
    onStop();
  };
  const installed: Deno.Signal[] = [];
  for (const s of signals()) {
    try {
      Deno.addSignalListener(s, handler);
      installed.push(s);
    } catch { /* signal not supported here */ }
  }
  stopListeners++;
  let listening = true;
  return () => {
    if (!listening) return;
    listening = false;
    stopListeners--;
    for (const s of installed) Deno.removeSignalListener(s, handler);
  };
}

/** A job's stop flag (see stopOnSignal). */
export interface StopFlag {
  /** True once the first Ctrl-C or SIGTERM came. */
  readonly stopped: boolean;
  /** Stops listening. */
  release(): void;
}

/**
 * A stop flag for a long job's task: the first Ctrl-C or SIGTERM sets it and prints `message` (what
 * the job does now) on stderr; a second quits at once (listenForStop).
 */
export function stopOnSignal(message: string): StopFlag {
  let stopped = false;
  const release = listenForStop(() => {
    stopped = true;
    console.error(`\n${message} (Ctrl-C again to quit now)`);
  });
  return {
    get stopped() {
      return stopped;
    },
    release,
  };
}
