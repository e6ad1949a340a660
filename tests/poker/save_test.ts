import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import type { PublicTree } from "../../src/cfr/tree.ts";
import {
  checkOutputDir,
  collectStrategies,
  crc32Update,
  decodeSave,
  encodeSave,
  formatRootSummary,
  type RootSummary,
  SAVE_VERSION,
  saveChunks,
  writeSolveOutputs,
} from "../../src/poker/results.ts";

const HEADER = { config: '[ranges]\noop = "AA"\n', meta: { iterations: 7 } };
const STRATEGIES = Float32Array.from([0.25, 0.75, 1, 0, 0.5, 0.5]);

function throwsSave(bytes: Uint8Array, pattern: RegExp): void {
  assert.throws(
    () => decodeSave(bytes, "spot/solve.bin"),
    (e) =>
      isKibitzError(e, "bad_save") && /^spot\/solve\.bin: /.test(e.message) &&
      pattern.test(e.message),
  );
}

Deno.test("solve.bin: round trip with version and checksum", () => {
  const bytes = encodeSave(HEADER, STRATEGIES);
  assert.equal(new DataView(bytes.buffer).getUint32(8, true), SAVE_VERSION);
  const { header, strategies } = decodeSave(bytes, "x");
  assert.deepEqual(header, HEADER);
  assert.deepEqual(Array.from(strategies), Array.from(STRATEGIES));
});

Deno.test("solve.bin: a flipped byte anywhere, or a truncated file, is refused", () => {
  const bytes = encodeSave(HEADER, STRATEGIES);
  for (const i of [9, 20, bytes.length - 10, bytes.length - 1]) {
    const bad = bytes.slice();
    bad[i] ^= 0x10;
    throwsSave(bad, /checksum|version|header/);
  }
  throwsSave(bytes.slice(0, bytes.length - 4), /checksum/);
  throwsSave(bytes.slice(0, 10), /not a Kibitz solve save/);
});

Deno.test("solve.bin: malformed headers and non-finite values are refused by name", () => {
  throwsSave(encodeSave({ config: "x" } as never, STRATEGIES), /malformed header: no meta/);
  throwsSave(encodeSave({ meta: {} } as never, STRATEGIES), /malformed header: no config/);
  throwsSave(encodeSave(HEADER, Float32Array.from([0.5, NaN])), /strategy value 1 is NaN/);
  throwsSave(encodeSave(HEADER, Float32Array.from([Infinity])), /value 0 is Infinity/);
  throwsSave(encodeSave(HEADER, Float32Array.from([-0.5])), /not a probability/);
});

Deno.test("solve.bin: format 1 files (no version) and unknown versions get a clear error", () => {
  // Format 1: "KBZSOLV1" | u32 header bytes | header JSON | f32 strategies, no checksum.
  const json = new TextEncoder().encode(JSON.stringify(HEADER).padEnd(28, " "));
  const v1 = new Uint8Array(12 + json.length + 8);
  v1.set(new TextEncoder().encode("KBZSOLV1"));
  new DataView(v1.buffer).setUint32(8, json.length, true);
  v1.set(json, 12);
  throwsSave(v1, /format 1 \(no version, no checksum\).*solve the spot again/);
  const v3 = encodeSave(HEADER, STRATEGIES);
  new DataView(v3.buffer).setUint32(8, 3, true);
  throwsSave(v3, /format version 3; this Kibitz reads version 2/);
});

Deno.test("summary: a non-finite EV prints n/a, never NaN", () => {
  const s: RootSummary = {
    player: "oop",
    actions: ["Check", "Bet 10"],
    frequencies: [NaN, NaN],
    ev: [NaN, NaN],
    equity: [0.5, 0.5],
    grid: Array.from({ length: 13 }, () => new Array(13).fill(null)),
    hands: [
      { labels: [], weights: [], ev: [], equity: [] },
      { labels: [], weights: [], ev: [], equity: [] },
    ],
  };
  s.grid[0][0] = [NaN, NaN];
  const text = formatRootSummary(s);
  assert.doesNotMatch(text, /NaN/);
  assert.match(text, /OOP: EV n\/a/);
});

