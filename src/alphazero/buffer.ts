// The replay buffer: self-play positions on disk as checksummed chunk files, written atomically
// (temp file, then rename), so a reader never sees half a chunk and a killed writer loses only the
// chunk it was writing. Circular: only the newest `capacity` positions are sampled, and chunks
// wholly outside that window are deleted.
//
// Chunk file `chunk-NNNNNNNN.kbrb` (little endian):
//   "KBRB" | u32 version | u32 input size | u32 policy size | u32 positions | u32 index bytes (2|4)
//   | u32 iteration | u32 games | records | u32 CRC-32 of everything before.
// Record: f32 z | u32 ones | u32 others | u32 legal | ones x index | others x (index, f32 value)
//   | legal x index | legal x f32 probability [| legal x 3 x i32 move cells, version 2 only: the
//   cells policy head's (a, b, slot) per legal move]. Input planes are stored sparsely (most are
//   0/1). Version 1 chunks (no move cells) stay readable.
import { KibitzError } from "../errors.ts";
import { writeFileAtomic } from "../cli/atomic.ts";
import { crc32 } from "../crc32.ts";
import type { TrainBatch } from "../nn/net.ts";

const MAGIC = 0x4252424b; // "KBRB"
/** Records without move cells. */
const VERSION = 1;
/** Records with the cells head's move cells. */
const VERSION_CELLS = 2;
const HEADER = 32;

/** One training position: dense input planes, policy target over legal move indices, outcome. */
export interface Position {
  planes: Float32Array;
  /** Policy indices of the legal moves. */
  legal: Int32Array;
  /** Visit distribution aligned with `legal` (sums to 1). */
  policy: Float32Array;
  /** Final result from this position's side to move: 1, 0 or -1. */
  z: number;
  /** The cells head's (a, b, slot) per legal move (3 ints each), for a cells-head network. */
  cells?: Int32Array;
}

interface Chunk {
  seq: number;
  count: number;
  iteration: number;
  games: number;
  bytes: Uint8Array;
  view: DataView;
  offsets: Uint32Array;
  wide: boolean;
  /** Records carry move cells (version 2). */
  cells: boolean;
}

/** Encodes positions as one chunk (the bytes of a chunk file). */
export function encodeChunk(
  positions: Position[],
  inputSize: number,
  moves: number,
  iteration: number,
  games: number,
): Uint8Array {
  const wide = inputSize > 65535 || moves > 65535;
  const ib = wide ? 4 : 2;
  // Move cells for every position or for none (one format per chunk).
  const cells = positions.some((p) => p.cells !== undefined);
  for (const p of positions) {
    if (cells && p.cells?.length !== p.legal.length * 3) {
      throw new KibitzError(
        "shape_mismatch",
        "positions of a chunk need move cells for every legal move, or none",
      );
    }
  }
  let size = HEADER + 4;
  const parts = positions.map((p) => {
    if (p.planes.length !== inputSize) {
      throw new KibitzError(
        "shape_mismatch",
        `position has ${p.planes.length} input values, expected ${inputSize}`,
      );
    }
    let ones = 0, others = 0;
    for (let i = 0; i < p.planes.length; i++) {
      if (p.planes[i] === 1) ones++;
      else if (p.planes[i] !== 0) others++;
    }
    size += 16 + ones * ib + others * (ib + 4) + p.legal.length * (ib + 4 + (cells ? 12 : 0));
    return { ones, others };
  });
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  [MAGIC, cells ? VERSION_CELLS : VERSION, inputSize, moves, positions.length, ib, iteration, games]
    .forEach((x, i) => v.setUint32(i * 4, x, true));
  let o = HEADER;
  const idx = (x: number) => {
    if (wide) v.setUint32(o, x, true);
    else v.setUint16(o, x, true);
    o += ib;
  };
  positions.forEach((p, k) => {
    v.setFloat32(o, p.z, true);
    v.setUint32(o + 4, parts[k].ones, true);
    v.setUint32(o + 8, parts[k].others, true);
    v.setUint32(o + 12, p.legal.length, true);
    o += 16;
    for (let i = 0; i < p.planes.length; i++) if (p.planes[i] === 1) idx(i);
    for (let i = 0; i < p.planes.length; i++) {
      if (p.planes[i] !== 1 && p.planes[i] !== 0) {
        idx(i);
        v.setFloat32(o, p.planes[i], true);
        o += 4;
      }
    }
    for (const m of p.legal) {
      if (m < 0 || m >= moves) {
        throw new KibitzError("shape_mismatch", `move index ${m} outside [0, ${moves})`);
      }
      idx(m);
    }
    for (const q of p.policy) {
      v.setFloat32(o, q, true);
      o += 4;
    }
    if (cells) {
      for (const c of p.cells!) {
        v.setInt32(o, c, true);
        o += 4;
      }
    }
  });
  v.setUint32(o, crc32(bytes.subarray(0, o)), true);
  return bytes;
}

