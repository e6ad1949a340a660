import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { ingestRecordFile } from "./ingest.ts";
import { gamePositions } from "./positions.ts";
import { parseSgf } from "./reader.ts";
import { convertBoardspaceRecord } from "./record.ts";
import { type SourceFile, sourceFiles } from "./sources.ts";
import type { StoredGame } from "./store.ts";

/** Runs `pass` repeatedly for at least `minMs` (after one warm-up) and returns seconds per pass. */
function secondsPerPass(pass: () => void, minMs: number): number {
  pass();
  let reps = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs || reps < 3) {
    pass();
    reps++;
  }
  return (performance.now() - t0) / 1000 / reps;
}

async function loadFiles(args: string[]): Promise<SourceFile[]> {
  const inputs = args.length
    ? args
    : [new URL("../../tests/fixtures/sgf/records/", import.meta.url).pathname];
  const files: SourceFile[] = [];
  for await (const f of sourceFiles(inputs)) if ("text" in f) files.push(f);
  return files;
}

/** The `ingest` suite: games/s and plies/s of each ingestion stage on real boardspace records. */
export const suite: BenchSuite = {
  description:
    "boardspace record ingestion: SGF parsing, dialect conversion, replay, position streaming",
  async run(opts): Promise<BenchReport> {
    const report = newReport("ingest", null);
    const files = await loadFiles(opts.args);
    const minMs = opts.full ? 5000 : 1000;
    let records = 0;
    const games: StoredGame[] = [];
    for (const f of files) {
      const r = ingestRecordFile(f);
      records += r.records;
      games.push(...r.games);
    }
    const plies = games.reduce((n, g) => n + g.moves.length, 0);
    opts.log(`${files.length} files, ${records} records, ${games.length} accepted, ${plies} plies`);

    const stages: [string, () => void][] = [
      ["parse SGF", () => {
        for (const f of files) parseSgf(f.text, f.name);
      }],
      ["parse + convert dialect", () => {
        for (const f of files) for (const t of parseSgf(f.text, f.name)) convertBoardspaceRecord(t);
      }],
      ["full ingest (+ replay through rules engine)", () => {
        for (const f of files) ingestRecordFile(f);
      }],
      ["stream positions (replay stored games)", () => {
        for (const g of games) for (const _ of gamePositions(g)) { /* consume */ }
      }],
    ];
    const rows: (string | number)[][] = [];
    let base = 0;
    for (const [name, pass] of stages) {
      const sec = secondsPerPass(pass, minMs);
      if (!base) base = sec;
      opts.log(`${name}: ${(records / sec).toFixed(0)} games/s`);
      rows.push([name, records, plies, records / sec, plies / sec, sec / base]);
    }
    report.tables.push({
      title: "Ingestion speed (one CPU thread)",
      columns: ["stage", "games", "plies", "games/s", "plies/s", "time vs parse"],
      rows,
    });
    report.notes.push(
      `Input: ${
        opts.args.length ? opts.args.join(", ") : "tests/fixtures/sgf/records (9 real records)"
      }; ` +
        "each stage repeated for at least " + `${minMs / 1000} s after a warm-up pass.`,
      "Games counts every record read; plies counts the moves of the accepted games.",
      "Pass folders or .zip archives after the suite name to measure on other records.",
    );
    return report;
  },
};
