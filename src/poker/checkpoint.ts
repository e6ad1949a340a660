// A solve's checkpoint: the config and the CFR state (counters, discount, the regret, strategy and
// prediction stores as they are in memory), so `deno task solve --resume` continues a solve that
// was interrupted, crashed or stopped at its limit exactly where it stood.
import { crc32Update } from "../crc32.ts";
import { encodeFileHead, FILE_HEAD_BYTES as HEAD } from "./file_head.ts";
import { streamFileAtomic } from "../cli/atomic.ts";
import { KibitzError } from "../errors.ts";
import type { CheckpointSink, SolveCarry, SolveOutcome } from "./spot.ts";
import { parseSolveConfig, type SolveConfig } from "./config.ts";
import type { CfrSolver } from "../cfr/solver.ts";
import {
  applyStateHead,
  checkStateFits,
  type SolverStateHead,
  solverStateHead,
  solverStateViews,
  stateBytes,
} from "../cfr/solver_state.ts";

/**
 * checkpoint.bin layout (little endian):
 *   "KBZCHKPT" | u32 version | u32 header bytes | header JSON (padded with spaces to 4) | every
 *   store's payload then scales (SolverStateHead.stores order) | u32 CRC-32 of all before.
 */
export const SOLVE_CHECKPOINT_VERSION = 1;
const MAGIC = "KBZCHKPT";
/**
 * Bytes moved per file read or write, through bounce buffers (stores may live in shared memory,
 * which file operations do not take). With each chunk written while the next is checksummed, F1's
 * 1.25 GB (f32) took 3.1 to 4.1 s here, against 5.6 to 6.2 s in 1 MiB chunks one after another.
 */
const CHUNK = 1 << 23;

/** A bounce buffer's bytes for `views`: a chunk, or the largest view where that is smaller. */
function bounceBytes(views: Uint8Array[]): number {
  return Math.min(CHUNK, Math.max(0, ...views.map((v) => v.length)));
}

/** Which solve a checkpoint belongs to: a plain one, or a warm start's small or full tree. */
export type CheckpointPhase = "solve" | "small" | "full";

/** What a warm start's full-tree checkpoint keeps of phases 1 and 2 (to report and to continue). */
export interface WarmStartRecord {
  /** The full tree's solve started at this iteration (max_iterations counts on from it). */
  startIteration: number;
  smallIterations: number;
  smallPct: number;
  method: string;
  weight: number;
}

/** The JSON head of a checkpoint. */
export interface CheckpointHeader {
  /** The config text of the solve (a resume builds the same spot from it). */
  config: string;
  phase: CheckpointPhase;
  state: SolverStateHead;
  /** Seconds spent solving this phase before the checkpoint, over every run. */
  seconds: number;
  /** Milestones (% of pot) and the iteration each was first reached at. */
  reached: Record<string, number>;
  /** The iteration the phase's solve started at (its grid of checks counts from there). */
  gridFrom: number;
  /** Phase "full": the warm start that seeded it. */
  warmStart?: WarmStartRecord;
  /** The solve's limits (max_iterations, target) as the run gave them: a resume's defaults. */
  limits: { maxIterations: number; targetPct: number };
  /** When it was written (ISO 8601). */
  written: string;
}

function* checkpointChunks(head: Uint8Array, views: Uint8Array[]): Generator<Uint8Array> {
  let crc = crc32Update(0, head);
  yield head;
  // Two buffers in turn: a chunk stays valid while the next one is made (streamFileAtomic's overlap).
  const size = bounceBytes(views);
  const bounce = [new Uint8Array(size), new Uint8Array(size)];
  let turn = 0;
  for (const v of views) {
    for (let off = 0; off < v.length; off += CHUNK) {
      const n = Math.min(CHUNK, v.length - off), buf = bounce[turn ^= 1];
      buf.set(v.subarray(off, off + n));
      const c = buf.subarray(0, n);
      crc = crc32Update(crc, c);
      yield c;
    }
  }
  const tail = new Uint8Array(4);
  new DataView(tail.buffer).setUint32(0, crc, true);
  yield tail;
}

