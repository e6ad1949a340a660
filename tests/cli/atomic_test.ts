import assert from "node:assert/strict";
import { streamFileAtomic } from "../../src/cli/atomic.ts";

// streamFileAtomic: the file appears whole or not at all. With `overlap`, each chunk is written
// while the next is made, from two buffers used in turn (as a checkpoint's stores are streamed).

function* turns(chunks: number, size: number, fail = -1): Generator<Uint8Array> {
  const bufs = [new Uint8Array(size), new Uint8Array(size)];
  for (let k = 0; k < chunks; k++) {
    if (k === fail) throw new Error("injected: the source failed");
    const b = bufs[k & 1];
    b.fill(k & 0xff);
    yield b;
  }
}

Deno.test("streamFileAtomic writes every chunk in order, overlapped or not", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const overlap of [false, true]) {
      const path = `${dir}/out-${overlap}.bin`;
      await streamFileAtomic(path, turns(40, 1 << 16), overlap);
      const got = await Deno.readFile(path);
      assert.equal(got.length, 40 << 16);
      for (let k = 0; k < 40; k++) assert.equal(got[(k << 16) + 123], k, `chunk ${k}`);
    }
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
      "out-false.bin",
      "out-true.bin",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("streamFileAtomic keeps the old file and leaves no temp file when a chunk fails", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/out.bin`;
    await Deno.writeTextFile(path, "old");
    for (const overlap of [false, true]) {
      await assert.rejects(streamFileAtomic(path, turns(10, 1 << 16, 7), overlap), /injected/);
      assert.equal(await Deno.readTextFile(path), "old");
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["out.bin"]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
