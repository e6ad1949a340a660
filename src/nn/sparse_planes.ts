// The sparse upload of inference planes: each plane of each position as one base value (its first
// cell's) and the cells that differ from it, expanded on the GPU into the plan's input
// (shaders made by src/nn/gpu/sparse_planes.ts) in place of the dense planes. A Hive position is
// 24 planes of 676 cells with a few hundred cells off its planes' bases (its pieces, placements
// and hand rows; three planes are constant): 256 real-game positions pack into 0.46 MB instead of
// 8.3 (f16 planes) or 16.6 (f32), copied on the GPU's queue between one call's work and the next's.
// The values are the planes' own, f16 ones widened exactly: the same bits reach the network.
//
// Layout, in 32-bit words: [0, n P) the bases (f32 bits, position-major); [n P, n P + n + 1) each
// position's first entry and the end; then the entries, two words each: the cell's index within
// its position (plane * area + cell) and its value (f32 bits).
import { KibitzError } from "../errors.ts";
import { envValue } from "../env.ts";
import { halfBits, isHalfPlanes, type Planes } from "./planes.ts";

/** Smallest batch whose inference calls upload sparse (as the compact readback's COMPACT_MIN_BATCH). */
export const SPARSE_MIN_BATCH = 32;

/**
 * Entries at most, as a share of the batch's values: a sparse upload is then at most about a
 * quarter of the f16 planes' bytes (a denser batch goes up dense).
 */
export const SPARSE_SHARE = 1 / 16;

/** The sparse form's sizes for `n` positions of `planes` planes of `area` cells. */
export function sparseLayout(n: number, planes: number, area: number) {
  const bases = n * planes;
  const entries = Math.floor(n * planes * area * SPARSE_SHARE);
  const first = bases + n + 1;
  return { bases, first, entries, words: first + 2 * entries };
}

/**
 * Whether inference calls may upload sparse: KIBITZ_NN_SPARSE ("on" or "off") where set, else off
 * on hardware adapters and on on software ones. On an H200 dense planes ran 0.7-1.0 % faster in
 * every A/B (sessions 41 and 43: the GPU's copy of 8.5 MB takes 0.03 ms, less than the expansion).
 */
export function sparseUploadSetting(
  hardware: boolean,
  v = envValue("KIBITZ_NN_SPARSE"),
): boolean {
  if (v === undefined || v === "") return !hardware;
  if (v === "on") return true;
  if (v === "off") return false;
  throw new KibitzError("bad_args", `KIBITZ_NN_SPARSE must be on or off, got "${v}"`);
}

/**
 * Packs `n` positions of `planes` planes of `area` cells into `out` (at least
 * sparseLayout(...).words long) and returns the words used, or -1 where the batch has more cells
 * off their planes' bases than the layout holds (the caller then uploads dense).
 */
export function packSparsePlanes(
  src: Planes,
  n: number,
  planes: number,
  area: number,
  out: Uint32Array,
): number {
  const { first, entries } = sparseLayout(n, planes, area);
  if (out.length < first + 2 * entries) {
    throw new KibitzError(
      "bad_state",
      `sparse planes: ${out.length} words, ${first + 2 * entries} needed`,
    );
  }
  if (src.length < n * planes * area) {
    throw new KibitzError(
      "bad_args",
      `sparse planes: ${src.length} values, ${n * planes * area} needed`,
    );
  }
  const f = new Float32Array(out.buffer, out.byteOffset, out.length);
  return isHalfPlanes(src)
    ? packHalves(src, n, planes, area, out, f, first, entries)
    : packFull(src, n, planes, area, out, first, entries);
}

// The two packers compare bits (f16 or f32), so a value goes up as it is, -0 and NaNs included.
// Each reads one array type (V8's loads stay monomorphic); halves go two to a word compare where
// the planes allow. 256 real Hive positions: 2.2 ms from f16 planes, 3.4 ms from f32 on the
// 2-core development machine (one shared loop took 3.5 and 4.6).

function packHalves(
  src: Float16Array,
  n: number,
  planes: number,
  area: number,
  out: Uint32Array,
  f: Float32Array,
  first: number,
  entries: number,
): number {
  const bits = halfBits(src), per = planes * area, end = first + 2 * entries;
  // Pairs of halves compared as one word where every plane starts on a word (even area, aligned).
  const pairs = area % 2 === 0 && src.byteOffset % 4 === 0
    ? new Uint32Array(src.buffer, src.byteOffset, src.length >>> 1)
    : null;
  let w = first;
  for (let p = 0; p < n; p++) {
    out[n * planes + p] = (w - first) >>> 1;
    for (let c = 0; c < planes; c++) {
      const at = p * per + c * area, base = bits[at];
      f[p * planes + c] = src[at];
      if (pairs) {
        const both = (base | (base << 16)) >>> 0;
        for (let j = at >>> 1, e = (at + area) >>> 1; j < e; j++) {
          if (pairs[j] === both) continue;
          for (let i = 2 * j - at; i < 2 * j - at + 2; i++) {
            if (i === 0 || bits[at + i] === base) continue;
            if (w === end) return -1;
            out[w] = c * area + i;
            f[w + 1] = src[at + i];
            w += 2;
          }
        }
        continue;
      }
      for (let i = 1; i < area; i++) {
        if (bits[at + i] === base) continue;
        if (w === end) return -1;
        out[w] = c * area + i;
        f[w + 1] = src[at + i];
        w += 2;
      }
    }
  }
  out[n * planes + n] = (w - first) >>> 1;
  return w;
}

function packFull(
  src: Float32Array,
  n: number,
  planes: number,
  area: number,
  out: Uint32Array,
  first: number,
  entries: number,
): number {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  const per = planes * area, end = first + 2 * entries;
  let w = first;
  for (let p = 0; p < n; p++) {
    out[n * planes + p] = (w - first) >>> 1;
    for (let c = 0; c < planes; c++) {
      const at = p * per + c * area, base = bits[at];
      out[p * planes + c] = base;
      for (let i = 1; i < area; i++) {
        if (bits[at + i] === base) continue;
        if (w === end) return -1;
        out[w] = c * area + i;
        out[w + 1] = bits[at + i];
        w += 2;
      }
    }
  }
  out[n * planes + n] = (w - first) >>> 1;
  return w;
}

/** The dense f32 planes a sparse form stands for (the GPU kernel's twin, for tests). */
export function expandSparsePlanes(
  words: Uint32Array,
  n: number,
  planes: number,
  area: number,
): Float32Array {
  const { first } = sparseLayout(n, planes, area);
  const f = new Float32Array(words.buffer, words.byteOffset, words.length);
  const out = new Float32Array(n * planes * area), per = planes * area;
  for (let p = 0; p < n; p++) {
    for (let c = 0; c < planes; c++) {
      out.fill(f[p * planes + c], p * per + c * area, p * per + (c + 1) * area);
    }
    for (let e = words[n * planes + p]; e < words[n * planes + p + 1]; e++) {
      out[p * per + words[first + 2 * e]] = f[first + 2 * e + 1];
    }
  }
  return out;
}
