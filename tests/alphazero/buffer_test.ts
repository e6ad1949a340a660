import assert from "node:assert/strict";
import { ReplayBuffer } from "../../src/alphazero/buffer.ts";
import { isKibitzError } from "../../src/errors.ts";
import { mulberry32 } from "../../src/mcts/random.ts";

const INPUT = 12, MOVES = 5;

function position(k: number) {
  const planes = new Float32Array(INPUT);
  planes[k % INPUT] = 1;
  planes[(k + 3) % INPUT] = 0.25 * ((k % 3) + 1); // a non-binary value
  return {
    planes,
    legal: Int32Array.from([0, 2, 4]),
    policy: Float32Array.from([0.5, 0.25, 0.25]),
    z: [1, 0, -1][k % 3],
  };
}

Deno.test("buffer: positions round-trip exactly through chunk files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const b = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    await b.append([0, 1, 2].map(position), 1, 1);
    await b.append([3, 4].map(position), 1, 1);
    assert.equal(b.size, 5);
    assert.equal(b.gamesFor(1), 2);
    assert.equal(b.positionsFor(1), 5);
    for (let k = 0; k < 5; k++) {
      const p = b.position(k), want = position(k);
      assert.deepEqual([...p.planes], [...want.planes]);
      assert.deepEqual([...p.legal], [...want.legal]);
      assert.deepEqual([...p.policy], [...want.policy]);
      assert.equal(p.z, want.z);
    }
    // A second reader opened on the same folder sees the same positions.
    const r = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    assert.equal(r.size, 5);
    assert.deepEqual([...r.position(4).planes], [...position(4).planes]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: circular window drops whole old chunks beyond capacity", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const b = await ReplayBuffer.open(dir, 5, INPUT, MOVES);
    for (let c = 0; c < 4; c++) await b.append([0, 1, 2].map((i) => position(c * 3 + i)), c, 1);
    // 12 written, capacity 5: the window is the newest 5; chunks wholly older are deleted.
    assert.equal(b.size, 5);
    assert.deepEqual([...b.position(0).planes], [...position(7).planes]);
    assert.deepEqual([...b.position(4).planes], [...position(11).planes]);
    const files = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assert.deepEqual(files, ["chunk-00000002.kbrb", "chunk-00000003.kbrb"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: a reader picks up chunks appended while it is open, and sampling is uniform", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const w = await ReplayBuffer.open(dir, 1000, INPUT, MOVES);
    const r = await ReplayBuffer.open(dir, 1000, INPUT, MOVES);
    assert.equal(r.size, 0);
    await w.append([0, 1, 2, 3].map(position), 1, 2);
    await r.refresh();
    assert.equal(r.size, 4);
    const batch = r.sampleBatch(4000, mulberry32(1));
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) {
      counts[batch.planes.subarray(i * INPUT, (i + 1) * INPUT).indexOf(1)]++;
    }
    for (const c of counts) assert(Math.abs(c - 1000) < 120, `counts ${counts}`);
    // Masks mark the legal moves, targets sum to one.
    assert.deepEqual([...batch.mask.subarray(0, MOVES)], [1, 0, 1, 0, 1]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: a corrupted chunk is refused by its checksum; leftover temp files are removed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const b = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    await b.append([0, 1].map(position), 1, 1);
    await Deno.writeFile(`${dir}/chunk-00000009.kbrb.123.tmp`, new Uint8Array(7));
    const path = `${dir}/chunk-00000000.kbrb`;
    const bytes = await Deno.readFile(path);
    bytes[40] ^= 1;
    await Deno.writeFile(path, bytes);
    await assert.rejects(
      () => ReplayBuffer.open(dir, 100, INPUT, MOVES),
      (e) => isKibitzError(e, "bad_buffer") && /checksum/.test((e as Error).message),
    );
    assert(!(await Array.fromAsync(Deno.readDir(dir))).some((e) => e.name.endsWith(".tmp")));
    // A chunk of another game's shapes is refused by name.
    await Deno.remove(path);
    await (await ReplayBuffer.open(dir, 100, INPUT, MOVES)).append([position(0)], 1, 1);
    await assert.rejects(
      () => ReplayBuffer.open(dir, 100, INPUT + 1, MOVES),
      (e) => isKibitzError(e, "bad_buffer"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: overlapping appends keep call order in memory and on disk when the first write is slow", async () => {
  // Self-play flushes from concurrent workers: a second chunk could be appended while the first
  // one's file was still being written. The first rename here waits (up to 300 ms) for a later
  // chunk's rename to finish first, the timing a loaded machine produced.
  const dir = await Deno.makeTempDir();
  const rename = Deno.rename;
  let later: () => void = () => {};
  const laterDone = new Promise<void>((r) => later = r);
  Deno.rename = async (from: string | URL, to: string | URL) => {
    const first = String(to).endsWith("chunk-00000000.kbrb");
    if (first) await Promise.race([laterDone, new Promise((r) => setTimeout(r, 300))]);
    await rename(from, to);
    if (!first) later();
  };
  try {
    const b = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    const first = b.append([0, 1, 2].map(position), 1, 1);
    const second = b.append([3, 4].map(position), 1, 1);
    await Promise.all([first, second]);
    const r = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    for (let k = 0; k < 5; k++) {
      assert.deepEqual([...b.position(k).planes], [...position(k).planes], `position ${k}`);
      assert.deepEqual([...r.position(k).planes], [...position(k).planes], `reopened ${k}`);
    }
  } finally {
    Deno.rename = rename;
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: move cells round-trip (2- and 4-byte chunks); buffers of the other head refuse them", async () => {
  const dir = await Deno.makeTempDir();
  const withCells = (k: number, big: boolean) => ({
    ...position(k),
    // (a, b, slot) per legal move, -1 = no term; `big` needs 4 bytes a value.
    cells: Int32Array.from([k, -1, 2, 7, big ? 70_000 : 8, -1, -1, -1, 0]),
  });
  try {
    const b = await ReplayBuffer.open(dir, 100, INPUT, MOVES, true);
    await b.append([withCells(0, false), withCells(1, false)], 1, 1);
    await b.append([withCells(2, true)], 1, 1);
    const head = new DataView((await Deno.readFile(`${dir}/chunk-00000001.kbrb`)).buffer);
    assert.deepEqual([head.getUint32(4, true), head.getUint32(32, true)], [2, 4]);
    for (let k = 0; k < 3; k++) {
      const p = b.position(k), want = withCells(k, k === 2);
      assert.deepEqual([...p.legal], [...want.legal]);
      assert.deepEqual([...p.cells!], [...want.cells]);
    }
    const batch = b.batchAt([2, 0]);
    assert.equal(batch.moveCellsWidth, 3);
    assert.deepEqual(
      [...batch.moveCells!],
      [0, 2, -1, 2, 2, 7, 70_000, -1, 4, -1, -1, 0, 0, 0, -1, 2, 2, 7, 8, -1, 4, -1, -1, 0],
    );
    // A position without cells cannot go into a cells run's buffer; a folder opened for one head
    // refuses the other's chunks by name (opened for either, it takes both).
    await assert.rejects(
      () => b.append([position(3)], 1, 1),
      (e) => isKibitzError(e, "shape_mismatch"),
    );
    await assert.rejects(
      () => ReplayBuffer.open(dir, 100, INPUT, MOVES, false),
      (e) => isKibitzError(e, "bad_buffer") && /with move cells/.test((e as Error).message),
    );
    const fc = await Deno.makeTempDir({ dir });
    await (await ReplayBuffer.open(fc, 100, INPUT, MOVES)).append([position(0)], 1, 1);
    assert.equal(
      new DataView((await Deno.readFile(`${fc}/chunk-00000000.kbrb`)).buffer).getUint32(4, true),
      1,
    );
    await assert.rejects(
      () => ReplayBuffer.open(fc, 100, INPUT, MOVES, true),
      (e) => isKibitzError(e, "bad_buffer") && /without move cells/.test((e as Error).message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("buffer: move cells round-trip (version 2 chunks) and become the batch's move table", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const withCells = (k: number) => ({
      ...position(k),
      legal: Int32Array.from([4, 0, 2]), // not sorted: the table keeps the record's order
      policy: Float32Array.from([0.25, 0.5, 0.25]),
      cells: Int32Array.from([k, -1, 3, 7, 8, 16, -1, -1, 0]),
    });
    const b = await ReplayBuffer.open(dir, 100, INPUT, MOVES);
    await b.append([0, 1, 2].map(withCells), 1, 1);
    const p = b.position(1);
    assert.deepEqual([...p.legal], [0, 2, 4]);
    assert.deepEqual([...p.policy], [0.5, 0.25, 0.25]);
    assert.deepEqual([...p.cells!], [7, 8, 16, -1, -1, 0, 1, -1, 3]);
    const batch = b.sampleBatch(4, mulberry32(3));
    assert.equal(batch.moveCellsWidth, 3);
    for (let r = 0; r < 4; r++) {
      const t = [...batch.moveCells!.subarray(r * 12, r * 12 + 12)];
      const k = t[1]; // the first entry's a is the position's number
      assert.deepEqual(t, [4, k, -1, 3, 0, 7, 8, 16, 2, -1, -1, 0]);
      assert.equal(batch.mask[r * MOVES + 4], 1);
    }
    // A chunk of positions with and without cells is refused; a window mixing chunks too.
    await assert.rejects(b.append([withCells(3), position(4)], 1, 1), /move cells/);
    await b.append([position(5)], 1, 1);
    assert.throws(() => b.sampleBatch(64, mulberry32(1)), /with and without move cells/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
