import { KibitzError } from "../errors.ts";
import {
  BET_SIZE_PRESETS,
  type BetSize,
  type BetSizeOptions,
  parseBetSizeList,
} from "./bet_size.ts";

// The warm-start keys of a config's [solver] table, parsed apart from the warm start itself so that
// config.ts does not import the solve (warmstart.ts runs solves; config.ts is below them).

/** How bet sizes between two large-tree sizes are split. */
export type WarmStartInterpolation = "linear" | "log";

/** The `[solver]` keys of the warm start. */
export const WARMSTART_CONFIG_KEYS: readonly string[] = [
  "use_warmstart",
  "warmstart_method",
  "warmstart_weight",
  "warmstart_interpolation",
  "warmstart_minimal_max_iters",
  "warmstart_minimal_exploitability_pct",
  "warmstart_bet_sizes",
  "warmstart_bet",
  "warmstart_raise",
];

/** How the full tree is seeded: from the mapped strategy's values, or by transferring regrets. */
export type WarmStartMethod = "values" | "regrets";

/** The `warmstart_method` setting: a method, or "auto" (chosen per spot by autoWarmStartMethod). */
export type WarmStartChoice = WarmStartMethod | "auto";

/**
 * "auto" seeds by "regrets" when at least this share of the full tree's decision nodes has a
 * small-tree counterpart (the regret transfer has nothing to give the others), else by "values".
 * Measured (README): T2 from T2s pairs 80.6 % of its decision nodes and regrets is the faster method
 * there; F1 from its one-size, raise-less tree pairs 26.1 % and regrets is slower than cold there,
 * values about as fast as cold. The threshold sits between these two measured spots.
 */
export const AUTO_REGRETS_COVERAGE = 0.5;

/** The method "auto" picks for a pairing coverage (share of full-tree decision nodes paired). */
export function autoWarmStartMethod(coverage: number): WarmStartMethod {
  return coverage >= AUTO_REGRETS_COVERAGE ? "regrets" : "values";
}

/**
 * W of the "regrets" method when `warmstart_weight = "auto"`: measured on spot T2 (README), W = 20
 * and 30 both reach 0.5 / 0.3 % at 130 / 180 counted iterations (W = 10: 140 / 270, W = 45: 165 /
 * over 190); W costs no time (the full tree starts at t = W), so the larger of the two is faster.
 */
export const REGRETS_AUTO_WEIGHT = 30;

/** Warm-start settings of a solve config (`[solver]` use_warmstart and warmstart_*). */
export interface WarmStartSettings {
  enabled: boolean;
  /**
   * "values" (regrets from the mapped strategy's counterfactual values, Brown & Sandholm 2016, W
   * from its exploitability; about as fast as cold on T2 and F1), "regrets" (seed 002, W auto =
   * REGRETS_AUTO_WEIGHT: faster on turn spot T2, 1.33x in wall clock, but slower on flop spot F1,
   * whose one-size tree has no raises; see README) or "auto" (default: by autoWarmStartMethod).
   */
  method: WarmStartChoice;
  /** W in iterations (the full solve continues at t = W), or "auto" (values: from the mapped strategy's exploitability; regrets: REGRETS_AUTO_WEIGHT). */
  weight: number | "auto";
  interpolation: WarmStartInterpolation;
  /** The small tree's solve stops after this many iterations ... */
  minimalMaxIters: number;
  /** ... or once its exploitability is at or below this % of the pot (checked every 10). */
  minimalExploitabilityPct: number;
  /** Name of the bet-size preset of the small tree (default `minimal`). */
  preset: string;
  /** The small tree's sizes on every street, for both players. */
  sizes: BetSizeOptions;
  donk: BetSize[] | null;
}

function settingsError(message: string): never {
  throw new KibitzError("bad_config", message);
}

/** Reads and validates the warm-start keys of a `[solver]` table (defaults: off, method auto, W auto, linear, 40 its, 1 %). */
export function parseWarmStartSettings(t: Record<string, unknown>): WarmStartSettings {
  const get = <T>(key: string, type: "boolean" | "number" | "string", fallback: T): T => {
    const v = t[key];
    if (v === undefined) return fallback;
    const ok = type === "boolean"
      ? typeof v === "boolean"
      : type === "number"
      ? typeof v === "number"
      : typeof v === "string";
    if (!ok) settingsError(`solver.${key} must be a ${type}, got ${JSON.stringify(v) ?? typeof v}`);
    return v as T;
  };
  const enabled = get("use_warmstart", "boolean", false);
  const method = get<string>("warmstart_method", "string", "auto");
  if (method !== "values" && method !== "regrets" && method !== "auto") {
    settingsError(
      `solver.warmstart_method must be "auto", "values" or "regrets", got "${method}"`,
    );
  }
  const w = t.warmstart_weight === "auto"
    ? "auto"
    : get<number | "auto">("warmstart_weight", "number", "auto");
  if (w !== "auto" && (!(w > 0) || !Number.isFinite(w))) {
    settingsError(`solver.warmstart_weight must be a positive number or "auto", got ${w}`);
  }
  const weight: number | "auto" = w;
  const interpolation = get("warmstart_interpolation", "string", "linear");
  if (interpolation !== "linear" && interpolation !== "log") {
    settingsError(
      `solver.warmstart_interpolation must be "linear" or "log", got "${interpolation}"`,
    );
  }
  const minimalMaxIters = get("warmstart_minimal_max_iters", "number", 40);
  if (!Number.isInteger(minimalMaxIters) || minimalMaxIters < 1) {
    settingsError(
      `solver.warmstart_minimal_max_iters must be an integer >= 1, got ${minimalMaxIters}`,
    );
  }
  const minimalExploitabilityPct = get("warmstart_minimal_exploitability_pct", "number", 1);
  if (!(minimalExploitabilityPct >= 0)) {
    settingsError(
      `solver.warmstart_minimal_exploitability_pct must be >= 0, got ${minimalExploitabilityPct}`,
    );
  }
  const preset = get("warmstart_bet_sizes", "string", "minimal");
  const p = BET_SIZE_PRESETS[preset];
  if (!p) {
    settingsError(
      `solver.warmstart_bet_sizes: unknown preset "${preset}"; valid: ${
        Object.keys(BET_SIZE_PRESETS).join(", ")
      }`,
    );
  }
  const bet = get("warmstart_bet", "string", p.bet),
    raise = get("warmstart_raise", "string", p.raise);
  const sizes = {
    bet: parseBetSizeList(bet, false, "solver.warmstart_bet"),
    raise: parseBetSizeList(raise, true, "solver.warmstart_raise"),
  };
  const donk = p.donk.trim() === "" ? null : parseBetSizeList(p.donk, false, "warmstart donk");
  return {
    enabled,
    method: method as WarmStartChoice,
    weight,
    interpolation,
    minimalMaxIters,
    minimalExploitabilityPct,
    preset,
    sizes,
    donk,
  };
}
