import { writeFileAtomic } from "../cli/atomic.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import { hiveGameTypeString, parseHiveGameType } from "../hive/mod.ts";
import { formatPgn } from "./pgn.ts";
import { parseSgf } from "./reader.ts";
import { convertBoardspaceRecord, RecordError } from "./record.ts";
import { decideResult, replayRecord } from "./replay.ts";
import { lockStore } from "./lock.ts";
import { type SourceFile, sourceFiles, type SourceLimits } from "./sources.ts";
import {
  AtomicLineWriter,
  gameId,
  isGzipStore,
  readGameStore,
  sourceBase,
  type StoredGame,
} from "./store.ts";

/** Boardspace's robot players, excluded with `excludeBots`. */
export const BOARDSPACE_BOTS = /^(dumbot|weakbot|smartbot|bestbot|randombot|testbot)\d*$/i;

/** Which records to keep. */
export interface IngestFilter {
  /** Keep only this UHP GameType (normalized, e.g. `Base+MLP`); all when undefined. */
  variant?: string;
  /** Drop games with a boardspace robot on either side. */
  excludeBots?: boolean;
}

/** One record (or whole file) left out, with the reason code and where. */
export interface Rejection {
  source: string;
  /** Record index in the file; -1 when the whole file failed. */
  index: number;
  reason: string;
  /** The ply that failed (1-based), 0 when not about a move. */
  ply: number;
  /** The record action as written, "" when not about a move. */
  raw: string;
  /** Line in the file, 0 when unknown. */
  line: number;
  message: string;
}

/** What one record file gave: accepted games and rejections. */
export interface FileIngest {
  records: number;
  /** Accepted games whose record went on after the position decided them (cut there). */
  cut: number;
  games: StoredGame[];
  rejections: Rejection[];
}

/** Normalizes a `--variant` value to a UHP GameType, or throws `bad_args`. */
export function normalizeVariant(variant: string): string {
  try {
    return hiveGameTypeString(parseHiveGameType(variant));
  } catch (e) {
    throw new KibitzError("bad_args", `--variant: ${(e as Error).message}`);
  }
}

/**
 * Converts, filters and replays every record of one file (sync, no I/O). A bad record never
 * stops the others; a file that is not valid SGF is one rejection with line and column.
 */
export function ingestRecordFile(file: SourceFile, filter: IngestFilter = {}): FileIngest {
  const out: FileIngest = { records: 0, cut: 0, games: [], rejections: [] };
  const reject = (index: number, reason: string, message: string, ply = 0, raw = "", line = 0) =>
    out.rejections.push({ source: file.name, index, reason, ply, raw, line, message });
  let trees;
  try {
    trees = parseSgf(file.text, file.name);
  } catch (e) {
    // A file the reader cannot even walk (e.g. absurd nesting) is rejected like a syntax error.
    if (isKibitzError(e)) reject(-1, e.code, e.message, 0, "", (e as { line?: number }).line ?? 0);
    else reject(-1, "sgf_syntax", `${file.name}: ${(e as Error).message}`);
    return out;
  }
  if (trees.length === 0) reject(-1, "no_records", `${file.name}: no game records`);
  trees.forEach((tree, index) => {
    out.records++;
    try {
      const rec = convertBoardspaceRecord(tree);
      if (filter.variant && rec.gameType !== filter.variant) {
        reject(
          index,
          "variant_mismatch",
          `${rec.gameType} (SU[${rec.variant}]) is not ${filter.variant}`,
        );
        return;
      }
      if (
        filter.excludeBots && (BOARDSPACE_BOTS.test(rec.white) || BOARDSPACE_BOTS.test(rec.black))
      ) {
        reject(index, "bot", `robot player: ${rec.white} vs ${rec.black}`);
        return;
      }
      const replay = replayRecord(rec);
      if (replay.afterEnd > 0) out.cut++;
      const { result, termination } = decideResult(rec, replay.positionOutcome);
      const name = rec.gameName || sourceBase(file.name);
      out.games.push({
        id: gameId(name, rec.gameType, replay.moves),
        source: file.name,
        index,
        gameName: rec.gameName,
        gameType: rec.gameType,
        variant: rec.variant,
        white: rec.white,
        black: rec.black,
        date: rec.date,
        dateRaw: rec.dateRaw,
        result,
        termination,
        resultText: rec.resultText,
        moves: replay.moves,
      });
    } catch (e) {
      if (e instanceof RecordError) {
        reject(index, e.code, `${file.name} game ${index}: ${e.message}`, e.ply, e.raw, e.line);
      } else {
        // Never let one record stop a batch, even on a defect of ours: report it instead.
        reject(index, "internal_error", `${file.name} game ${index}: ${(e as Error).message}`);
      }
    }
  });
  return out;
}

/** A PGN of a stored game in the format of Mzinga's converted records. */
export function storedGamePgn(g: StoredGame): string {
  return formatPgn({
    gameType: g.gameType,
    date: g.date,
    white: g.white,
    black: g.black,
    outcome: g.result,
    extra: [["SgfDate", g.dateRaw], ["SgfGameName", g.gameName], ["SgfResult", g.resultText]],
    moves: g.moves,
  });
}

