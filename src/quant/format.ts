import { KibitzError } from "../errors.ts";

/** Storage formats for regrets and cumulative strategies (seed 000/001). */
export type QuantFormat = "f32" | "i16" | "u16" | "i8" | "u8" | "i4" | "u4";

/** How an encoder turns a scaled value into an integer level. */
export type Rounding = "stochastic" | "nearest";

/** Static facts about a format: payload bits, signedness, integer levels, numeric code used by WGSL. */
export interface FormatInfo {
  format: QuantFormat;
  bits: 32 | 16 | 8 | 4;
  signed: boolean;
  /** Largest integer level: decode = q * scale / levels. 0 for f32. */
  levels: number;
  /** Elements per 32-bit word. */
  perWord: number;
  /** Code shared with shaders/quant (`FMT` override constant). */
  code: number;
}

const INFO: Record<QuantFormat, FormatInfo> = {
  f32: { format: "f32", bits: 32, signed: true, levels: 0, perWord: 1, code: 0 },
  i16: { format: "i16", bits: 16, signed: true, levels: 32767, perWord: 2, code: 1 },
  u16: { format: "u16", bits: 16, signed: false, levels: 65535, perWord: 2, code: 2 },
  i8: { format: "i8", bits: 8, signed: true, levels: 127, perWord: 4, code: 3 },
  u8: { format: "u8", bits: 8, signed: false, levels: 255, perWord: 4, code: 4 },
  i4: { format: "i4", bits: 4, signed: true, levels: 7, perWord: 8, code: 5 },
  u4: { format: "u4", bits: 4, signed: false, levels: 15, perWord: 8, code: 6 },
};

/** All formats, in order of decreasing width. */
export const QUANT_FORMATS: readonly QuantFormat[] = ["f32", "i16", "u16", "i8", "u8", "i4", "u4"];

/** Returns the static facts of a format. */
export function formatInfo(format: QuantFormat): FormatInfo {
  const info = INFO[format];
  if (!info) throw new KibitzError("bad_format", `unknown storage format "${format}"`);
  return info;
}

/** Default rounding: nearest for f32/16-bit, stochastic for 8/4-bit (seed 001 section 3.2). */
export function defaultRounding(format: QuantFormat): Rounding {
  return formatInfo(format).bits >= 16 ? "nearest" : "stochastic";
}

/** Regret format for `regret_bits`; unsigned 8/4-bit only for algorithms whose regrets are never negative. */
export function regretFormat(bits: number, signed: boolean): QuantFormat {
  switch (bits) {
    case 32:
      return "f32";
    case 16:
      return "i16";
    case 8:
      return signed ? "i8" : "u8";
    case 4:
      return signed ? "i4" : "u4";
  }
  throw new KibitzError("bad_format", `regret_bits must be 32, 16, 8 or 4, got ${bits}`);
}

/** Cumulative-strategy format for `strategy_bits` (strategies are never negative). */
export function strategyFormat(bits: number): QuantFormat {
  switch (bits) {
    case 32:
      return "f32";
    case 16:
      return "u16";
    case 8:
      return "u8";
    case 4:
      return "u4";
  }
  throw new KibitzError("bad_format", `strategy_bits must be 32, 16, 8 or 4, got ${bits}`);
}

/** Payload words for `n` elements packed contiguously (a block may start inside a word). */
export function payloadWords(format: QuantFormat, n: number): number {
  return Math.ceil(n / formatInfo(format).perWord);
}

/**
 * Exact bytes of a store of `n` elements in `blocks` blocks: the packed payload rounded up to whole
 * 32-bit words (WGSL has no 8-bit storage) plus one f32 scale per block (none for f32).
 */
export function storeBytes(format: QuantFormat, n: number, blocks: number): number {
  const scales = format === "f32" ? 0 : blocks * 4;
  return payloadWords(format, n) * 4 + scales;
}
