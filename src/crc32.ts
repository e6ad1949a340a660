// CRC-32 (IEEE 802.3, the zip/PNG polynomial), the checksum of every file Kibitz writes: network
// checkpoints, solve.bin, replay-buffer chunks.

/**
 * Slicing-by-8 tables: T[0] is the classic byte table; T[k][n] is the CRC of byte n followed by k
 * zero bytes, so eight bytes fold in with eight lookups and no per-byte dependency chain.
 */
const CRC_TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) {
      const prev = t[(k - 1) * 256 + n];
      t[k * 256 + n] = (t[prev & 0xff] ^ (prev >>> 8)) >>> 0;
    }
  }
  return t;
})();

/** CRC-32 continued over `bytes` from the CRC of what came before (0 to start): streamed files. */
export function crc32Update(crc: number, bytes: Uint8Array): number {
  const t = CRC_TABLES;
  let c = (crc ^ 0xffffffff) >>> 0;
  let i = 0;
  const n = bytes.length, end8 = n - (n & 7);
  for (; i < end8; i += 8) {
    const lo = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c = t[1792 + (lo & 0xff)] ^ t[1536 + ((lo >>> 8) & 0xff)] ^ t[1280 + ((lo >>> 16) & 0xff)] ^
      t[1024 + (lo >>> 24)] ^ t[768 + bytes[i + 4]] ^ t[512 + bytes[i + 5]] ^
      t[256 + bytes[i + 6]] ^ t[bytes[i + 7]];
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** CRC-32 of bytes. */
export function crc32(bytes: Uint8Array): number {
  return crc32Update(0, bytes);
}