/** Options of a batch ingestion. */
export interface IngestOptions extends IngestFilter {
  /** The game store (JSON lines); games already in it are kept and not added twice. */
  out: string;
  /** Folder for one PGN per accepted game. */
  pgnDir?: string;
  /** Called after each file with the running summary. */
  onProgress?: (s: IngestSummary) => void;
  /** Called for each rejection. */
  onReject?: (r: Rejection) => void;
  /** Size caps on record files, archive members and archives (defaults in sources.ts). */
  limits?: SourceLimits;
  /** Wait for another writer of the same store (default) or fail at once (`store_locked`). */
  wait?: boolean;
  /** Called once when another writer holds the store, before waiting for it. */
  onWait?: (lockPath: string, holder: number | null) => void;
  /** Called when the store's lock file named a writer that is gone (its lock is taken over). */
  onTakeOver?: (lockPath: string, pid: number) => void;
  /**
   * Polled after each file: true stops the batch there (Ctrl-C) and writes the store with the games
   * so far; running it again adds the rest (games already stored are not added twice).
   */
  shouldStop?: () => boolean;
}

/** Counts of a batch ingestion. */
export interface IngestSummary {
  files: number;
  records: number;
  /** Games accepted in this run (new plus already stored). */
  accepted: number;
  /** Accepted games that were already in the store. */
  alreadyStored: number;
  /** Records that repeat a game accepted earlier in this run. */
  duplicates: number;
  /** Plies of the accepted games. */
  plies: number;
  /** Accepted games cut where the position decided them (the record went on). */
  cut: number;
  rejected: number;
  byReason: Record<string, number>;
  /** Games in the store after the run. */
  stored: number;
  seconds: number;
  /** True when shouldStop ended the batch before its last file. */
  stopped?: boolean;
}

/**
 * Ingests files, folders and .zip archives of boardspace records into a game store (and PGNs):
 * every record is replayed through the rules engine, bad ones are rejected with a reason while the
 * batch goes on, games are keyed by a stable id so re-runs add nothing twice, and the store is
 * replaced atomically at the end. One writer at a time: the store's lock is held throughout, so
 * concurrent ingests into one store queue up and none loses the other's games.
 */
export async function ingestBoardspace(
  inputs: string[],
  opts: IngestOptions,
): Promise<IngestSummary> {
  const t0 = performance.now();
  const s: IngestSummary = {
    files: 0,
    records: 0,
    accepted: 0,
    alreadyStored: 0,
    duplicates: 0,
    plies: 0,
    cut: 0,
    rejected: 0,
    byReason: {},
    stored: 0,
    seconds: 0,
  };
  const filter: IngestFilter = {
    variant: opts.variant ? normalizeVariant(opts.variant) : undefined,
    excludeBots: opts.excludeBots,
  };
  if (isGzipStore(opts.out)) {
    throw new KibitzError(
      "bad_args",
      `${opts.out}: stores are written as plain JSON lines (gzip the finished file; .gz stores are read-only)`,
    );
  }
  const parent = opts.out.includes("/") ? opts.out.slice(0, opts.out.lastIndexOf("/")) : "";
  if (parent) await Deno.mkdir(parent, { recursive: true });
  // One writer per store: the lock spans reading the old store to renaming the new one.
  const lock = await lockStore(opts.out, { wait: opts.wait, onWait: opts.onWait });
  if (lock.tookOverFrom !== null) opts.onTakeOver?.(lock.path, lock.tookOverFrom);
  const writer = new AtomicLineWriter(opts.out);
  try {
    await writer.open();
    const known = new Set<string>();
    let existing = false;
    try {
      existing = (await Deno.stat(opts.out)).isFile;
    } catch { /* no store yet */ }
    if (existing) {
      for await (const g of readGameStore(opts.out)) {
        if (known.has(g.id)) continue;
        known.add(g.id);
        await writer.write(JSON.stringify(g));
      }
    }
    const before = new Set(known);
    const seen = new Set<string>();
    const pgnNames = new Set<string>();
    if (opts.pgnDir) await Deno.mkdir(opts.pgnDir, { recursive: true });
    const rejected = (r: Rejection) => {
      s.rejected++;
      s.byReason[r.reason] = (s.byReason[r.reason] ?? 0) + 1;
      opts.onReject?.(r);
    };
    for await (const src of sourceFiles(inputs, opts.limits)) {
      s.files++;
      if (!("text" in src)) {
        rejected({
          source: src.name,
          index: -1,
          reason: src.reason,
          ply: 0,
          raw: "",
          line: 0,
          message: src.message,
        });
        opts.onProgress?.({ ...s, seconds: (performance.now() - t0) / 1000 });
        continue;
      }
      const res = ingestRecordFile(src, filter);
      s.records += res.records;
      s.cut += res.cut;
      res.rejections.forEach(rejected);
      for (const g of res.games) {
        if (seen.has(g.id)) {
          s.duplicates++;
          continue;
        }
        seen.add(g.id);
        s.accepted++;
        s.plies += g.moves.length;
        if (before.has(g.id)) s.alreadyStored++;
        else {
          known.add(g.id);
          await writer.write(JSON.stringify(g));
        }
        if (opts.pgnDir) {
          let name = `${sourceBase(g.source)}${g.index ? `-${g.index + 1}` : ""}`;
          if (pgnNames.has(name)) name += `-${g.id}`;
          pgnNames.add(name);
          await writeFileAtomic(`${opts.pgnDir}/${name}.pgn`, storedGamePgn(g));
        }
      }
      opts.onProgress?.({ ...s, seconds: (performance.now() - t0) / 1000 });
      if (opts.shouldStop?.()) {
        s.stopped = true;
        break;
      }
    }
    s.stored = known.size;
    await writer.commit();
  } catch (e) {
    await writer.abort();
    throw e;
  } finally {
    await lock.release();
  }
  s.seconds = (performance.now() - t0) / 1000;
  return s;
}
