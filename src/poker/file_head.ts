// The head both of the solver's binary files start with (solve.bin, checkpoint.bin): an 8-byte
// magic, a u32 format version, a u32 header length and the JSON header, padded with spaces so that
// what follows starts 4-byte aligned.

/** Bytes before the JSON header: magic, version, header length. */
export const FILE_HEAD_BYTES = 16;

/** The head of a versioned binary file: magic, version, header length and padded JSON header. */
export function encodeFileHead(magic: string, version: number, header: unknown): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const at = FILE_HEAD_BYTES, pad = (4 - ((at + json.length) % 4)) % 4;
  const out = new Uint8Array(at + json.length + pad);
  const dv = new DataView(out.buffer);
  out.set(new TextEncoder().encode(magic), 0);
  dv.setUint32(8, version, true);
  dv.setUint32(12, json.length + pad, true);
  out.set(json, at);
  out.fill(0x20, at + json.length);
  return out;
}
