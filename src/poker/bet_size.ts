import { KibitzError } from "../errors.ts";

// Bet-size grammar with the semantics of the open-source Rust postflop solver
// (github.com/b-inary/postflop-solver, src/bet_size.rs and src/action_tree.rs). Each comma-separated
// entry ends in one of %, x, c, r, e, a (case-insensitive):
//   "70%"     pot-relative: amount = round(pot * 0.70)
//   "2.5x"    previous-bet-relative (raises only, multiplier > 1): raise to round(prevBet * 2.5)
//   "100c"    constant chips (an integer): bet 100, or raise by 100 over the previous bet
//   "20c3r"   constant chips with a raise cap (raises only): allowed while bets so far <= 3
//   "e" "2e"  geometric over N streets (no N: flop 3, turn 2, river 1; for raises N minus the
//             raises already made, at least 1): with spr = stack after calling / pot after
//             calling, ratio = ((2 * spr + 1)^(1 / N) - 1) / 2 and amount = round(pot * ratio), so
//             N equal pot-relative bets put exactly the stack in
//   "3e200%"  geometric capped at 200% of the pot: ratio = min(ratio, 2.0)
//   "a"       all-in
// Entries are sorted the way the reference sorts its enum (variant order, then value).

/** One bet-size entry. */
export type BetSize =
  | { kind: "pot"; ratio: number }
  | { kind: "prev"; ratio: number }
  | { kind: "chips"; chips: number; cap: number }
  | { kind: "geometric"; streets: number; maxRatio: number }
  | { kind: "allin" };

/** Bet and raise sizes of one player on one street. */
export interface BetSizeOptions {
  bet: BetSize[];
  raise: BetSize[];
}

const ORDER = { pot: 0, prev: 1, chips: 2, geometric: 3, allin: 4 } as const;

function compare(a: BetSize, b: BetSize): number {
  if (a.kind !== b.kind) return ORDER[a.kind] - ORDER[b.kind];
  if (a.kind === "pot" || a.kind === "prev") return a.ratio - (b as typeof a).ratio;
  if (a.kind === "chips") {
    const o = b as typeof a;
    return a.chips - o.chips || a.cap - o.cap;
  }
  if (a.kind === "geometric") {
    const o = b as typeof a;
    return a.streets - o.streets || a.maxRatio - o.maxRatio;
  }
  return 0;
}

/** A plain non-negative decimal: no sign, no letters (as the reference's parse_float). */
function num(s: string): number | null {
  return /^(?:\d+\.?\d*|\.\d+)$/.test(s) ? Number(s) : null;
}

