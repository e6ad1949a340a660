// One writer per game store: an OS file lock (flock) on `<store>.lock`, whose text names the
// owner's pid. The OS drops the lock when its owner dies, so a lock file left by a dead process is
// taken over without guessing from pids; the pid is there for the messages.
import { KibitzError } from "../errors.ts";
import { registerTemp, unregisterTemp } from "../cli/atomic.ts";

/** A held store lock; `release` removes the lock file and lets the next writer in. */
export interface StoreLock {
  path: string;
  /** The pid the lock file named before we took it over (its owner was gone), else null. */
  tookOverFrom: number | null;
  release(): Promise<void>;
}

/** How to take a store lock. */
export interface LockOptions {
  /** Wait for the current writer (default) or fail at once with `store_locked`. */
  wait?: boolean;
  /** Called once, before waiting, with the lock file and the pid it names (null if unknown). */
  onWait?: (lockPath: string, holder: number | null) => void;
}

async function holderPid(file: Deno.FsFile): Promise<number | null> {
  try {
    await file.seek(0, Deno.SeekMode.Start);
    const buf = new Uint8Array(64);
    const n = await file.read(buf);
    const m = /^pid (\d+)/.exec(new TextDecoder().decode(buf.subarray(0, n ?? 0)));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function sameFile(path: string, file: Deno.FsFile): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([Deno.stat(path), file.stat()]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/**
 * Takes the lock of the store at `store` (file `<store>.lock`), waiting for the current writer
 * unless `wait` is false. The lock is the OS lock on that file, checked to still be the file at
 * the path once held (a releasing writer deletes it), so two writers never both hold it.
 */
export async function lockStore(store: string, opts: LockOptions = {}): Promise<StoreLock> {
  const path = `${store}.lock`;
  let told = false;
  for (;;) {
    const file = await Deno.open(path, { read: true, write: true, create: true });
    let held = await file.tryLock(true);
    if (!held) {
      const holder = await holderPid(file);
      if (opts.wait === false) {
        file.close();
        throw new KibitzError(
          "store_locked",
          `${store}: another ingest (pid ${holder ?? "unknown"}) is writing this store ` +
            `(lock ${path}); wait for it, or run without --no-wait to queue behind it`,
        );
      }
      if (!told) opts.onWait?.(path, holder);
      told = true;
      await file.lock(true);
      held = true;
    }
    if (!await sameFile(path, file)) {
      // The previous owner removed the file as we waited on it: lock the new one instead.
      file.close();
      continue;
    }
    const previous = await holderPid(file);
    await file.truncate(0);
    await file.seek(0, Deno.SeekMode.Start);
    await file.write(new TextEncoder().encode(`pid ${Deno.pid}\n`));
    registerTemp(path);
    let released = false;
    return {
      path,
      tookOverFrom: previous !== null && previous !== Deno.pid ? previous : null,
      async release() {
        if (released) return;
        released = true;
        await Deno.remove(path).catch(() => {});
        unregisterTemp(path);
        try {
          await file.unlock();
        } catch { /* closing unlocks too */ }
        file.close();
      },
    };
  }
}
