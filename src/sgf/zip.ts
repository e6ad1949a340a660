// A bounded zip reader for untrusted archives: the central directory is read from the end of the
// file, each member is inflated in small chunks with a cap on its real (not declared) size, and
// nothing but the member being read is held in memory.
import { Inflate } from "fflate";
import { KibitzError } from "../errors.ts";

/** Random access to the bytes of an archive (a file on disk or bytes in memory). */
export interface ByteSource {
  size: number;
  /** Up to `length` bytes at `offset` (fewer only at the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A ByteSource over bytes in memory. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: (offset, length) => Promise.resolve(bytes.subarray(offset, offset + length)),
  };
}

/** A ByteSource over an open file (the caller closes it). */
export async function fileSource(file: Deno.FsFile): Promise<ByteSource> {
  const size = (await file.stat()).size;
  return {
    size,
    async read(offset, length) {
      const n = Math.max(0, Math.min(length, size - offset));
      const out = new Uint8Array(n);
      await file.seek(offset, Deno.SeekMode.Start);
      let got = 0;
      while (got < n) {
        const r = await file.read(out.subarray(got));
        if (r === null) break;
        got += r;
      }
      return out.subarray(0, got);
    },
  };
}

/** One member as the central directory describes it. */
export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  /** The uncompressed size the archive declares (it may lie: reading caps the real size). */
  declaredSize: number;
  headerOffset: number;
}

const EOCD = 0x06054b50, EOCD64 = 0x06064b50, LOC64 = 0x07064b50, CEN = 0x02014b50;
const LOC = 0x04034b50;
const MAX32 = 0xffffffff;

function bad(name: string, why: string): never {
  throw new KibitzError("bad_zip", `${name}: not a readable zip archive (${why})`);
}

/** Lists the members of an archive from its central directory (zip64 included). */
export async function zipEntries(src: ByteSource, name: string): Promise<ZipEntry[]> {
  const tailLen = Math.min(src.size, 22 + 0xffff);
  const tail = await src.read(src.size - tailLen, tailLen);
  const tv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  let e = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tv.getUint32(i, true) === EOCD) {
      e = i;
      break;
    }
  }
  if (e < 0) bad(name, "no end of central directory");
  let count = tv.getUint16(e + 10, true);
  let cdSize = tv.getUint32(e + 12, true);
  let cdOffset = tv.getUint32(e + 16, true);
  if ((count === 0xffff || cdOffset === MAX32) && e >= 20 && tv.getUint32(e - 20, true) === LOC64) {
    const at = Number(tv.getBigUint64(e - 12, true));
    const z = await src.read(at, 56);
    const zv = new DataView(z.buffer, z.byteOffset, z.byteLength);
    if (z.length < 56 || zv.getUint32(0, true) !== EOCD64) bad(name, "bad zip64 directory");
    count = Number(zv.getBigUint64(32, true));
    cdSize = Number(zv.getBigUint64(40, true));
    cdOffset = Number(zv.getBigUint64(48, true));
  }
  if (cdOffset + cdSize > src.size) bad(name, "central directory out of the file");
  // The directory is 46+ bytes per member: a hostile count cannot make it bigger than the file.
  const cd = await src.read(cdOffset, cdSize);
  const v = new DataView(cd.buffer, cd.byteOffset, cd.byteLength);
  const out: ZipEntry[] = [];
  const utf8 = new TextDecoder("utf-8");
  const latin1 = new TextDecoder("latin1");
  let p = 0;
  for (let k = 0; k < count; k++) {
    if (p + 46 > cd.length || v.getUint32(p, true) !== CEN) {
      bad(name, "truncated central directory");
    }
    const flags = v.getUint16(p + 8, true);
    const method = v.getUint16(p + 10, true);
    let compressedSize = v.getUint32(p + 20, true);
    let declaredSize = v.getUint32(p + 24, true);
    const nameLen = v.getUint16(p + 28, true);
    const extraLen = v.getUint16(p + 30, true);
    const commentLen = v.getUint16(p + 32, true);
    let headerOffset = v.getUint32(p + 42, true);
    const end = p + 46 + nameLen + extraLen + commentLen;
    if (end > cd.length) bad(name, "truncated central directory");
    const rawName = cd.subarray(p + 46, p + 46 + nameLen);
    const memberName = (flags & 0x800 ? utf8 : latin1).decode(rawName);
    // zip64 extra field: the 64-bit values, in order, of the 32-bit fields that are 0xffffffff.
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      const id = v.getUint16(x, true), len = v.getUint16(x + 2, true);
      if (id === 1) {
        let q = x + 4;
        const next = () => {
          const n = q + 8 <= x + 4 + len ? Number(v.getBigUint64(q, true)) : MAX32;
          q += 8;
          return n;
        };
        if (declaredSize === MAX32) declaredSize = next();
        if (compressedSize === MAX32) compressedSize = next();
        if (headerOffset === MAX32) headerOffset = next();
      }
      x += 4 + len;
    }
    out.push({ name: memberName, method, flags, compressedSize, declaredSize, headerOffset });
    p = end;
  }
  return out;
}

/** Why a member was not read whole: its real size passed `limit` (the member or archive cap). */
export class TooLarge extends KibitzError {
  constructor(message: string) {
    super("too_large", message);
  }
}

const CHUNK = 8192;

/**
 * Reads one member, stopping with `too_large` as soon as its real size passes `limit` (so a zip
 * bomb costs at most `limit` plus one chunk's expansion of memory).
 */
export async function readZipEntry(
  src: ByteSource,
  entry: ZipEntry,
  limit: number,
  where: string,
): Promise<Uint8Array> {
  if (entry.flags & 1) bad(where, "encrypted member");
  if (entry.method !== 0 && entry.method !== 8) bad(where, `compression method ${entry.method}`);
  const head = await src.read(entry.headerOffset, 30);
  const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.length < 30 || hv.getUint32(0, true) !== LOC) bad(where, "bad local header");
  const start = entry.headerOffset + 30 + hv.getUint16(26, true) + hv.getUint16(28, true);
  const end = Math.min(src.size, start + entry.compressedSize);
  const parts: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const take = (data: Uint8Array) => {
    if (over) return;
    total += data.length;
    if (total > limit) over = true;
    else parts.push(data);
  };
  let inflate: Inflate | null = null;
  if (entry.method === 8) {
    inflate = new Inflate();
    inflate.ondata = (data) => take(data.slice());
  }
  try {
    for (let at = start; at < end && !over; at += CHUNK) {
      const chunk = await src.read(at, Math.min(CHUNK, end - at));
      if (inflate) inflate.push(chunk, at + chunk.length >= end);
      else take(chunk.slice());
    }
  } catch (e) {
    bad(where, (e as Error).message);
  }
  if (over) throw new TooLarge(`${where}: more than ${limit} bytes uncompressed`);
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
