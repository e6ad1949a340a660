/** The outcome of a game as UHP names it, or Unfinished when nothing decides it. */
export type GameOutcome = "WhiteWins" | "BlackWins" | "Draw" | "Unfinished";

/**
 * Maps a boardspace `SU` variant (`hive`, `hive-plm`, `Hive-PLM`, `hive-plm 2 0 101`, `hive-p`)
 * to a UHP GameType (`Base`, `Base+MLP`, `Base+P`); null when it is not a Hive variant we know.
 */
export function boardspaceGameType(su: string): string | null {
  const name = su.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  const m = /^hive(?:-([mlp]+))?$/.exec(name);
  if (!m) return null;
  const letters = m[1] ?? "";
  const exp = ["m", "l", "p"].filter((x) => letters.includes(x)).join("").toUpperCase();
  if (exp.length !== new Set(letters).size || exp.length !== letters.length) return null;
  return exp ? `Base+${exp}` : "Base";
}

const MONTHS: Record<string, number> = {};
const MONTH_NAMES = [
  // English, German, French, Italian, Spanish, Dutch, Portuguese (full names).
  "january february march april may june july august september october november december",
  "januar februar märz april mai juni juli august september oktober november dezember",
  "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
  "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
  "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
  "januari februari maart april mei juni juli augustus september oktober november december",
  "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
];
for (const list of MONTH_NAMES) {
  list.split(" ").forEach((name, i) => MONTHS[name] = i + 1);
}
for (const [i, a] of "jan feb mar apr may jun jul aug sep oct nov dec".split(" ").entries()) {
  MONTHS[a] = i + 1;
}

function month(word: string): number {
  const w = word.toLowerCase().replace(/\.$/, "");
  return MONTHS[w] ?? 0;
}

function ymd(y: number, m: number, d: number): string {
  if (!m || d < 1 || d > 31 || y < 1990 || y > 2100) return "";
  return `${y}.${String(m).padStart(2, "0")}.${String(d).padStart(2, "0")}`;
}

/**
 * Converts a boardspace `DT` value to `YYYY.MM.DD` (the date as written, no time zone shift):
 * `Fri Apr 19 19:54:39 CDT 2013`, `28 October 2018`, `2. Oktober 2019`, `October 2, 2019`.
 * Returns "" when the date is not recognised.
 */
export function boardspaceDate(dt: string): string {
  const t = dt.trim();
  let m = /^\S+\s+(\S+)\s+(\d{1,2})\s+\d{1,2}:\d{2}(?::\d{2})?\s+(?:\S+\s+)?(\d{4})$/.exec(t);
  if (m) return ymd(Number(m[3]), month(m[1]), Number(m[2]));
  m = /^(\d{1,2})\.?\s+(\S+)\s+(\d{4})$/.exec(t);
  if (m) return ymd(Number(m[3]), month(m[2]), Number(m[1]));
  m = /^(\S+)\s+(\d{1,2}),?\s+(\d{4})$/.exec(t);
  if (m) return ymd(Number(m[3]), month(m[1]), Number(m[2]));
  m = /^(\d{4})[-./](\d{1,2})[-./](\d{1,2})/.exec(t);
  if (m) return ymd(Number(m[1]), Number(m[2]), Number(m[3]));
  return "";
}

const DRAW_WORDS =
  /\b(draw|drawn|tie|nulle|patta|pareggio|remis|unentschieden|empate|gelijkspel)\b/i;

/** True when `name` occurs in `text` as a whole word (not inside a longer name). */
function mentions(text: string, name: string): boolean {
  if (name === "") return false;
  for (let i = text.indexOf(name); i >= 0; i = text.indexOf(name, i + 1)) {
    const before = i === 0 ? "" : text[i - 1];
    const after = text[i + name.length] ?? "";
    if (!/[\p{L}\p{N}_]/u.test(before) && !/[\p{L}\p{N}_]/u.test(after)) return true;
  }
  return false;
}

/**
 * Reads a free-text `RE` value (possibly localized): the winner when exactly one player's name
 * appears in it as a whole word, Draw when it says so (in one of several languages).
 */
export function outcomeFromText(re: string, white: string, black: string): GameOutcome {
  const text = re.trim();
  if (!text) return "Unfinished";
  const hasW = mentions(text, white);
  const hasB = mentions(text, black);
  if (hasW && !hasB) return "WhiteWins";
  if (hasB && !hasW) return "BlackWins";
  if (DRAW_WORDS.test(text)) return "Draw";
  return "Unfinished";
}
