import { equal, match, ok } from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;
const RECORDS = `${ROOT}tests/fixtures/sgf/records`;

async function ingest(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}tasks/ingest.ts`, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("task ingest: a batch with a broken file finishes with a correct summary", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const abbo = Deno.readTextFileSync(`${RECORDS}/HV-Abbo69-WeakBot-2018-10-28-2007.sgf`);
    Deno.writeTextFileSync(`${dir}/good.sgf`, abbo);
    Deno.writeTextFileSync(`${dir}/bad.sgf`, abbo.replace("P0[3 done]", "P0[3 dance]"));
    const r = await ingest([
      dir,
      "--out",
      `${dir}/games.jsonl`,
      "--pgn",
      `${dir}/pgn`,
      "--rejects",
      `${dir}/rejects.jsonl`,
    ]);
    equal(r.code, 0, r.stderr);
    match(r.stdout, /rejected: .*bad\.sgf, game 0, ply 1, line 12: \[unknown_verb\]/);
    match(r.stdout, /^files: +2$/m);
    match(r.stdout, /^accepted: +1 \(1 new, 0 already stored\)$/m);
    match(r.stdout, /^rejected: +1 \(unknown_verb 1\)$/m);
    match(r.stderr, /ingest: 2 files, 2 games: 1 accepted, 1 rejected/);
    equal(Deno.readTextFileSync(`${dir}/games.jsonl`).trim().split("\n").length, 1);
    equal(JSON.parse(Deno.readTextFileSync(`${dir}/rejects.jsonl`)).reason, "unknown_verb");
    ok(Deno.statSync(`${dir}/pgn/good.pgn`).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("task ingest: bad arguments are clear errors", async () => {
  let r = await ingest([]);
  equal(r.code, 2);
  match(r.stderr, /^error: inputs: missing; give at least one/);
  r = await ingest([RECORDS, "--variant", "Chess"]);
  equal(r.code, 2);
  match(r.stderr, /^error: --variant: "Chess" is not a game type/);
  r = await ingest(["--help"]);
  equal(r.code, 0);
  match(r.stdout, /--exclude-bots/);
});
