import { intOption, parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { stopOnSignal } from "../src/cli/atomic.ts";
import { ensureInput, ensureOutputDir, ensureOutputFile } from "../src/cli/paths.ts";
import { Progress } from "../src/cli/progress.ts";
import { ingestBoardspace, type Rejection } from "../src/sgf/ingest.ts";
import { DEFAULT_MAX_ARCHIVE_BYTES, DEFAULT_MAX_MEMBER_BYTES } from "../src/sgf/sources.ts";
import { AtomicLineWriter } from "../src/sgf/store.ts";
import { formatProgress, formatRejection, formatSummary } from "../src/sgf/summary.ts";

const SHOWN = 20;
const MIB = 1 << 20;

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task ingest <files | folders | .zip archives>... [--out games.jsonl] [--pgn DIR] " +
      "[--variant Base+MLP] [--exclude-bots] [--rejects FILE] [--max-member-mb N] " +
      "[--max-archive-mb N] [--no-wait]",
    "Reads boardspace.net Hive records, replays every game through the rules engine and stores " +
      "the legal ones as UHP games (one JSON line each, stable ids: re-runs add nothing twice).\n" +
      "Record files and archive members over the size caps are rejected (too_large); one ingest " +
      "writes a store at a time (others wait for its lock).",
    {
      out: {
        type: "string",
        default: "games.jsonl",
        help: "game store (JSON lines), written atomically",
      },
      pgn: { type: "string", help: "also write one PGN per accepted game into this folder" },
      variant: { type: "string", help: "keep only this game type (Base, Base+M, ..., Base+MLP)" },
      "exclude-bots": { type: "boolean", help: "leave out games with a boardspace robot" },
      rejects: { type: "string", help: "write every rejection as a JSON line to this file" },
      "max-member-mb": {
        type: "string",
        default: String(DEFAULT_MAX_MEMBER_BYTES / MIB),
        help: "cap on one record file or uncompressed archive member, MiB",
      },
      "max-archive-mb": {
        type: "string",
        default: String(DEFAULT_MAX_ARCHIVE_BYTES / MIB),
        help: "cap on the uncompressed bytes read from one archive, MiB",
      },
      "no-wait": {
        type: "boolean",
        help: "fail at once if another ingest is writing the store, instead of waiting",
      },
    },
  );
  if (!args) return;
  if (args.positionals.length === 0) {
    throw new KibitzError(
      "bad_args",
      "inputs: missing; give at least one .sgf file, folder or .zip archive",
    );
  }
  const maxMember = intOption(args.values, "max-member-mb", DEFAULT_MAX_MEMBER_BYTES / MIB, 1);
  const maxArchive = intOption(args.values, "max-archive-mb", DEFAULT_MAX_ARCHIVE_BYTES / MIB, 1);
  // Everything that can fail at once fails before the long work starts.
  for (const input of args.positionals) await ensureInput(input, "input");
  const out = String(args.values.out);
  await ensureOutputFile(out, "--out");
  if (args.values.pgn !== undefined) await ensureOutputDir(String(args.values.pgn), "--pgn");
  if (args.values.rejects !== undefined) {
    await ensureOutputFile(String(args.values.rejects), "--rejects");
  }
  const progress = new Progress("ingest");
  const rejections: Rejection[] = [];
  const stop = stopOnSignal("ingest: stopping after this file, then writing the store");
  const summary = await ingestBoardspace(args.positionals, {
    shouldStop: () => stop.stopped,
    out,
    pgnDir: args.values.pgn as string | undefined,
    variant: args.values.variant as string | undefined,
    excludeBots: args.values["exclude-bots"] === true,
    limits: { maxMemberBytes: maxMember * MIB, maxArchiveBytes: maxArchive * MIB },
    wait: args.values["no-wait"] !== true,
    onWait: (lock, pid) =>
      console.error(
        `ingest: ${out} is being written by another ingest (pid ${pid ?? "unknown"}, ` +
          `lock ${lock}); waiting for it (--no-wait to fail instead)`,
      ),
    onTakeOver: (lock, pid) =>
      console.error(`ingest: took over ${lock} from pid ${pid}, which is no longer running`),
    onProgress: (s) => progress.update(formatProgress(s)),
    onReject: (r) => rejections.push(r),
  }).finally(stop.release);
  progress.done(formatProgress(summary));
  if (args.values.rejects) {
    const w = new AtomicLineWriter(String(args.values.rejects));
    try {
      await w.open();
      for (const r of rejections) await w.write(JSON.stringify(r));
      await w.commit();
    } catch (e) {
      await w.abort();
      throw e;
    }
  }
  for (const r of rejections.slice(0, SHOWN)) console.log(`rejected: ${formatRejection(r)}`);
  if (rejections.length > SHOWN) {
    console.log(`... and ${rejections.length - SHOWN} more (see --rejects FILE)`);
  }
  console.log(formatSummary(summary));
  const pgn = args.values.pgn ? String(args.values.pgn).replace(/\/+$/, "") : "";
  console.log(`wrote ${out}${pgn ? ` and PGNs in ${pgn}/` : ""}`);
  if (summary.stopped) {
    console.log(
      "stopped before the last input: run it again to add the rest (stored games are kept)",
    );
  }
});
