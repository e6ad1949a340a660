import { deepEqual, equal, ok } from "node:assert/strict";
import { zipSync } from "fflate";
import { ingestBoardspace, ingestRecordFile, type Rejection } from "../../src/sgf/ingest.ts";
import { readGameStore, type StoredGame } from "../../src/sgf/store.ts";

const FIX = new URL("../fixtures/sgf/", import.meta.url).pathname;
const RECORDS = `${FIX}records`;
const ABBO = "HV-Abbo69-WeakBot-2018-10-28-2007.sgf";

async function storeOf(path: string): Promise<StoredGame[]> {
  const games: StoredGame[] = [];
  for await (const g of readGameStore(path)) games.push(g);
  return games;
}

Deno.test("ingest: the real records give PGNs identical to Mzinga's twins; re-runs add nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/games.jsonl`;
    const s = await ingestBoardspace([RECORDS], { out, pgnDir: `${dir}/pgn` });
    deepEqual(
      [s.files, s.records, s.accepted, s.duplicates, s.rejected, s.stored],
      [9, 10, 9, 1, 0, 9],
    );
    let pgns = 0;
    for (const e of Deno.readDirSync(`${FIX}pgn`)) {
      equal(
        Deno.readTextFileSync(`${dir}/pgn/${e.name}`),
        Deno.readTextFileSync(`${FIX}pgn/${e.name}`),
        e.name,
      );
      pgns++;
    }
    equal(pgns, 9);
    equal([...Deno.readDirSync(`${dir}/pgn`)].length, 9);
    const first = await storeOf(out);
    equal(new Set(first.map((g) => g.id)).size, 9);
    equal(s.plies, first.reduce((n, g) => n + g.moves.length, 0));
    const kaur = first.find((g) => g.white === "Dumbot" && g.black === "Kaur50")!;
    deepEqual(
      [kaur.gameType, kaur.variant, kaur.result, kaur.termination, kaur.date, kaur.moves.length],
      ["Base+MLP", "Hive-PLM", "BlackWins", "position", "2023.01.16", 88],
    );
    const draw = first.find((g) => g.black === "guest")!;
    deepEqual([draw.result, draw.termination], ["Draw", "record"]);

    const again = await ingestBoardspace([RECORDS, `${RECORDS}/${ABBO}`], { out });
    deepEqual([again.accepted, again.alreadyStored, again.duplicates, again.stored], [9, 9, 2, 9]);
    deepEqual(await storeOf(out), first);
    equal([...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".tmp")).length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ingest: broken files are rejected with the right reason while the rest is accepted", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const abbo = Deno.readTextFileSync(`${RECORDS}/${ABBO}`);
    const batch = `${dir}/batch`;
    await Deno.mkdir(batch);
    Deno.writeTextFileSync(`${batch}/a-good.sgf`, abbo);
    Deno.writeTextFileSync(`${batch}/b-truncated.sgf`, abbo.slice(0, 600));
    Deno.writeTextFileSync(
      `${batch}/c-unknown-verb.sgf`,
      abbo.replace("P1[14 move B bS1 L 11 /bL]", "P1[14 teleport B bS1 L 11 /bL]"),
    );
    Deno.writeTextFileSync(
      `${batch}/d-illegal.sgf`,
      abbo.replace("P1[9 move B bB1 L 12 -bL]", "P1[9 move B bB1 O 14 -bL]"),
    );
    Deno.writeTextFileSync(
      `${batch}/e-variant.sgf`,
      abbo.replace("SU[hive-plm]", "SU[hive-ultimate]"),
    );
    Deno.writeTextFileSync(`${batch}/f-not-hive.sgf`, abbo.replace("GM[27]", "GM[1]"));
    Deno.writeTextFileSync(`${batch}/g-junk.zip`, "not a zip");
    const rejections: Rejection[] = [];
    const s = await ingestBoardspace([batch, `${dir}/missing.sgf`], {
      out: `${dir}/games.jsonl`,
      onReject: (r) => rejections.push(r),
    });
    deepEqual([s.files, s.records, s.accepted, s.rejected], [8, 5, 1, 7]);
    deepEqual(s.byReason, {
      sgf_truncated: 1,
      unknown_verb: 1,
      illegal_move: 1,
      unknown_variant: 1,
      not_hive: 1,
      bad_zip: 1,
      unreadable: 1,
    });
    const by = (reason: string) => rejections.find((r) => r.reason === reason)!;
    ok(by("sgf_truncated").source.endsWith("b-truncated.sgf"));
    ok(by("sgf_truncated").line > 0);
    deepEqual(
      [by("unknown_verb").index, by("unknown_verb").ply, by("unknown_verb").raw],
      [0, 6, "14 teleport B bS1 L 11 /bL"],
    );
    deepEqual(
      [by("illegal_move").ply, by("illegal_move").raw, by("illegal_move").line],
      [4, "9 move B bB1 O 14 -bL", 18],
    );
    ok(by("illegal_move").message.includes("d-illegal.sgf game 0"), by("illegal_move").message);
    const stored = await storeOf(`${dir}/games.jsonl`);
    deepEqual(stored.map((g) => g.source), [`${batch}/a-good.sgf`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ingest: --variant and --exclude-bots filters", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // The store's folder is created when missing.
    let s = await ingestBoardspace([RECORDS], { out: `${dir}/sub/a.jsonl`, variant: "base" });
    deepEqual([s.accepted, s.byReason], [1, { variant_mismatch: 9 }]);
    equal((await storeOf(`${dir}/sub/a.jsonl`))[0].black, "guest");
    s = await ingestBoardspace([RECORDS], { out: `${dir}/b.jsonl`, excludeBots: true });
    deepEqual([s.accepted, s.duplicates, s.byReason], [4, 1, { bot: 5 }]);
    for (const g of await storeOf(`${dir}/b.jsonl`)) ok(!/bot/i.test(g.white + g.black));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ingest: .zip archives (members in folders, other files ignored)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const enc = new TextEncoder();
    const read = (n: string) => Deno.readFileSync(`${RECORDS}/${n}`);
    const zip = zipSync({
      "2018/HV-Abbo69-WeakBot-2018-10-28-2007.sgf": read(ABBO),
      "U!HV-kearf29-Dumbot-2013-04-20-0054.sgf": read("U!HV-kearf29-Dumbot-2013-04-20-0054.sgf"),
      "readme.txt": enc.encode("not a record"),
      "broken.sgf": enc.encode("(;GM[27]SU[hive]; P0[1 pick W 4 wS1]"),
    });
    Deno.writeFileSync(`${dir}/games.zip`, zip);
    const rejections: Rejection[] = [];
    const s = await ingestBoardspace([`${dir}/games.zip`], {
      out: `${dir}/games.jsonl`,
      pgnDir: `${dir}/pgn`,
      onReject: (r) => rejections.push(r),
    });
    deepEqual([s.files, s.accepted, s.rejected], [3, 2, 1]);
    deepEqual(rejections.map((r) => [r.source, r.reason]), [[
      `${dir}/games.zip/broken.sgf`,
      "sgf_truncated",
    ]]);
    const stored = await storeOf(`${dir}/games.jsonl`);
    deepEqual(stored.map((g) => g.source).sort(), [
      `${dir}/games.zip/2018/${ABBO}`,
      `${dir}/games.zip/U!HV-kearf29-Dumbot-2013-04-20-0054.sgf`,
    ]);
    equal(
      Deno.readTextFileSync(`${dir}/pgn/U!HV-kearf29-Dumbot-2013-04-20-0054.pgn`),
      Deno.readTextFileSync(`${FIX}pgn/U!HV-kearf29-Dumbot-2013-04-20-0054.pgn`),
    );
    // The same games read from files instead of the archive keep their ids.
    const again = await ingestBoardspace([RECORDS], { out: `${dir}/games.jsonl` });
    deepEqual([again.alreadyStored, again.stored], [2, 9]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ingest: absurdly nested files are rejected, not fatal", () => {
  const deep = "(;GM[27]".repeat(200000);
  const r = ingestRecordFile({ name: "deep.sgf", text: deep });
  deepEqual([r.records, r.games.length, r.rejections.length], [0, 0, 1]);
  // Rejected by depth, with where, not by a stack overflow caught after the fact.
  equal(r.rejections[0].reason, "too_deep");
  ok(r.rejections[0].message.includes("deep.sgf:1:"), r.rejections[0].message);
});

Deno.test("ingest: plies after the position decided the game are cut, the game kept", () => {
  const abbo = Deno.readTextFileSync(`${RECORDS}/${ABBO}`);
  const longer = abbo.replace(
    "; P0[78 done]",
    "; P0[78 done]\n; P1[79 move B bQ K 12 .]\n; P1[80 done]",
  );
  const r = ingestRecordFile({ name: "long.sgf", text: longer });
  const plain = ingestRecordFile({ name: "plain.sgf", text: abbo });
  deepEqual([r.cut, r.rejections.length, plain.cut], [1, 0, 0]);
  deepEqual(r.games[0].moves, plain.games[0].moves);
  deepEqual([r.games[0].result, r.games[0].termination], ["WhiteWins", "position"]);
});

Deno.test("ingest: a stop after a file writes the store so far; a rerun adds the rest", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const whole = `${dir}/whole.jsonl`, parts = `${dir}/parts.jsonl`;
    await ingestBoardspace([RECORDS], { out: whole });
    let polls = 0;
    const cut = await ingestBoardspace([RECORDS], { out: parts, shouldStop: () => ++polls >= 3 });
    deepEqual([cut.stopped, cut.files, polls], [true, 3, 3]);
    equal((await storeOf(parts)).length, cut.stored);
    ok(cut.stored > 0 && cut.stored < 9, `${cut.stored}`);
    const rest = await ingestBoardspace([RECORDS], { out: parts });
    equal(rest.stopped, undefined);
    equal(rest.alreadyStored, cut.stored);
    // The same games in the same order as one uninterrupted run.
    equal(Deno.readTextFileSync(parts), Deno.readTextFileSync(whole));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
