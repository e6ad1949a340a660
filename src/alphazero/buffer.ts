// The replay buffer: self-play positions on disk as checksummed chunk files, written atomically
// (temp file, then rename), so a reader never sees half a chunk and a killed writer loses only the
// chunk it was writing. Circular: only the newest `capacity` positions are sampled, and chunks
// wholly outside that window are deleted.
//
// Chunk file `chunk-NNNNNNNN.kbrb` (little endian):
//   "KBRB" | u32 version | u32 input size | u32 policy size | u32 positions | u32 index bytes (2|4)
//   | u32 iteration | u32 games | records | u32 CRC-32 of everything before.
// Record: f32 z | u32 ones | u32 others | u32 legal | ones x index | others x (index, f32 value)
//   | legal x index | legal x f32 probability. Input planes are stored sparsely (most are 0/1).
// Version 2 (positions of a cells-head network, docs/cells_head.md) adds u32 cell bytes (2|4) to the
// header and, after each record's probabilities, legal x (a, b, slot): each value + 1 in cell
// bytes (so -1, "no term", is 0). Each chunk says which it is; both are read. The table is stored rather than rebuilt: rebuilding needs the
// game position and its symmetry (the buffer holds only planes), and it costs 6 bytes per legal
// move, about what the move's index and probability already take. Version 1 (fully connected heads)
// is written exactly as before.
import { KibitzError } from "../errors.ts";
import { writeFileAtomic } from "../cli/atomic.ts";
import { crc32 } from "../crc32.ts";
import type { TrainBatch } from "../nn/net.ts";

const MAGIC = 0x4252424b; // "KBRB"
const VERSION = 1;
const HEADER = 32;
/** Chunks with move cells (cells-head networks). */
const VERSION_CELLS = 2;
const HEADER_CELLS = 36;

/** One training position: dense input planes, policy target over legal move indices, outcome. */
export interface Position {
  planes: Float32Array;
  /** Policy indices of the legal moves. */
  legal: Int32Array;
  /** Visit distribution aligned with `legal` (sums to 1). */
  policy: Float32Array;
  /** Final result from this position's side to move: 1, 0 or -1. */
  z: number;
  /**
   * Cells-head networks: (a, b, slot) of each legal move, 3 ints per move aligned with `legal`
   * (Game.moveCells; -1 = no term).
   */
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
  /** Bytes per stored cell value (0: a version 1 chunk, no move cells). */
  cellBytes: number;
}

/**
 * Encodes positions as one chunk (the bytes of a chunk file): version 2 with their move cells when
 * they carry them (all or none), else version 1.
 */
export function encodeChunk(
  positions: Position[],
  inputSize: number,
  moves: number,
  iteration: number,
  games: number,
): Uint8Array {
  const wide = inputSize > 65535 || moves > 65535;
  const ib = wide ? 4 : 2;
  const cells = positions.some((p) => p.cells !== undefined);
  let cb = 0;
  if (cells) {
    cb = 2;
    for (const p of positions) {
      if (!p.cells || p.cells.length !== p.legal.length * 3) {
        throw new KibitzError(
          "shape_mismatch",
          `positions of a chunk need move cells for every legal move, or none (a position has ${
            p.cells?.length ?? "none"
          } for ${p.legal.length} moves)`,
        );
      }
      for (const c of p.cells) {
        if (!Number.isInteger(c) || c < -1 || c >= 0xffffffff) {
          throw new KibitzError("shape_mismatch", `move cell ${c} is not an integer >= -1`);
        }
        if (c + 1 > 0xffff) cb = 4;
      }
    }
  }
  const head = cells ? HEADER_CELLS : HEADER;
  let size = head + 4;
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
    size += 16 + ones * ib + others * (ib + 4) + p.legal.length * (ib + 4 + 3 * cb);
    return { ones, others };
  });
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  const version = cells ? VERSION_CELLS : VERSION;
  [MAGIC, version, inputSize, moves, positions.length, ib, iteration, games].forEach((x, i) =>
    v.setUint32(i * 4, x, true)
  );
  if (cells) v.setUint32(HEADER, cb, true);
  let o = head;
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
        if (cb === 4) v.setUint32(o, c + 1, true);
        else v.setUint16(o, c + 1, true);
        o += cb;
      }
    }
  });
  v.setUint32(o, crc32(bytes.subarray(0, o)), true);
  return bytes;
}

/**
 * Parses and verifies a chunk; `where` names it in errors; `want` true or false: it must (not)
 * hold move cells (undefined: either).
 */
function decodeChunk(
  bytes: Uint8Array,
  seq: number,
  where: string,
  inputSize: number,
  moves: number,
  want: boolean | undefined,
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
  const cells = version === VERSION_CELLS;
  if (want !== undefined && cells !== want) {
    fail(
      want
        ? "holds positions without move cells (a fully connected head's run); this cells-head " +
          "network needs them (use another --dir)"
        : "holds positions with move cells (a cells-head run); this network has the fully " +
          "connected head (use another --dir)",
    );
  }
  const head = cells ? HEADER_CELLS : HEADER;
  if (bytes.length < head + 4) fail(`truncated (${bytes.length} bytes)`);
  const cb = cells ? v.getUint32(HEADER, true) : 0;
  if (cells && cb !== 2 && cb !== 4) fail(`cell bytes ${cb}, expected 2 or 4`);
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
  let o = head;
  for (let k = 0; k < count; k++) {
    if (o + 16 > end) fail("record runs past the end");
    offsets[k] = o;
    const ones = v.getUint32(o + 4, true), others = v.getUint32(o + 8, true);
    const legal = v.getUint32(o + 12, true);
    o += 16 + ones * ib + others * (ib + 4) + legal * (ib + 4 + 3 * cb);
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
    cellBytes: cb,
  };
}

