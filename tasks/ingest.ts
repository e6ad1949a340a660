import { parseTaskArgs } from "../src/cli/args.ts";
import { KibitzError } from "../src/errors.ts";
import { runMain } from "../src/cli/main.ts";
import { Progress } from "../src/cli/progress.ts";
import { ingestBoardspace, type Rejection } from "../src/sgf/ingest.ts";
import { AtomicLineWriter } from "../src/sgf/store.ts";
import { formatProgress, formatRejection, formatSummary } from "../src/sgf/summary.ts";

const SHOWN = 20;

await runMain(async () => {
  const args = parseTaskArgs(
    Deno.args,
    "deno task ingest <files | folders | .zip archives>... [--out games.jsonl] [--pgn DIR] " +
      "[--variant Base+MLP] [--exclude-bots] [--rejects FILE]",
    "Reads boardspace.net Hive records, replays every game through the rules engine and stores " +
      "the legal ones as UHP games (one JSON line each, stable ids: re-runs add nothing twice).",
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
    },
  );
  if (!args) return;
  if (args.positionals.length === 0) {
    throw new KibitzError("bad_args", "give at least one .sgf file, folder or .zip archive");
  }
  const progress = new Progress("ingest");
  const rejections: Rejection[] = [];
  const summary = await ingestBoardspace(args.positionals, {
    out: String(args.values.out),
    pgnDir: args.values.pgn as string | undefined,
    variant: args.values.variant as string | undefined,
    excludeBots: args.values["exclude-bots"] === true,
    onProgress: (s) => progress.update(formatProgress(s)),
    onReject: (r) => rejections.push(r),
  });
  progress.done(formatProgress(summary));
  if (args.values.rejects) {
    const w = new AtomicLineWriter(String(args.values.rejects));
    await w.open();
    for (const r of rejections) await w.write(JSON.stringify(r));
    await w.commit();
  }
  for (const r of rejections.slice(0, SHOWN)) console.log(`rejected: ${formatRejection(r)}`);
  if (rejections.length > SHOWN) {
    console.log(`... and ${rejections.length - SHOWN} more (see --rejects FILE)`);
  }
  console.log(formatSummary(summary));
  const pgn = args.values.pgn ? String(args.values.pgn).replace(/\/+$/, "") : "";
  console.log(`wrote ${args.values.out}${pgn ? ` and PGNs in ${pgn}/` : ""}`);
});
