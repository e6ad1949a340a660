// Saved files of the form magic | ... | u32 header length | JSON header (space-padded to 4) | body |
// u32 CRC-32 of all before: a copy with another header and a valid checksum, so a reader's header
// checks are fuzzed past its CRC.
import { crc32 } from "../../src/crc32.ts";

/** The parts of a good file: what precedes the header (its length field last), header and body. */
export interface HeaderedFile {
  /** Offset of the JSON header (the u32 length just before it). */
  at: number;
  header: unknown;
  body: Uint8Array;
  good: Uint8Array;
}

/** Splits a good file whose header starts at `at`. */
export function splitHeadered(good: Uint8Array, at: number): HeaderedFile {
  const len = new DataView(good.buffer, good.byteOffset).getUint32(at - 4, true);
  const header = JSON.parse(new TextDecoder().decode(good.subarray(at, at + len)));
  return { at, header, body: good.subarray(at + len, good.length - 4), good };
}

/** The file with `json` as its header, padded, the length and checksum made to match. */
export function withHeader(f: HeaderedFile, json: string): Uint8Array {
  const text = new TextEncoder().encode(json);
  const h = Math.ceil(text.length / 4) * 4;
  const out = new Uint8Array(f.at + h + f.body.length + 4);
  const v = new DataView(out.buffer);
  out.set(f.good.subarray(0, f.at - 4));
  v.setUint32(f.at - 4, h, true);
  out.fill(0x20, f.at, f.at + h);
  out.set(text, f.at);
  out.set(f.body, f.at + h);
  v.setUint32(out.length - 4, crc32(out.subarray(0, out.length - 4)), true);
  return out;
}
