import { registerTemp, tempPathFor, unregisterTemp } from "../cli/atomic.ts";
import { KibitzError } from "../errors.ts";
import { sha256Hex } from "./sha256.ts";
import type { GameOutcome } from "./headers.ts";

/** How the stored result was decided. */
export type Termination = "position" | "resignation" | "agreement" | "record" | "none";

/** One accepted game as stored in a game store (one JSON object per line). */
export interface StoredGame {
  /** Stable id: a hash of the game name (or source file name), game type and moves. */
  id: string;
  /** The record file (`archive.zip/member.sgf` for archive members). */
  source: string;
  /** Index of the record within its file (0 for the first). */
  index: number;
  gameName: string;
  gameType: string;
  /** The boardspace variant as the record wrote it (`SU`, e.g. `Hive-PLM`). */
  variant: string;
  white: string;
  black: string;
  /** `YYYY.MM.DD`, or "" when the record's date is not recognised. */
  date: string;
  dateRaw: string;
  result: GameOutcome;
  termination: Termination;
  /** The record's `RE` text as written. */
  resultText: string;
  /** Validated UHP move strings, `pass` included. */
  moves: string[];
}

/** Computes a game's stable id from what identifies it, independent of where it was read. */
export function gameId(name: string, gameType: string, moves: readonly string[]): string {
  return sha256Hex(`${name}\n${gameType}\n${moves.join(";")}`).slice(0, 16);
}

/** The file name of a source without folders, archive or extension (`a.zip/b/c.sgf` -> `c`). */
export function sourceBase(source: string): string {
  return source.slice(source.lastIndexOf("/") + 1).replace(/\.sgf$/i, "");
}

/** Whether a store path names a gzip-compressed store (read-only: writers refuse it). */
export function isGzipStore(path: string): boolean {
  return path.toLowerCase().endsWith(".gz");
}

/**
 * Streams the lines of a text file without loading it whole; a `.gz` file is decompressed on the
 * way (large game stores ship compressed), and a damaged one is a `bad_store` error naming it.
 */
export async function* readLines(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path, { read: true });
  const gz = isGzipStore(path);
  const source = gz ? file.readable.pipeThrough(new DecompressionStream("gzip")) : file.readable;
  const decoder = new TextDecoder();
  let rest = "";
  const chunks = source[Symbol.asyncIterator]();
  let finished = false;
  try {
    while (true) {
      let r: IteratorResult<Uint8Array>;
      try {
        r = await chunks.next();
      } catch (e) {
        if (!gz || !(e instanceof TypeError)) throw e;
        throw new KibitzError("bad_store", `${path}: not a complete gzip file (${e.message})`);
      }
      if (r.done) {
        finished = true;
        break;
      }
      rest += decoder.decode(r.value, { stream: true });
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        yield rest.slice(0, nl);
        rest = rest.slice(nl + 1);
      }
    }
  } finally {
    // readable closes the file when fully consumed; an early return cancels the stream (and so the
    // decompression) and must close the file here.
    if (!finished) {
      try {
        await chunks.return?.();
      } catch { /* already failed */ }
    }
    try {
      file.close();
    } catch { /* already closed */ }
  }
  rest += decoder.decode();
  if (rest !== "") yield rest;
}

/**
 * Streams the games of a game store (JSON lines), skipping blank lines. A line that is not a game
 * (not JSON, or no string `id` and `moves` list) is a `bad_store` error naming the file and line:
 * a writer that skipped it would drop it from the store it rewrites.
 */
export async function* readGameStore(path: string): AsyncGenerator<StoredGame> {
  let n = 0;
  const bad = (why: string): never => {
    throw new KibitzError("bad_store", `${path}:${n}: ${why}`);
  };
  for await (const line of readLines(path)) {
    n++;
    if (line.trim() === "") continue;
    let g: unknown;
    try {
      g = JSON.parse(line);
    } catch (e) {
      bad(`not a JSON line (${(e as Error).message})`);
    }
    if (typeof g !== "object" || g === null || Array.isArray(g)) bad("not a JSON object");
    const o = g as Record<string, unknown>;
    if (typeof o.id !== "string") bad('a stored game needs a string "id"');
    if (!Array.isArray(o.moves) || !o.moves.every((m) => typeof m === "string")) {
      bad('a stored game needs "moves", a list of move strings');
    }
    yield g as StoredGame;
  }
}

/**
 * Writes lines to a temporary file beside `path` and renames it over `path` on commit, so a
 * crash never leaves a half-written store (the streaming twin of writeFileAtomic).
 */
export class AtomicLineWriter {
  private readonly tmp: string;
  private file: Deno.FsFile | null = null;
  private readonly encoder = new TextEncoder();
  private buffer: string[] = [];
  private buffered = 0;

  constructor(private readonly path: string) {
    this.tmp = tempPathFor(path);
  }

  /** Opens the temporary file. */
  async open(): Promise<void> {
    registerTemp(this.tmp);
    this.file = await Deno.open(this.tmp, { write: true, create: true, truncate: true });
  }

  /** Appends one line (a newline is added). */
  async write(line: string): Promise<void> {
    this.buffer.push(line, "\n");
    this.buffered += line.length + 1;
    if (this.buffered >= 1 << 20) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.buffer.length) return;
    const bytes = this.encoder.encode(this.buffer.join(""));
    this.buffer = [];
    this.buffered = 0;
    let off = 0;
    while (off < bytes.length) off += await this.file!.write(bytes.subarray(off));
  }

  /** Flushes, closes and renames the temporary file over the target. */
  async commit(): Promise<void> {
    await this.flush();
    this.file!.close();
    this.file = null;
    try {
      await Deno.rename(this.tmp, this.path);
    } catch (e) {
      await Deno.remove(this.tmp).catch(() => {});
      throw e;
    } finally {
      unregisterTemp(this.tmp);
    }
  }

  /** Closes and deletes the temporary file, leaving the target untouched. */
  async abort(): Promise<void> {
    try {
      this.file?.close();
    } catch { /* already closed */ }
    this.file = null;
    await Deno.remove(this.tmp).catch(() => {});
    unregisterTemp(this.tmp);
  }
}
