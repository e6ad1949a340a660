// Stochastic-rounding threshold cases for the quantized stores, built so that every comparison
// edge is hit exactly: level q = floor(t) + [u < frac(t)] with u the element's rounding uniform.
import { formatInfo, type QuantFormat, roundingUniform } from "../../src/quant/mod.ts";

/** One probe: element `element` of block `block` holds `value` and must decode to level `want`. */
export interface EdgeProbe {
  block: number;
  element: number;
  value: number;
  want: number;
  what: string;
}

/** The key every edge store is encoded with. */
export const EDGE_SEED = 2024, EDGE_ITERATION = 7;
/** An iteration whose uniform for block 0, element 1 is exactly 0 (the frac = u = 0 edge). */
export const ZERO_U_ITERATION = 33486417;

/** The next f32 above (dir 1) or below (dir -1) the f32 `x`. */
export function nextF32(x: number, dir: 1 | -1): number {
  const f = new Float32Array([x]);
  const u = new Int32Array(f.buffer);
  if (x === 0) u[0] = dir > 0 ? 1 : 0x80000001;
  else u[0] += (x > 0) === (dir > 0) ? 1 : -1;
  return f[0];
}

/**
 * The levels probed for `format`: every level of the 4- and 8-bit formats; for 16-bit formats the
 * levels around 0, around both ends and at the powers of two (every f32 exponent of t).
 */
export function probedLevels(format: QuantFormat): number[] {
  const { signed, levels } = formatInfo(format);
  const lo = signed ? -levels : 0;
  if (levels <= 255) return Array.from({ length: levels - lo }, (_, i) => lo + i);
  const set = new Set<number>([lo, lo + 1, -2, -1, 0, 1, 2, levels - 2, levels - 1]);
  for (let p = 1; p < levels; p *= 2) set.add(p - 1), set.add(p), set.add(-p);
  return [...set].filter((l) => l >= lo && l < levels).sort((a, b) => a - b);
}

/**
 * Probes for every level L of `format` (see probedLevels; `maxAbs` limits |L|), one block each.
 * A block is [levels, 0, ..., 0, t]: its inverse scale is exactly 1, so t is the value itself, and
 * t sits at the first element whose rounding uniform u makes L + u a float32 (zeros before it
 * round to level 0 whatever their u). The probes:
 * - t = L + u exactly (frac = u: not below it, so level L; `<=` would give L + 1),
 * - t one f32 step above L + u (frac just above u: L + 1),
 * - t one f32 step below L + u, when still at or above L (frac just below u: L),
 * - t = L (frac 0: L).
 */
export function edgeProbes(
  format: QuantFormat,
  maxAbs = Infinity,
): { sizes: number[]; probes: EdgeProbe[] } {
  const probes: EdgeProbe[] = [];
  const sizes: number[] = [];
  const place = (L: number, needBelow: boolean): [number, number, number] => {
    const b = sizes.length;
    for (let k = 1;; k++) {
      const u = roundingUniform(EDGE_SEED, EDGE_ITERATION, b, k);
      const t = L + u;
      if (Math.fround(t) !== t || u === 0) continue;
      if (needBelow && nextF32(t, -1) < L) continue;
      sizes.push(k + 1);
      return [b, k, t];
    }
  };
  for (const L of probedLevels(format).filter((l) => Math.abs(l) <= maxAbs)) {
    let [b, k, t] = place(L, false);
    probes.push({ block: b, element: k, value: t, want: L, what: `level ${L}, frac = u` });
    [b, k, t] = place(L, false);
    const above = nextF32(t, 1);
    probes.push({ block: b, element: k, value: above, want: L + 1, what: `level ${L}, frac > u` });
    [b, k, t] = place(L, true);
    const below = nextF32(t, -1);
    probes.push({ block: b, element: k, value: below, want: L, what: `level ${L}, frac < u` });
    probes.push({ block: sizes.length, element: 1, value: L, want: L, what: `level ${L}, frac 0` });
    sizes.push(2);
  }
  return { sizes, probes };
}

/** The input values of an edge store: per probe block, levels first and the probe value. */
export function edgeValues(
  format: QuantFormat,
  sizes: number[],
  probes: EdgeProbe[],
): Float32Array {
  const { levels } = formatInfo(format);
  const offsets = [0];
  for (const s of sizes) offsets.push(offsets[offsets.length - 1] + s);
  const v = new Float32Array(offsets[offsets.length - 1]);
  for (const p of probes) {
    v[offsets[p.block]] = levels;
    v[offsets[p.block] + p.element] = p.value;
  }
  return v;
}
