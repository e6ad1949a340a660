// Game stores read gzip-compressed (`.gz`) as well as plain, and writers refuse to append to one.
import { deepEqual, equal, match, ok, rejects } from "node:assert/strict";
import { isGzipStore, readGameStore, type StoredGame } from "../../src/sgf/store.ts";
import { isKibitzError } from "../../src/errors.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const STORE = `${ROOT}models/hive-default.val-games.jsonl`;

async function gzip(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const s = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(s).arrayBuffer());
}

async function all(path: string): Promise<StoredGame[]> {
  const out: StoredGame[] = [];
  for await (const g of readGameStore(path)) out.push(g);
  return out;
}

Deno.test("store: a .gz store holds the same games as its plain twin", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const gz = `${dir}/s.jsonl.gz`;
    await Deno.writeFile(gz, await gzip(await Deno.readFile(STORE)));
    ok(isGzipStore(gz) && !isGzipStore(STORE));
    const plain = await all(STORE), packed = await all(gz);
    ok(plain.length > 10);
    deepEqual(packed, plain);
    // Stopping early cancels the decompression and closes the file (the test's resource check).
    for await (const g of readGameStore(gz)) {
      equal(g.id, plain[0].id);
      break;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("store: a truncated .gz store is a bad_store error naming the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const gz = `${dir}/cut.jsonl.gz`, bytes = await gzip(await Deno.readFile(STORE));
    await Deno.writeFile(gz, bytes.subarray(0, bytes.length >> 1));
    await rejects(all(gz), (e: Error) => {
      ok(isKibitzError(e) && e.code === "bad_store", String(e));
      match(e.message, /cut\.jsonl\.gz: not a complete gzip file/);
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("store: hive-games refuses to append to a .gz store", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${ROOT}tasks/hive_games.ts`,
        "--out",
        `${dir}/g.jsonl.gz`,
        "--games",
        "1",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    ok(!out.success);
    match(new TextDecoder().decode(out.stderr), /error: .*g\.jsonl\.gz.*plain JSON lines/);
    deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
