import type { IngestSummary, Rejection } from "./ingest.ts";

/** One line describing a rejection: where (file, game, ply, line), why, and the raw action. */
export function formatRejection(r: Rejection): string {
  const where = [
    r.source,
    r.index >= 0 ? `game ${r.index}` : "",
    r.ply > 0 ? `ply ${r.ply}` : "",
    r.line > 0 ? `line ${r.line}` : "",
  ].filter(Boolean).join(", ");
  return `${where}: [${r.reason}] ${r.message}`;
}

/** The running counts as one progress line. */
export function formatProgress(s: IngestSummary): string {
  const rate = s.seconds > 0 ? Math.round(s.records / s.seconds) : 0;
  return `${s.files} files, ${s.records} games: ${s.accepted} accepted, ${s.rejected} rejected, ` +
    `${s.duplicates} duplicates (${rate} games/s)`;
}

/** The end-of-batch summary: counts, rejections by reason, rates. */
export function formatSummary(s: IngestSummary): string {
  const sec = Math.max(s.seconds, 1e-9);
  const reasons = Object.entries(s.byReason).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return [
    `files:      ${s.files}`,
    `games:      ${s.records}`,
    `accepted:   ${s.accepted} (${
      s.accepted - s.alreadyStored
    } new, ${s.alreadyStored} already stored)`,
    `duplicates: ${s.duplicates}`,
    `plies:      ${s.plies}${s.cut ? ` (${s.cut} games cut where the position decided them)` : ""}`,
    `rejected:   ${s.rejected}${
      reasons.length ? ` (${reasons.map(([k, v]) => `${k} ${v}`).join(", ")})` : ""
    }`,
    `store:      ${s.stored} games`,
    `speed:      ${(s.records / sec).toFixed(0)} games/s, ${
      (s.plies / sec).toFixed(0)
    } plies/s in ${s.seconds.toFixed(2)} s`,
  ].join("\n");
}