/**
 * Writes `solver`'s state with the rest of `header` to `path` atomically (a temp file, then a
 * rename: an earlier checkpoint stays whole until the new one is), streaming the stores.
 */
export async function writeCheckpoint(
  path: string,
  solver: CfrSolver,
  header: Omit<CheckpointHeader, "state" | "written">,
): Promise<void> {
  const full: CheckpointHeader = {
    ...header,
    state: solverStateHead(solver),
    written: new Date().toISOString(),
  };
  await streamFileAtomic(
    path,
    checkpointChunks(
      encodeFileHead(MAGIC, SOLVE_CHECKPOINT_VERSION, full),
      solverStateViews(solver),
    ),
    true,
  )
    .catch((e) => {
      throw new KibitzError(
        "io_error",
        `cannot write the checkpoint ${path}: ${(e as Error).message}`,
      );
    });
}

/** An opened checkpoint: its header, checked, and a way to read its stores into a solver. */
export interface OpenedCheckpoint {
  path: string;
  header: CheckpointHeader;
  /** Checks `solver`'s shape, reads the stores into it and sets its counters; verifies the CRC. */
  restore(solver: CfrSolver): Promise<void>;
}

async function readFully(f: Deno.FsFile, into: Uint8Array): Promise<number> {
  let got = 0;
  while (got < into.length) {
    const n = await f.read(into.subarray(got));
    if (n === null) break;
    got += n;
  }
  return got;
}

/**
 * Opens a checkpoint (a file, or a solve's output folder holding checkpoint.bin) and checks its
 * magic, version, header and length; errors name the file.
 */