Deno.test("output folder: checked before the solve; a failed write falls back to a temp folder", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/a-file`;
    await Deno.writeTextFile(file, "x");
    await assert.rejects(() => checkOutputDir(file), /a-file: exists and is not a directory/);
    await assert.rejects(() => checkOutputDir(`${file}/sub`), /sub: cannot be created/);
    await checkOutputDir(`${dir}/new/deeper`);
    assert.ok((await Deno.stat(`${dir}/new/deeper`)).isDirectory);
    assert.deepEqual([...Deno.readDirSync(`${dir}/new/deeper`)], []);

    const save = encodeSave(HEADER, STRATEGIES);
    assert.equal(await writeSolveOutputs(`${dir}/ok`, { result: { a: 1 }, save }), `${dir}/ok`);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/ok/result.json`)), { a: 1 });

    let fallback = "";
    await assert.rejects(
      () => writeSolveOutputs(`${file}/out`, { result: { a: 2 }, save }),
      (e) => {
        const m = /they were saved to (\S+)\/result\.json and \S+\/solve\.bin/.exec(
          (e as Error).message,
        );
        fallback = m ? m[1] : "";
        return isKibitzError(e, "write_failed") && m !== null &&
          (e as Error).message.includes(`cannot write the results to ${file}/out`);
      },
    );
    try {
      assert.deepEqual(JSON.parse(await Deno.readTextFile(`${fallback}/result.json`)), { a: 2 });
      const back = decodeSave(await Deno.readFile(`${fallback}/solve.bin`), "fallback");
      assert.deepEqual(back.header, HEADER);
    } finally {
      await Deno.remove(fallback, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("solve.bin streamed block by block: the same bytes (and CRC) as encodeSave, in any chunk size", () => {
  // Three blocks of 2, 5 and 3 values; the policy writes values derived from the node id.
  const tree = {
    blockNode: Uint32Array.from([4, 9, 2]),
    blockSize: Uint32Array.from([2, 5, 3]),
  } as unknown as PublicTree;
  const policy = (node: number, out: Float32Array) => {
    for (let i = 0; i < out.length; i++) out[i] = (node + i) / 16;
  };
  const whole = encodeSave(HEADER, collectStrategies(tree, policy));
  for (const chunk of [4, 12, 20, 1 << 20]) {
    // A chunk is valid until the next is asked for (the buffer is reused): copy each.
    const parts = Array.from(saveChunks({ header: HEADER, tree, policy }, chunk), (c) => c.slice());
    const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let off = 0;
    for (const p of parts) joined.set(p, off), (off += p.length);
    assert.deepEqual(joined, whole);
    if (chunk === 4) assert.ok(parts.length >= 5, "small chunks: one per block at least");
  }
  assert.equal(
    crc32Update(crc32Update(0, whole.subarray(0, 7)), whole.subarray(7, 30)),
    crc32Update(0, whole.subarray(0, 30)),
  );
});

Deno.test("result.json streamed node by node parses to the object with its nodes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const nodes = [{ path: ["Check"] }, { path: ["Bet 10"], x: [1, 2] }];
    const save = encodeSave(HEADER, STRATEGIES);
    await writeSolveOutputs(dir, { result: { meta: { a: 1 }, root: {} }, nodes, save });
    const back = JSON.parse(await Deno.readTextFile(`${dir}/result.json`));
    assert.deepEqual(back, { meta: { a: 1 }, root: {}, nodes });
    await writeSolveOutputs(dir, { result: {}, nodes: [], save });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/result.json`)), { nodes: [] });
    assert.deepEqual(await Deno.readFile(`${dir}/solve.bin`), save);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