/** Parses one entry; returns an error reason or the size. */
function parseOne(s: string, isRaise: boolean): BetSize | string {
  const t = s.toLowerCase();
  if (t.endsWith("x")) {
    if (!isRaise) return "a multiple of the previous bet (x) is only valid for raises";
    const f = num(t.slice(0, -1));
    if (f === null) return "expected a number before x, e.g. 2.5x";
    if (f <= 1) return "the multiplier must be greater than 1";
    return { kind: "prev", ratio: f };
  }
  if (t.includes("c")) {
    const parts = t.split("c");
    if (parts.length !== 2) return "expected chips like 100c or 20c3r";
    const add = num(parts[0]);
    if (add === null) return "expected an integer number of chips before c";
    if (!Number.isInteger(add)) return "the chip amount must be an integer";
    if (add > 2 ** 31 - 1) return "the chip amount must be below 2^31";
    if (add === 0) return "a size of 0 chips is no bet (give a positive amount, or check)";
    let cap = 0;
    if (parts[1] !== "") {
      if (!isRaise) return "a raise cap (r) is only valid for raises";
      if (!parts[1].endsWith("r")) return "expected a raise cap like 3r after c";
      const f = num(parts[1].slice(0, -1));
      if (f === null || !Number.isInteger(f) || f === 0) {
        return "the raise cap must be a positive integer";
      }
      if (f > 100) return "the raise cap must be at most 100";
      cap = f;
    }
    return { kind: "chips", chips: add, cap };
  }
  if (t.includes("e")) {
    const parts = t.split("e");
    if (parts.length !== 2) return "expected a geometric size like e, 2e or 3e200%";
    let streets = 0;
    if (parts[0] !== "") {
      const f = num(parts[0]);
      if (f === null || !Number.isInteger(f) || f === 0) {
        return "the number of streets must be a positive integer";
      }
      if (f > 100) return "the number of streets must be at most 100";
      streets = f;
    }
    let maxRatio = Infinity;
    if (parts[1] !== "") {
      if (!parts[1].endsWith("%")) return "the cap after e must be a percentage, e.g. 3e200%";
      const f = num(parts[1].slice(0, -1));
      if (f === null) return "the cap after e must be a percentage, e.g. 3e200%";
      if (f === 0) return "a cap of 0% allows no bet (give a positive percentage)";
      maxRatio = f / 100;
    }
    return { kind: "geometric", streets, maxRatio };
  }
  if (t.endsWith("%")) {
    const f = num(t.slice(0, -1));
    if (f === null) return "expected a non-negative number before %";
    if (f === 0) return "0% of the pot is no bet (give a positive percentage, or check)";
    return { kind: "pot", ratio: f / 100 };
  }
  if (t === "a") return { kind: "allin" };
  return "expected a size ending in %, x, c, r, e or a (e.g. 33%, 2.5x, 100c, 20c3r, 2e, a)";
}

/** Parses a comma-separated size list; `where` names the config key in errors. */
export function parseBetSizeList(text: string, isRaise: boolean, where: string): BetSize[] {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  const out: BetSize[] = [];
  for (const p of parts) {
    if (p === "") throw new KibitzError("bad_bet_size", `${where}: empty entry in "${text}"`);
    const r = parseOne(p, isRaise);
    if (typeof r === "string") {
      throw new KibitzError("bad_bet_size", `${where}: invalid bet size "${p}": ${r}`);
    }
    out.push(r);
  }
  return out.sort(compare);
}

/** Parses bet and raise lists ("60%, e, a", "2.5x") of one player on one street. */
export function parseBetSizes(bet: string, raise: string, where = "bet_sizes"): BetSizeOptions {
  return {
    bet: parseBetSizeList(bet, false, `${where} (bet)`),
    raise: parseBetSizeList(raise, true, `${where} (raise)`),
  };
}

/** Writes a size back in the grammar ("60%", "2.5x", "20c3r", "3e200%", "a"). */
export function betSizeToString(s: BetSize): string {
  const pct = (r: number) => `${+(r * 100).toFixed(6)}%`;
  switch (s.kind) {
    case "pot":
      return pct(s.ratio);
    case "prev":
      return `${s.ratio}x`;
    case "chips":
      return s.cap ? `${s.chips}c${s.cap}r` : `${s.chips}c`;
    case "geometric":
      return `${s.streets || ""}e${s.maxRatio === Infinity ? "" : pct(s.maxRatio)}`;
    case "allin":
      return "a";
  }
}

/** Named size sets for one street: bet, raise and (turn/river) donk lists. */
export interface BetSizePreset {
  bet: string;
  raise: string;
  donk: string;
}

/**
 * Presets usable in place of explicit sizes: `minimal` (one size, small trees for quick looks),
 * `standard` (two bets and one raise, the usual study tree), `full` (wide trees, slow solves).
 */
export const BET_SIZE_PRESETS: Record<string, BetSizePreset> = {
  minimal: { bet: "66%", raise: "a", donk: "" },
  standard: { bet: "33%, 75%", raise: "2.5x", donk: "" },
  full: { bet: "25%, 50%, 75%, 125%, a", raise: "2.5x, 4x, a", donk: "33%" },
};