export async function openCheckpoint(given: string): Promise<OpenedCheckpoint> {
  const isDir = await Deno.stat(given).then((st) => st.isDirectory, () => false);
  const path = isDir ? `${given.replace(/\/+$/, "")}/checkpoint.bin` : given;
  const fail = (
    code: "bad_checkpoint" | "checkpoint_version" | "checkpoint_truncated",
    why: string,
  ): never => {
    throw new KibitzError(code, `${path}: ${why}`);
  };
  const bad = (why: string) => fail("bad_checkpoint", why);
  const f = await Deno.open(path).catch((e) => {
    throw new KibitzError(
      "bad_args",
      `cannot open the checkpoint ${path}: ${(e as Error).message}`,
    );
  });
  let head: Uint8Array;
  let header: CheckpointHeader;
  let size: number;
  try {
    size = (await f.stat()).size;
    const start = new Uint8Array(HEAD);
    if (await readFully(f, start) < HEAD) fail("checkpoint_truncated", "shorter than its header");
    const magic = new TextDecoder().decode(start.subarray(0, 8));
    if (magic === "KBZSOLVE") {
      bad(
        "a solve.bin holds a solve's results (its average strategies), not the state to continue " +
          "it: a solve writes checkpoint.bin beside it when stopped, or at its end with --keep-checkpoint",
      );
    }
    if (magic !== MAGIC) bad(`not a Kibitz solve checkpoint (no ${MAGIC} header)`);
    const dv = new DataView(start.buffer);
    const version = dv.getUint32(8, true);
    if (version !== SOLVE_CHECKPOINT_VERSION) {
      fail(
        "checkpoint_version",
        `checkpoint format version ${version}; this Kibitz reads version ${SOLVE_CHECKPOINT_VERSION}`,
      );
    }
    const len = dv.getUint32(12, true);
    if (HEAD + len + 4 > size) fail("checkpoint_truncated", "the file ends inside its header");
    head = new Uint8Array(HEAD + len);
    head.set(start);
    await readFully(f, head.subarray(HEAD));
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(head.subarray(HEAD)));
    } catch {
      bad("the header is not valid JSON");
    }
    header = parsed as CheckpointHeader;
    const h = header as unknown as Record<string, unknown>;
    if (typeof h !== "object" || h === null || Array.isArray(h)) bad("the header is not an object");
    if (typeof h.config !== "string") bad("malformed header: no config text");
    if (h.phase !== "solve" && h.phase !== "small" && h.phase !== "full") {
      bad(`malformed header: phase ${JSON.stringify(h.phase)}`);
    }
    const st = h.state as SolverStateHead | undefined;
    if (
      typeof st !== "object" || st === null || !Array.isArray(st.stores) ||
      typeof st.discount !== "object" || st.discount === null
    ) {
      bad("malformed header: no solver state");
    }
    if (h.phase === "full" && typeof h.warmStart !== "object") {
      bad("malformed header: a full-tree checkpoint without its warm start");
    }
    if (
      typeof h.seconds !== "number" || typeof h.reached !== "object" || h.reached === null ||
      typeof h.gridFrom !== "number"
    ) {
      bad("malformed header: no seconds or milestones");
    }
    const lim = h.limits as CheckpointHeader["limits"] | undefined;
    if (
      typeof lim !== "object" || lim === null || typeof lim.maxIterations !== "number" ||
      typeof lim.targetPct !== "number"
    ) bad("malformed header: no limits");
    const want = HEAD + len + stateBytes(header.state) + 4;
    if (!Number.isSafeInteger(want)) bad("malformed header: store sizes are not byte counts");
    if (size < want) {
      fail("checkpoint_truncated", `${size} bytes, the header describes ${want}: cut short`);
    }
    if (size > want) bad(`${size} bytes, the header describes ${want}`);
  } finally {
    f.close();
  }
  return {
    path,
    header,
    restore: async (solver) => {
      checkStateFits(solver, header.state, path);
      const file = await Deno.open(path);
      try {
        await file.seek(head.length, Deno.SeekMode.Start);
        let crc = crc32Update(0, head);
        const views = solverStateViews(solver);
        const bounce = new Uint8Array(bounceBytes(views));
        for (const v of views) {
          for (let off = 0; off < v.length; off += CHUNK) {
            const n = Math.min(CHUNK, v.length - off);
            const c = bounce.subarray(0, n);
            if (await readFully(file, c) < n) fail("checkpoint_truncated", "cut short");
            crc = crc32Update(crc, c);
            v.set(c, off);
          }
        }
        const tail = new Uint8Array(4);
        await readFully(file, tail);
        if (new DataView(tail.buffer).getUint32(0, true) !== crc) {
          throw new KibitzError(
            "checkpoint_checksum",
            `${path}: checksum mismatch: the file is corrupt`,
          );
        }
      } finally {
        file.close();
      }
      applyStateHead(solver, header.state);
    },
  };
}

/** How a solve checkpoints: where, how often, and whether a finished solve keeps its state. */
export interface CheckpointSettings {
  path: string;
  /** The config text and limits the checkpoints record. */
  config: string;
  limits: CheckpointHeader["limits"];
  /** Minutes between periodic checkpoints (0: none; Ctrl-C still writes one). */
  minutes: number;
  /** Write one when the solve finishes too (to continue it later with higher limits). */
  keep: boolean;
  /** Reports each checkpoint written, or why one was not (a solve goes on either way). */
  info: (line: string) => void;
}

/**
 * The sink of one phase of a solve: periodic checkpoints every `minutes`, one when Ctrl-C stops it
 * (and at the end with `keep`; never at the end of a warm start's small tree, whose full tree
 * follows). A failed write is reported and the solve goes on: it loses only that checkpoint.
 */
