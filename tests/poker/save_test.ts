import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import {
  checkOutputDir,
  decodeSave,
  encodeSave,
  formatRootSummary,
  type RootSummary,
  SAVE_VERSION,
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
