/** Float32 helpers whose results the WGSL twins reproduce exactly. */

const fround = Math.fround;

/** Correctly rounded f32 quotient (double rounding through f64 is innocuous for division). */
export function divF32(a: number, b: number): number {
  return fround(a / b);
}

/** Round half to even, as WGSL `round()` does. */
export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/** f32(1 / levels): the decode factor of a format, as a WGSL constant would hold it. */
export function invLevels(levels: number): number {
  return fround(1 / levels);
}
