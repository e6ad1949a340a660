import { KibitzError } from "../errors.ts";

/** The CFR variants the engine runs. */
export type CfrAlgorithm = "dcfr" | "dcfr+" | "cfr+" | "pdcfr+";

/** All algorithm names, for argument validation. */
export const CFR_ALGORITHMS: readonly CfrAlgorithm[] = ["dcfr", "dcfr+", "cfr+", "pdcfr+"];

/**
 * Discount parameters. Iterations t count from 0. Positive regrets are multiplied by
 * u^alpha / (u^alpha + 1), negative ones by u^beta / (u^beta + 1) (beta 0 gives the constant 0.5),
 * the cumulative strategy by (v / (v + 1))^gamma, where u = t - shift and v = t, or with `resetPow4`
 * v = t minus the largest power of 4 not above t (the strategy sum restarts at t = 1, 4, 16, 64 ...).
 */
export interface DiscountParams {
  alpha: number;
  beta: number;
  gamma: number;
  /** 1 for the reference solver's (t - 1) in alpha, 0 for the paper's t. */
  shift: number;
  resetPow4: boolean;
  /**
   * With resetPow4: only powers of 4 at or above this iteration reset the strategy sum (default 0:
   * all). A warm-started run sets it so that no reset erases the warm start (see warmstart_values.ts).
   */
  resetFrom?: number;
}

/** DCFR as in the widely used Rust postflop solver: alpha 1.5, beta 0.5 (constant), gamma 3, reset at powers of 4. */
export const DCFR_REFERENCE: DiscountParams = {
  alpha: 1.5,
  beta: 0,
  gamma: 3,
  shift: 1,
  resetPow4: true,
};
/** DCFR as in Brown & Sandholm (2019): alpha 1.5, beta 0, gamma 2, no reset. */
export const DCFR_PAPER: DiscountParams = {
  alpha: 1.5,
  beta: 0,
  gamma: 2,
  shift: 0,
  resetPow4: false,
};
/** CFR+: no regret discount, linear averaging (weight of iteration t proportional to t + 1). */
export const CFR_PLUS: DiscountParams = {
  alpha: Infinity,
  beta: 0,
  gamma: 1,
  shift: 0,
  resetPow4: false,
};
/** PDCFR+ (Xu et al. 2024): alpha 2.3, gamma 5, predictive regrets. */
export const PDCFR_PLUS: DiscountParams = {
  alpha: 2.3,
  beta: 0,
  gamma: 5,
  shift: 0,
  resetPow4: false,
};

/** Default discount parameters of an algorithm (DCFR and DCFR+ use the reference solver's schedule). */
export function defaultDiscount(algorithm: CfrAlgorithm): DiscountParams {
  switch (algorithm) {
    case "dcfr":
    case "dcfr+":
      return { ...DCFR_REFERENCE };
    case "cfr+":
      return { ...CFR_PLUS };
    case "pdcfr+":
      return { ...PDCFR_PLUS };
  }
}

/** True when the algorithm floors regrets at 0 (so unsigned regret storage is valid). */
export function regretsNonNegative(algorithm: CfrAlgorithm): boolean {
  return algorithm !== "dcfr";
}

/** Parses an algorithm name, throwing a KibitzError that lists the valid ones. */
export function parseAlgorithm(name: string): CfrAlgorithm {
  if ((CFR_ALGORITHMS as readonly string[]).includes(name)) return name as CfrAlgorithm;
  throw new KibitzError(
    "bad_algorithm",
    `unknown algorithm "${name}"; valid: ${CFR_ALGORITHMS.join(", ")}`,
  );
}

/** u^e / (u^e + 1) with the limits 0 at u <= 0 (e > 0) and 1 for e = Infinity (no discount). */
function ratio(u: number, e: number): number {
  if (e === Infinity) return 1;
  if (u <= 0) return e === 0 ? 0.5 : 0;
  const p = Math.pow(u, e);
  return p / (p + 1);
}

/** Largest power of 4 not above t (0 for t = 0). */
export function lowerPow4(t: number): number {
  if (t <= 0) return 0;
  let p = 1;
  while (p * 4 <= t) p *= 4;
  return p;
}

/** The multipliers of iteration t (0-based). */
export interface IterationDiscount {
  /** Multiplier of positive cumulative regrets. */
  alphaPos: number;
  /** Multiplier of negative cumulative regrets. */
  betaNeg: number;
  /** Multiplier of the cumulative strategy before this iteration's strategy is added. */
  gamma: number;
  /** PDCFR+: the positive-regret multiplier of the next iteration (for the predicted regrets). */
  alphaNext: number;
}

/** Computes the discount multipliers of iteration t. */
export function iterationDiscount(p: DiscountParams, t: number): IterationDiscount {
  const low = p.resetPow4 ? lowerPow4(t) : 0;
  const v = low >= (p.resetFrom ?? 0) ? t - low : t;
  return {
    alphaPos: ratio(t - p.shift, p.alpha),
    betaNeg: ratio(t - p.shift, p.beta),
    gamma: p.gamma === 0 ? 1 : Math.pow(v / (v + 1), p.gamma),
    alphaNext: ratio(t + 1 - p.shift, p.alpha),
  };
}
