/**
 * Counter-based noise for stochastic rounding: a pure function of (seed, iteration, block, element),
 * so results never depend on thread order and match shaders/quant/codec.wgsl bit for bit. Keying by the
 * block as well as the iteration keeps the noise of different nodes uncorrelated.
 */

/** Chris Wellons' lowbias32 integer finalizer (public-domain constants). */
export function mix32(x: number): number {
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** The 32-bit rounding hash of (seed, iteration, block, element). */
export function roundingHash(
  seed: number,
  iteration: number,
  block: number,
  element: number,
): number {
  let h = mix32((Math.imul(seed >>> 0, 0x9e3779b9) + 0x632be5ab) >>> 0);
  h = mix32((h ^ iteration) >>> 0);
  h = mix32((h ^ block) >>> 0);
  return mix32((h ^ element) >>> 0);
}

/** Uniform in [0, 1) with 24 bits, exactly representable in f32. */
export function roundingUniform(
  seed: number,
  iteration: number,
  block: number,
  element: number,
): number {
  return (roundingHash(seed, iteration, block, element) >>> 8) * 5.9604644775390625e-8;
}