const NAME = /^chunk-(\d{8})\.kbrb$/;

/**
 * A replay buffer in a folder. Writers `append`; readers (the same process or another) call
 * `refresh` to pick up new chunks and drop deleted ones, then `sampleBatch` uniformly. Positions
 * with move cells (a cells-head network's) are stored with them, and batches of them carry the
 * move table (NetBatch.moveCells).
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
    readonly cells: boolean | undefined,
  ) {}

  /**
   * Opens (creating) the buffer folder, removing leftover temp files and loading every chunk.
   * `cells` true: every position must carry move cells (a cells-head run), false: none (a fully
   * connected head's run), so a folder of the other head is refused by name; undefined: either,
   * chunk by chunk (a batch mixing both is an error).
   */
  static async open(
    dir: string,
    capacity: number,
    inputSize: number,
    moves: number,
    cells?: boolean,
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
    const b = new ReplayBuffer(dir, capacity, inputSize, moves, cells);
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
        c = decodeChunk(bytes, seq, path, this.inputSize, this.moves, this.cells);
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
    if (this.cells !== undefined && positions.some((p) => (p.cells !== undefined) !== this.cells)) {
      throw new KibitzError(
        "shape_mismatch",
        this.cells
          ? "this buffer is a cells-head run's: every position needs its move cells"
          : "this buffer is a fully connected head's run: positions carry no move cells",
      );
    }
    const seq = this.nextSeq++;
    const bytes = encodeChunk(positions, this.inputSize, this.moves, iteration, games);
    await writeFileAtomic(this.path(seq), bytes);
    this.chunks.push(
      decodeChunk(bytes, seq, this.path(seq), this.inputSize, this.moves, this.cells),
    );
    while (this.chunks.length > 1 && this.total() - this.chunks[0].count >= this.capacity) {
      const old = this.chunks.shift()!;
      await Deno.remove(this.path(old.seq)).catch(() => {});
    }
  }

  /** The chunk and byte offset of position `k` of the sampling window (0 = oldest). */
  private locate(k: number): { c: Chunk; at: number } {
    let skip = this.total() - this.size + k;
    let c = this.chunks[0], ci = 0;
    while (skip >= c.count) {
      skip -= c.count;
      c = this.chunks[++ci];
    }
    return { c, at: c.offsets[skip] };
  }

  /**
   * Decodes position `k` of the sampling window (0 = oldest) into row `row` of dense arrays (and
   * of the move table, `width` entries per row, when the buffer has cells).
   */
  private decodeInto(k: number, row: number, out: TrainBatch, width: number): void {
    const { c, at } = this.locate(k);
    const v = c.view, ib = c.wide ? 4 : 2;
    let o = at;
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
    const cb = c.cellBytes;
    if (cb === 0 || !out.moveCells) return;
    const t = out.moveCells, tb = row * width * 4;
    for (let i = 0; i < legal; i++) {
      t[tb + i * 4] = moves[i];
      for (let j = 1; j <= 3; j++) {
        t[tb + i * 4 + j] = (cb === 4 ? v.getUint32(o, true) : v.getUint16(o, true)) - 1;
        o += cb;
      }
    }
  }

  /** Legal moves of position `k` of the window (the move table's width it needs). */
  private legalCount(k: number): number {
    const { c, at } = this.locate(k);
    return c.view.getUint32(at + 12, true);
  }

  /** A training batch of `n` positions drawn uniformly (with replacement) from the window. */
  sampleBatch(n: number, next: () => number): TrainBatch {
    const size = this.size;
    if (size === 0) {
      throw new KibitzError("empty_buffer", `replay buffer ${this.dir}: holds no positions`);
    }
    const ks: number[] = [];
    for (let r = 0; r < n; r++) ks.push(Math.floor(next() * size));
    return this.batchAt(ks);
  }

  /** Reads back position `k` of the window (0 = oldest), for tests and tools. */
  position(k: number): Position {
    const out = this.batchAt([k]);
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
      // Aligned with `legal` (ascending move index), from the table's entries.
      const at = new Map<number, number>();
      for (let j = 0; j < out.moveCellsWidth!; j++) {
        if (out.moveCells[j * 4] >= 0) at.set(out.moveCells[j * 4], j);
      }
      p.cells = new Int32Array(legal.length * 3);
      legal.forEach((m, i) => {
        const j = at.get(m)!;
        for (let d = 0; d < 3; d++) p.cells![i * 3 + d] = out.moveCells![j * 4 + 1 + d];
      });
    }
    return p;
  }

  /**
   * The positions numbered `ks` of the window (0 = oldest) as one training batch; when they carry
   * move cells, its move table lists each position's legal moves in stored order, padded with -1
   * entries to the widest position (positions with and without cells in one batch: an error).
   */
  batchAt(ks: number[]): TrainBatch {
    const n = ks.length;
    const out: TrainBatch = {
      size: n,
      planes: new Float32Array(n * this.inputSize),
      mask: new Float32Array(n * this.moves),
      policy: new Float32Array(n * this.moves),
      value: new Float32Array(n),
    };
    let width = 0;
    const withCells = ks.filter((k) => this.locate(k).c.cellBytes > 0).length;
    if (withCells > 0 && withCells < n) {
      throw new KibitzError(
        "bad_buffer",
        `replay buffer ${this.dir}: positions with and without move cells in one window`,
      );
    }
    if (withCells > 0) {
      width = 1;
      for (const k of ks) width = Math.max(width, this.legalCount(k));
      out.moveCells = new Float32Array(n * width * 4).fill(-1);
      out.moveCellsWidth = width;
    }
    ks.forEach((k, r) => this.decodeInto(k, r, out, width));
    return out;
  }
}
