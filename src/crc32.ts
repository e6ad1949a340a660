// CRC-32 (IEEE 802.3, the zip/PNG polynomial), the checksum of every file Kibitz writes: network
// checkpoints, solve.bin, replay-buffer chunks.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 continued over `bytes` from the CRC of what came before (0 to start): streamed files. */
export function crc32Update(crc: number, bytes: Uint8Array): number {
  let c = (crc ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** CRC-32 of bytes. */
export function crc32(bytes: Uint8Array): number {
  return crc32Update(0, bytes);
}
