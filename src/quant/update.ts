import {
  decodeBlock,
  encodeBlockWithMax,
  nonFinite,
  type QuantStore,
  type RoundingKey,
} from "./store.ts";
import { invLevels } from "./f32math.ts";

const fround = Math.fround;

/** Update kinds shared with shaders/quant/update.wgsl (`OP` override constant). */
export const UPDATE_OPS = { set: 0, dcfr: 1, plus: 2, strategy: 3 } as const;

/** Name of a fused update kernel. */
export type UpdateOp = keyof typeof UPDATE_OPS;

let scratch = new Float32Array(1024);

function blockScratch(len: number): Float32Array {
  if (scratch.length < len) scratch = new Float32Array(Math.max(len, scratch.length * 2));
  return scratch;
}

/**
 * The f32 math of one element of a fused update, exactly as the WGSL kernel does it (each product and
 * sum rounded to f32 separately: the shader blocks fused multiply-add so both sides agree).
 */
export function updateValue(
  op: UpdateOp,
  old: number,
  input: number,
  a: number,
  c: number,
): number {
  switch (op) {
    case "set":
      return input;
    case "dcfr":
      return fround(fround(old * (old > 0 ? a : c)) + input);
    case "plus": {
      // `r < 0 ? 0 : r` (not `r > 0 ? r : 0`) lets NaN through to the encoder, which rejects it.
      const r = fround(fround(old * a) + input);
      return r < 0 ? 0 : r;
    }
    case "strategy":
      return fround(fround(old * a) + fround(input * c));
  }
}

/**
 * Decodes block `b`, applies `op` to every element in f32, and re-encodes with the block's new max.
 * `decoded`, when given, must hold the block's current decoded values (saves decoding it again).
 */
export function updateBlock(
  s: QuantStore,
  b: number,
  op: UpdateOp,
  input: Float32Array,
  inputOffset: number,
  a: number,
  c: number,
  key: RoundingKey,
  decoded?: Float32Array,
): void {
  const start = s.offsets[b] | 0, len = (s.offsets[b + 1] | 0) - start;
  const buf = blockScratch(len);
  const f = s.f32;
  // f32 storage: read the old values in place; quantized: decode the block first.
  const old = f ?? decoded ?? buf;
  const from = f ? start : 0;
  // A 16-bit cumulative strategy is read from its lanes inside the update loop (no decode pass).
  const lanes = op === "strategy" && !f && !decoded && s.scales[b] !== 0 ? s.u16 : null;
  if (!f && !decoded && !lanes) decodeBlock(s, b, buf, 0);
  const fa = fround(a), fc = fround(c), dac = fa - fc;
  // One loop per op (the same f32 operations as updateValue, without a call per element). Each
  // also takes max |x| for the encoder; Math.max keeps a NaN, so max < Infinity means all finite.
  let max = 0;
  switch (op) {
    case "set":
      for (let i = 0; i < len; i++) {
        const r = input[inputOffset + i];
        buf[i] = r;
        max = Math.max(max, Math.abs(r));
      }
      break;
    case "dcfr":
      if (fc + dac !== fa) {
        for (let i = 0; i < len; i++) {
          const o = old[from + i];
          const r = fround(fround(o * (o > 0 ? fa : fc)) + input[inputOffset + i]);
          buf[i] = r;
          max = Math.max(max, Math.abs(r));
        }
        break;
      }
      for (let i = 0; i < len; i++) {
        // o * (o > 0 ? a : c) without a data-dependent branch (c + (a - c) === a checked above).
        const o = old[from + i];
        const r = fround(fround(o * (fc + +(o > 0) * dac)) + input[inputOffset + i]);
        buf[i] = r;
        max = Math.max(max, Math.abs(r));
      }
      break;
    case "plus":
      for (let i = 0; i < len; i++) {
        const r = fround(fround(old[from + i] * fa) + input[inputOffset + i]);
        const x = r < 0 ? 0 : r;
        buf[i] = x;
        max = Math.max(max, Math.abs(x));
      }
      break;
    case "strategy":
      if (lanes) {
        const d = fround(s.scales[b] * invLevels(65535));
        for (let i = 0; i < len; i++) {
          const o = fround(lanes[start + i] * d); // decodeBlock's value
          const r = fround(fround(o * fa) + fround(input[inputOffset + i] * fc));
          buf[i] = r;
          max = Math.max(max, Math.abs(r));
        }
        break;
      }
      for (let i = 0; i < len; i++) {
        const r = fround(fround(old[from + i] * fa) + fround(input[inputOffset + i] * fc));
        buf[i] = r;
        max = Math.max(max, Math.abs(r));
      }
      break;
  }
  if (!(max < Infinity)) {
    // A NaN or infinite result: find the first one and report it before touching the block.
    for (let i = 0; i < len; i++) {
      const v = buf[i];
      if (v - v !== 0) throw nonFinite(s, b, i, v);
    }
  }
  encodeBlockWithMax(s, b, buf, 0, key, max);
}

/** DCFR regret update: r = r * (r > 0 ? alphaPos : betaNeg) + instant, re-encoded. */
export function updateRegretsDcfr(
  s: QuantStore,
  b: number,
  instant: Float32Array,
  instOffset: number,
  alphaPos: number,
  betaNeg: number,
  key: RoundingKey,
  decoded?: Float32Array,
): void {
  updateBlock(s, b, "dcfr", instant, instOffset, alphaPos, betaNeg, key, decoded);
}

/** CFR+/DCFR+ regret update: r = max(0, r * alpha + instant), re-encoded. */
export function updateRegretsPlus(
  s: QuantStore,
  b: number,
  instant: Float32Array,
  instOffset: number,
  alpha: number,
  key: RoundingKey,
  decoded?: Float32Array,
): void {
  updateBlock(s, b, "plus", instant, instOffset, alpha, 0, key, decoded);
}

/** Cumulative-strategy update: s = s * gamma + sigma * weight, re-encoded. */
export function updateStrategy(
  s: QuantStore,
  b: number,
  sigma: Float32Array,
  sigmaOffset: number,
  gamma: number,
  weight: number,
  key: RoundingKey,
): void {
  updateBlock(s, b, "strategy", sigma, sigmaOffset, gamma, weight, key);
}

/** Applies `op` to every block of the store; `input` holds one value per element. */
export function updateAll(
  s: QuantStore,
  op: UpdateOp,
  input: Float32Array,
  a: number,
  c: number,
  key: RoundingKey,
): void {
  for (let b = 0; b < s.blocks; b++) updateBlock(s, b, op, input, s.offsets[b], a, c, key);
}
