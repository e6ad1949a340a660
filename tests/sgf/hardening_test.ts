// Hostile and concurrent input for ingest: zip bombs, deep nesting, two writers of one store,
// interrupted runs, symbolic links, missing inputs.
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { zipSync } from "fflate";
import { ingestBoardspace, type Rejection } from "../../src/sgf/ingest.ts";
import { lockStore } from "../../src/sgf/lock.ts";
import { sgfMembersOfZip } from "../../src/sgf/sources.ts";
import { readGameStore } from "../../src/sgf/store.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const RECORDS = `${ROOT}tests/fixtures/sgf/records`;
const NAMES = [...Deno.readDirSync(RECORDS)].map((e) => e.name).sort();
const ABBO = "HV-Abbo69-WeakBot-2018-10-28-2007.sgf";
const posix = Deno.build.os !== "windows";

function task(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}tasks/ingest.ts`, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function finish(p: Deno.ChildProcess): Promise<{ code: number; out: string; err: string }> {
  const r = await p.output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

async function ids(store: string): Promise<string[]> {
  const out: string[] = [];
  for await (const g of readGameStore(store)) out.push(g.id);
  return out.sort();
}

function leftovers(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.endsWith(".tmp") || n.endsWith(".lock")
  );
}

/** Sets the uncompressed size a zip declares for `member` (local header and central directory). */
function lieAboutSize(zip: Uint8Array, member: string, size: number): void {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const name = new TextEncoder().encode(member);
  const at = (p: number, off: number) =>
    name.every((b, i) => zip[p + off + i] === b) &&
    v.getUint16(p + (off === 30 ? 26 : 28), true) === name.length;
  for (let p = 0; p + 46 < zip.length; p++) {
    const sig = v.getUint32(p, true);
    if (sig === 0x04034b50 && at(p, 30)) v.setUint32(p + 22, size, true);
    if (sig === 0x02014b50 && at(p, 46)) v.setUint32(p + 24, size, true);
  }
}

Deno.test("ingest: a zip bomb is rejected member by member (too_large), the batch goes on", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const abbo = Deno.readFileSync(`${RECORDS}/${ABBO}`);
    const big = new Uint8Array(4 << 20).fill(32); // 4 MiB of spaces, deflates to a few KB
    const zip = zipSync({
      "a-good.sgf": abbo,
      "b-declared.sgf": big,
      "c-liar.sgf": big,
      "d-good.sgf": Deno.readFileSync(`${RECORDS}/${NAMES[1]}`),
    });
    lieAboutSize(zip, "c-liar.sgf", 100); // declares 100 bytes, inflates to 4 MiB
    ok(zip.length < 64 << 10, `the bomb is small (${zip.length} bytes)`);
    Deno.writeFileSync(`${dir}/bomb.zip`, zip);
    const rejections: Rejection[] = [];
    const s = await ingestBoardspace([`${dir}/bomb.zip`], {
      out: `${dir}/games.jsonl`,
      limits: { maxMemberBytes: 1 << 20 },
      onReject: (r) => rejections.push(r),
    });
    equal(s.accepted, 2);
    deepEqual(rejections.map((r) => [r.source.slice(dir.length + 1), r.reason]), [
      ["bomb.zip/b-declared.sgf", "too_large"],
      ["bomb.zip/c-liar.sgf", "too_large"],
    ]);
    match(rejections[0].message, /declares 4194304 bytes, over the member cap \(1048576 bytes\)/);
    match(rejections[1].message, /more than 1048576 bytes uncompressed/);

    // The archive cap: the members together may not pass it, whatever each one weighs.
    const members: string[] = [];
    for await (const m of sgfMembersOfZip(zip, "bomb.zip", { maxArchiveBytes: abbo.length + 10 })) {
      members.push(`${m.name} ${"text" in m ? "read" : m.reason}`);
    }
    deepEqual(members, [
      "bomb.zip/a-good.sgf read",
      "bomb.zip/b-declared.sgf too_large",
      "bomb.zip/c-liar.sgf too_large",
      "bomb.zip/d-good.sgf too_large",
    ]);
    // A plain record file over the member cap is refused before it is read.
    Deno.writeFileSync(`${dir}/huge.sgf`, big);
    const plain: Rejection[] = [];
    await ingestBoardspace([`${dir}/huge.sgf`], {
      out: `${dir}/games.jsonl`,
      limits: { maxMemberBytes: 1 << 20 },
      onReject: (r) => plain.push(r),
    });
    deepEqual(plain.map((r) => r.reason), ["too_large"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ingest: symbolic links to records are followed; a broken one is reported", {
  ignore: !posix,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/in`);
    Deno.symlinkSync(`${RECORDS}/${ABBO}`, `${dir}/in/linked.sgf`);
    Deno.symlinkSync(RECORDS, `${dir}/in/folder`);
    Deno.symlinkSync(`${dir}/in`, `${dir}/in/loop`); // a cycle must end
    Deno.symlinkSync(`${dir}/nowhere.sgf`, `${dir}/in/broken.sgf`);
    const rejections: Rejection[] = [];
    const s = await ingestBoardspace([`${dir}/in`], {
      out: `${dir}/games.jsonl`,
      onReject: (r) => rejections.push(r),
    });
    equal(s.files, NAMES.length + 2);
    ok(s.accepted >= NAMES.length - 2, `${s.accepted} accepted`);
    const broken = rejections.find((r) => r.source.endsWith("broken.sgf"));
    ok(broken, "the broken link is reported");
    equal(broken.reason, "unreadable");
    match(broken.message, /broken symbolic link/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: two concurrent ingests into one store lose no games", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/a`);
    await Deno.mkdir(`${dir}/b`);
    NAMES.forEach((n, i) =>
      Deno.copyFileSync(`${RECORDS}/${n}`, `${dir}/${i % 2 ? "b" : "a"}/${n}`)
    );
    const store = `${dir}/games.jsonl`;
    const [ra, rb] = await Promise.all([
      finish(task([`${dir}/a`, "--out", store])),
      finish(task([`${dir}/b`, "--out", store])),
    ]);
    equal(ra.code, 0, ra.err);
    equal(rb.code, 0, rb.err);
    // Each run alone, into its own store: the shared store must hold both sets.
    await ingestBoardspace([`${dir}/a`], { out: `${dir}/only-a.jsonl` });
    await ingestBoardspace([`${dir}/b`], { out: `${dir}/only-b.jsonl` });
    const both = [...await ids(`${dir}/only-a.jsonl`), ...await ids(`${dir}/only-b.jsonl`)].sort();
    ok(both.length >= 4);
    deepEqual(await ids(store), both);
    deepEqual(leftovers(dir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: a held store lock fails --no-wait clearly and makes others wait", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = `${dir}/games.jsonl`;
    const lock = await lockStore(store);
    const refused = await finish(task([RECORDS, "--out", store, "--no-wait"]));
    equal(refused.code, 1);
    match(refused.err, new RegExp(`^error: .*games\\.jsonl: another ingest \\(pid ${Deno.pid}\\)`));
    ok(!refused.err.includes("    at "), "no stack trace");
    const waiting = task([RECORDS, "--out", store]);
    // Let it reach the lock and say it waits, then let it in.
    const reader = waiting.stderr.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("waiting for it")) {
      const { value, done } = await reader.read();
      if (done) break;
      said += value;
    }
    match(said, new RegExp(`being written by another ingest \\(pid ${Deno.pid}`));
    await lock.release();
    while (!(await reader.read()).done) { /* drain */ }
    const st = await waiting.status;
    await waiting.stdout.cancel();
    equal(st.code, 0);
    ok((await ids(store)).length >= NAMES.length - 2);
    deepEqual(leftovers(dir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: a stale lock of a dead process is taken over", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = `${dir}/games.jsonl`;
    // A pid no process has (above Linux's pid_max) that left its lock file behind.
    Deno.writeTextFileSync(`${store}.lock`, "pid 99999999\n");
    const r = await finish(task([`${RECORDS}/${ABBO}`, "--out", store, "--no-wait"]));
    equal(r.code, 0, r.err);
    match(r.err, /took over .*games\.jsonl\.lock from pid 99999999/);
    equal((await ids(store)).length, 1);
    deepEqual(leftovers(dir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: a run quit by a second Ctrl-C leaves no temp file, lock or half store", {
  ignore: !posix,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = `${dir}/games.jsonl`;
    Deno.writeTextFileSync(store, "");
    // A named pipe as input: the run blocks reading it with its temp store open.
    const fifo = `${dir}/slow.sgf`;
    const mk = await new Deno.Command("mkfifo", { args: [fifo] }).output();
    equal(mk.code, 0);
    const p = task([fifo, "--out", store]);
    // Wait for the temp store itself (games.jsonl.<pid>....tmp), not the pre-check's probe file.
    const storeTemp = () => leftovers(dir).some((n) => /^games\.jsonl\..*\.tmp$/.test(n));
    const deadline = Date.now() + 30_000;
    while (!storeTemp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    ok(storeTemp(), "the run got to its temp store");
    // The first Ctrl-C asks it to stop after the file, which never ends; the second quits at once.
    p.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 500));
    p.kill("SIGINT");
    const r = await finish(p);
    equal(r.code, 130, r.err);
    match(r.err, /ingest: stopping after this file, then writing the store \(Ctrl-C again/);
    deepEqual(leftovers(dir), []);
    equal(Deno.readTextFileSync(store), "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: a missing input path fails before the work (exit 2, names it)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const r = await finish(task([RECORDS, `${dir}/missing.sgf`, "--out", `${dir}/g.jsonl`]));
    equal(r.code, 2);
    equal(r.err.trim(), `error: input ${dir}/missing.sgf: no such file or folder`);
    deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
