// Seeded randomness for the search: a small PRNG, gamma and Dirichlet samples, categorical draws.

/** A seeded uniform [0, 1) generator (mulberry32), so games replay exactly from a seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(next: () => number): number {
  const u = Math.max(next(), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

/** One Gamma(alpha, 1) sample (Marsaglia-Tsang; alpha < 1 through the u^(1/alpha) boost). */
export function gammaSample(alpha: number, next: () => number): number {
  if (alpha < 1) {
    return gammaSample(alpha + 1, next) * Math.pow(Math.max(next(), 1e-300), 1 / alpha);
  }
  const d = alpha - 1 / 3, c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number, v: number;
    do {
      x = normal(next);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = next();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (Math.log(Math.max(u, 1e-300)) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** A Dirichlet(alpha, ..., alpha) sample of `n` components (sums to 1). */
export function dirichlet(n: number, alpha: number, next: () => number): Float64Array {
  const out = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += out[i] = gammaSample(alpha, next);
  if (sum <= 0) out.fill(1 / n);
  else for (let i = 0; i < n; i++) out[i] /= sum;
  return out;
}

/** Index drawn with probability proportional to `weights` (which must not all be zero). */
export function sampleIndex(weights: ArrayLike<number>, next: () => number): number {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += weights[i];
  let r = next() * sum;
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i];
    if (r < 0 && weights[i] > 0) return i;
  }
  for (let i = weights.length - 1; i >= 0; i--) if (weights[i] > 0) return i;
  return 0;
}
