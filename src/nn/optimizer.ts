/** SGD hyper-parameters: momentum 0.9, weight decay 1e-4 and a cosine schedule 0.01 -> 0.0001. */
export interface SgdConfig {
  momentum: number;
  weightDecay: number;
  lrMax: number;
  lrMin: number;
  /** Steps over which the cosine schedule goes from lrMax to lrMin (then stays at lrMin). */
  totalSteps: number;
}

/** Seed 003's optimizer settings for `totalSteps` steps. */
export function defaultSgd(totalSteps: number): SgdConfig {
  return { momentum: 0.9, weightDecay: 1e-4, lrMax: 0.01, lrMin: 0.0001, totalSteps };
}

/** Cosine-annealed learning rate at `step` (0-based): lrMax at 0, lrMin at totalSteps and after. */
export function cosineLr(cfg: SgdConfig, step: number): number {
  const t = Math.min(1, Math.max(0, step / Math.max(1, cfg.totalSteps)));
  return cfg.lrMin + 0.5 * (cfg.lrMax - cfg.lrMin) * (1 + Math.cos(Math.PI * t));
}

/** Reference SGD step in place: v = mu v + g + wd p; p -= lr v (PyTorch's momentum form). */
export function sgdStep(
  p: Float32Array,
  g: Float32Array,
  v: Float32Array,
  lr: number,
  momentum: number,
  weightDecay: number,
): void {
  for (let i = 0; i < p.length; i++) {
    const vi = momentum * v[i] + g[i] + weightDecay * p[i];
    v[i] = vi;
    p[i] = p[i] - lr * vi;
  }
}