/** Parses and verifies a chunk; `where` names it in errors. */
function decodeChunk(
  bytes: Uint8Array,
  seq: number,
  where: string,
  inputSize: number,
  moves: number,
): Chunk {
  const fail = (msg: string): never => {
    throw new KibitzError("bad_buffer", `${where}: ${msg}`);
  };
  if (bytes.length < HEADER + 4) fail(`truncated (${bytes.length} bytes)`);
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (v.getUint32(0, true) !== MAGIC) fail("not a replay-buffer chunk (bad magic)");
  const version = v.getUint32(4, true);
  if (version !== VERSION && version !== VERSION_CELLS) {
    fail(`format version ${version}, expected ${VERSION} or ${VERSION_CELLS}`);
  }
  const cellBytes = version === VERSION_CELLS ? 12 : 0;
  const end = bytes.length - 4;
  if (v.getUint32(end, true) !== crc32(bytes.subarray(0, end))) fail("checksum mismatch");
  if (v.getUint32(8, true) !== inputSize || v.getUint32(12, true) !== moves) {
    fail(
      `holds positions of ${v.getUint32(8, true)} inputs / ${v.getUint32(12, true)} moves, ` +
        `this game needs ${inputSize} / ${moves}`,
    );
  }
  const count = v.getUint32(16, true), ib = v.getUint32(20, true);
  const offsets = new Uint32Array(count);
  let o = HEADER;
  for (let k = 0; k < count; k++) {
    if (o + 16 > end) fail("record runs past the end");
    offsets[k] = o;
    const ones = v.getUint32(o + 4, true), others = v.getUint32(o + 8, true);
    const legal = v.getUint32(o + 12, true);
    o += 16 + ones * ib + others * (ib + 4) + legal * (ib + 4 + cellBytes);
  }
  if (o !== end) fail(`records end at byte ${o}, the checksum sits at ${end}`);
  return {
    seq,
    count,
    iteration: v.getUint32(24, true),
    games: v.getUint32(28, true),
    bytes,
    view: v,
    offsets,
    wide: ib === 4,
    cells: cellBytes > 0,
  };
}

const NAME = /^chunk-(\d{8})\.kbrb$/;

/**
 * A replay buffer in a folder. Writers `append`; readers (the same process or another) call
 * `refresh` to pick up new chunks and drop deleted ones, then `sampleBatch` uniformly.
 */
