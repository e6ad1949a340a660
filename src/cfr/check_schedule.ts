// When a solve measures its exploitability. A check walks the tree twice (about an iteration's
// time), so a solve that checked every `every` iterations spent a tenth of its time on checks whose
// values mostly said "not yet". The predicted schedule still checks only on that grid (every
// `every` iterations from the first, and the last allowed iteration), but skips grid points where
// the target cannot be reached yet if the exploitability falls no faster than 1 / t^CHECK_DECAY_POWER.

/**
 * The fastest decay the predicted schedule assumes: from exploitability e at iteration t, the
 * exploitability at t' > t is taken to be at least e * (t / t')^4. DCFR's curves fall about as
 * 1 / t^2 near the target; measured between checks 10 apart on spot T1 (ours and the reference's),
 * the steepest stretch from a check to the first iteration at the target was 1 / t^3.9 (from a
 * bump at iteration 70), so 4 is the power that still catches that crossing at its first grid point.
 */
export const CHECK_DECAY_POWER = 4;

/**
 * The first grid point (start + k * every) after iteration `t`: where a solve's chunk in progress
 * ends, so a resumed solve checks where the uninterrupted one does.
 */
export function nextGridPoint(t: number, start: number, every: number): number {
  return start + (Math.floor((t - start) / every) + 1) * every;
}

/**
 * The iteration of the next exploitability check after a check at iteration `t` measured `pct`
 * (% of the pot) against `target` (%): the largest grid point start + k * every not above
 * t * (pct / target)^(1 / CHECK_DECAY_POWER), the earliest iteration at which the decay bound lets
 * the target be reached, but at least the next grid point and at most `max` (the last iteration).
 * Where the bound holds, the first check at or below the target is the same grid point as with a
 * check at every grid point; where the curve falls faster, it is a later grid point.
 */
export function nextCheck(
  t: number,
  pct: number,
  target: number,
  start: number,
  every: number,
  max: number,
): number {
  const step = Math.max(1, Math.floor(every));
  const next = Math.min(max, t + step);
  if (!(pct > target) || !(target > 0) || !(t > 0) || !Number.isFinite(pct)) return next;
  const bound = t * Math.pow(pct / target, 1 / CHECK_DECAY_POWER);
  const grid = start + Math.floor((bound - start) / step) * step;
  return Math.min(max, Math.max(next, grid));
}