export function checkpointSink(
  settings: CheckpointSettings,
  phase: CheckpointPhase,
  /** Phase "full": the warm start that seeded it (known once the transfer is done). */
  warmStart?: () => WarmStartRecord,
): CheckpointSink {
  let last = performance.now(), writtenAt = -1;
  return {
    due: () => settings.minutes > 0 && performance.now() - last >= settings.minutes * 60_000,
    atEnd: (stoppedBy: SolveOutcome["stoppedBy"]) =>
      phase !== "small" && (stoppedBy === "interrupted" || settings.keep),
    write: async (solver: CfrSolver, carry: SolveCarry) => {
      try {
        // Stopped right after a periodic checkpoint: the state on file is this one.
        if (solver.iteration === writtenAt) return;
        await writeCheckpoint(settings.path, solver, {
          config: settings.config,
          phase,
          seconds: carry.seconds,
          reached: carry.reached,
          gridFrom: carry.gridFrom,
          limits: settings.limits,
          ...(warmStart ? { warmStart: warmStart() } : {}),
        });
        writtenAt = solver.iteration;
        settings.info(
          `checkpoint: ${settings.path} (${
            phase === "small" ? "small tree, " : ""
          }iteration ${solver.iteration}; continue with --resume ${settings.path})`,
        );
      } catch (e) {
        settings.info(`warning: checkpoint not written: ${(e as Error).message}`);
      } finally {
        last = performance.now();
      }
    },
  };
}

/**
 * What a checkpoint already at `path` holds, in words, or null when there is none: a new solve
 * into the same folder tells the user it will replace it.
 */
export async function describeEarlierCheckpoint(path: string): Promise<string | null> {
  if (!(await Deno.stat(path).then((st) => st.isFile, () => false))) return null;
  try {
    const h = (await openCheckpoint(path)).header;
    return `a solve stopped at iteration ${h.state.iteration}${
      h.phase === "small" ? " of its warm start's small tree" : ""
    } (written ${h.written})`;
  } catch (e) {
    return `a checkpoint this Kibitz cannot read (${(e as Error).message})`;
  }
}

/**
 * The config a resume solves with: the checkpoint's text and limits (flags may override them
 * after). Refuses nothing; see refuseNothingLeft.
 */
export function checkpointConfig(c: OpenedCheckpoint): SolveConfig {
  const config = parseSolveConfig(c.header.config, `${c.path} (saved config)`);
  config.solver.maxIterations = c.header.limits.maxIterations;
  config.solver.targetExploitabilityPct = c.header.limits.targetPct;
  return config;
}

/**
 * Refuses a resume with nothing left to solve under `config`'s max_iterations (it would only
 * rewrite the results and drop the checkpoint), naming the limit to raise.
 */
export function refuseNothingLeft(c: OpenedCheckpoint, config: SolveConfig): void {
  const h = c.header;
  if (h.phase === "small") return; // the small tree's limit is the warm start's own
  const w = h.phase === "full" ? h.warmStart!.startIteration : 0;
  if (h.state.iteration < config.solver.maxIterations + w) return;
  throw new KibitzError(
    "bad_args",
    `${c.path} is at iteration ${h.state.iteration}, where max_iterations = ${config.solver.maxIterations} ends${
      w ? ` (the full tree's own iterations, counted from ${w})` : ""
    }: give --max-iterations above ${h.state.iteration - w} to continue it`,
  );
}

/** The line a resume prints before it solves. */
export function resumeLine(c: OpenedCheckpoint, config: SolveConfig): string {
  const h = c.header;
  return `resuming ${
    h.phase === "small" ? "the warm start's small tree" : "the solve"
  } at iteration ${h.state.iteration} (checkpoint of ${h.written}, ${
    h.seconds.toFixed(1)
  } s solved before); max_iterations ${config.solver.maxIterations}, target ${config.solver.targetExploitabilityPct}% of the pot`;
}

/**
 * After a solve that was not interrupted and keeps no checkpoint: removes the one at `path` (its
 * state is in the results; left, it would be stale). Returns whether there was one.
 */
export async function removeFinishedCheckpoint(path: string): Promise<boolean> {
  return await Deno.remove(path).then(() => true, () => false);
}