export class ReplayBuffer {
  private chunks: Chunk[] = [];
  private nextSeq = 0;
  /** The last queued change (append or refresh); the next one starts when it settles. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dir: string,
    readonly capacity: number,
    readonly inputSize: number,
    readonly moves: number,
  ) {}

  /** Opens (creating) the buffer folder, removing leftover temp files and loading every chunk. */
  static async open(
    dir: string,
    capacity: number,
    inputSize: number,
    moves: number,
  ): Promise<ReplayBuffer> {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new KibitzError(
        "bad_config",
        `buffer capacity must be a positive integer, got ${capacity}`,
      );
    }
    await Deno.mkdir(dir, { recursive: true });
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".tmp")) {
        await Deno.remove(`${dir}/${e.name}`).catch(() => {});
      }
    }
    const b = new ReplayBuffer(dir, capacity, inputSize, moves);
    await b.refresh();
    return b;
  }

  /**
   * Runs `change` after every change queued before it. Overlapping appends (self-play workers
   * flushing at once) would otherwise let a later chunk land first when an earlier write is slow,
   * so the positions' order in memory (what training samples) would differ from the order on disk
   * (what a resumed run samples), and a crash could leave a later chunk without the earlier one.
   */
  private serial<T>(change: () => Promise<T>): Promise<T> {
    const p = this.queue.then(change);
    this.queue = p.catch(() => {});
    return p;
  }

  /** Re-reads the folder: loads chunks written since, forgets deleted ones. */
  refresh(): Promise<void> {
    return this.serial(() => this.refreshNow());
  }

  private async refreshNow(): Promise<void> {
    const seqs: number[] = [];
    for await (const e of Deno.readDir(this.dir)) {
      const m = e.isFile ? NAME.exec(e.name) : null;
      if (m) seqs.push(Number(m[1]));
    }
    seqs.sort((a, b) => a - b);
    const have = new Map(this.chunks.map((c) => [c.seq, c]));
    const next: Chunk[] = [];
    for (const seq of seqs) {
      let c = have.get(seq);
      if (!c) {
        const path = this.path(seq);
        let bytes: Uint8Array;
        try {
          bytes = await Deno.readFile(path);
        } catch (e) {
          if (e instanceof Deno.errors.NotFound) continue; // trimmed by a writer meanwhile
          throw e;
        }
        c = decodeChunk(bytes, seq, path, this.inputSize, this.moves);
      }
      next.push(c);
    }
    this.chunks = next;
    this.nextSeq = Math.max(this.nextSeq, seqs.length ? seqs[seqs.length - 1] + 1 : 0);
  }

  private path(seq: number): string {
    return `${this.dir}/chunk-${String(seq).padStart(8, "0")}.kbrb`;
  }

  /** Positions available for sampling (at most `capacity`). */
  get size(): number {
    return Math.min(this.capacity, this.total());
  }

  private total(): number {
    return this.chunks.reduce((a, c) => a + c.count, 0);
  }

  /** Games recorded for `iteration` (from the chunk headers; resume uses it). */
  gamesFor(iteration: number): number {
    return this.chunks.reduce((a, c) => a + (c.iteration === iteration ? c.games : 0), 0);
  }

  /** Positions recorded for `iteration`. */
  positionsFor(iteration: number): number {
    return this.chunks.reduce((a, c) => a + (c.iteration === iteration ? c.count : 0), 0);
  }

  /**
   * Appends positions of `games` finished games as one atomic chunk, then trims old chunks.
   * Overlapping calls take effect one at a time, in call order.
   */
  append(positions: Position[], iteration: number, games: number): Promise<void> {
    return this.serial(() => this.appendNow(positions, iteration, games));
  }

  private async appendNow(positions: Position[], iteration: number, games: number): Promise<void> {
    const seq = this.nextSeq++;
    const bytes = encodeChunk(positions, this.inputSize, this.moves, iteration, games);
    await writeFileAtomic(this.path(seq), bytes);
    this.chunks.push(decodeChunk(bytes, seq, this.path(seq), this.inputSize, this.moves));
    while (this.chunks.length > 1 && this.total() - this.chunks[0].count >= this.capacity) {
      const old = this.chunks.shift()!;
      await Deno.remove(this.path(old.seq)).catch(() => {});
    }
  }

  /**
   * Decodes position `k` of the sampling window (0 = oldest) into row `row` of dense arrays;
   * returns its move-table entries (move index, a, b, slot per legal move) when it has move cells.
   */
  private decodeInto(k: number, row: number, out: TrainBatch): Float32Array | null {
    let skip = this.total() - this.size + k;
    let c = this.chunks[0], ci = 0;
    while (skip >= c.count) {
      skip -= c.count;
      c = this.chunks[++ci];
    }
    const v = c.view, ib = c.wide ? 4 : 2;
    let o = c.offsets[skip];
    const idx = () => {
      const x = c.wide ? v.getUint32(o, true) : v.getUint16(o, true);
      o += ib;
      return x;
    };
    out.value[row] = v.getFloat32(o, true);
    const ones = v.getUint32(o + 4, true), others = v.getUint32(o + 8, true);
    const legal = v.getUint32(o + 12, true);
    o += 16;
    const pb = row * this.inputSize, mb = row * this.moves;
    for (let i = 0; i < ones; i++) out.planes[pb + idx()] = 1;
    for (let i = 0; i < others; i++) {
      const at = idx();
      out.planes[pb + at] = v.getFloat32(o, true);
      o += 4;
    }
    const moves = new Int32Array(legal);
    for (let i = 0; i < legal; i++) out.mask[mb + (moves[i] = idx())] = 1;
    for (let i = 0; i < legal; i++) {
      out.policy[mb + moves[i]] = v.getFloat32(o, true);
      o += 4;
    }
    if (!c.cells) return null;
    const entries = new Float32Array(legal * 4);
    for (let i = 0; i < legal; i++) {
      entries[i * 4] = moves[i];
      for (let j = 1; j < 4; j++, o += 4) entries[i * 4 + j] = v.getInt32(o, true);
    }
    return entries;
  }

  /** Decodes positions `ks` of the window as a batch (with the move table when they carry one). */
  private decodeBatch(ks: number[]): TrainBatch {
    const n = ks.length;
    const out: TrainBatch = {
      size: n,
      planes: new Float32Array(n * this.inputSize),
      mask: new Float32Array(n * this.moves),
      policy: new Float32Array(n * this.moves),
      value: new Float32Array(n),
    };
    const tables = ks.map((k, r) => this.decodeInto(k, r, out));
    const withCells = tables.filter((t) => t !== null).length;
    if (withCells === 0) return out;
    if (withCells < n) {
      throw new KibitzError(
        "bad_buffer",
        `replay buffer ${this.dir}: positions with and without move cells in one window`,
      );
    }
    let width = 1;
    for (const t of tables) width = Math.max(width, t!.length / 4);
    const moveCells = new Float32Array(n * width * 4).fill(-1);
    tables.forEach((t, r) => moveCells.set(t!, r * width * 4));
    out.moveCells = moveCells;
    out.moveCellsWidth = width;
    return out;
  }

  /** A training batch of `n` positions drawn uniformly (with replacement) from the window. */
  sampleBatch(n: number, next: () => number): TrainBatch {
    const size = this.size;
    if (size === 0) {
      throw new KibitzError("empty_buffer", `replay buffer ${this.dir}: holds no positions`);
    }
    const ks: number[] = [];
    for (let r = 0; r < n; r++) ks.push(Math.floor(next() * size));
    return this.decodeBatch(ks);
  }

  /** Reads back position `k` of the window (0 = oldest), for tests and tools. */
  position(k: number): Position {
    const out = this.decodeBatch([k]);
    const legal: number[] = [], policy: number[] = [];
    for (let m = 0; m < this.moves; m++) {
      if (out.mask[m] === 1) {
        legal.push(m);
        policy.push(out.policy[m]);
      }
    }
    const p: Position = {
      planes: out.planes,
      legal: Int32Array.from(legal),
      policy: Float32Array.from(policy),
      z: out.value[0],
    };
    if (out.moveCells) {
      // The table's order is the record's; `legal` is by index.
      const t = out.moveCells, at = new Map<number, number>();
      for (let i = 0; i < out.moveCellsWidth!; i++) if (t[i * 4] >= 0) at.set(t[i * 4], i);
      p.cells = Int32Array.from(legal.flatMap((m) => {
        const i = at.get(m)!;
        return [t[i * 4 + 1], t[i * 4 + 2], t[i * 4 + 3]];
      }));
    }
    return p;
  }
}
