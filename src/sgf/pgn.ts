import type { GameOutcome } from "./headers.ts";

/** What a PGN of one Hive game holds (the format Mzinga writes for converted records). */
export interface PgnGame {
  gameType: string;
  date: string;
  white: string;
  black: string;
  outcome: GameOutcome;
  /** Extra tags written after the mandatory ones, in order, skipped when empty. */
  extra: [string, string][];
  moves: string[];
}

function tag(key: string, value: string): string {
  return `[${key} "${value.replaceAll('"', "'").trim()}"]`;
}

/** Formats a game as PGN: the seven mandatory tags, Result, extras, numbered moves, result line. */
export function formatPgn(g: PgnGame): string {
  const result = g.outcome === "Unfinished" ? "InProgress" : g.outcome;
  const lines = [
    tag("GameType", g.gameType),
    tag("Date", g.date),
    tag("Event", ""),
    tag("Site", ""),
    tag("Round", ""),
    tag("White", g.white),
    tag("Black", g.black),
    tag("Result", result),
  ];
  for (const [k, v] of g.extra) if (v.trim() !== "") lines.push(tag(k, v));
  if (g.moves.length) {
    lines.push("");
    g.moves.forEach((m, i) => lines.push(`${i + 1}. ${m}`));
  }
  if (g.outcome !== "Unfinished") lines.push("", g.outcome);
  return lines.join("\n") + "\n";
}

/** Reads the tags and numbered moves of a PGN written by formatPgn or Mzinga. */
export function parsePgn(text: string): { tags: Record<string, string>; moves: string[] } {
  const tags: Record<string, string> = {};
  const moves: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const t = /^\[(\S+)\s+"(.*)"\]$/.exec(line);
    if (t) tags[t[1]] = t[2];
    else if (/^\d+\.\s/.test(line)) moves.push(line.replace(/^\d+\.\s+/, ""));
  }
  return { tags, moves };
}
