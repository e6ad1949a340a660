import { equal, ok } from "node:assert/strict";
import { ingestRecordFile } from "../../src/sgf/ingest.ts";

const RECORDS = new URL("../fixtures/sgf/records/", import.meta.url);

/** A small deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(text: string, rand: () => number): string {
  const lines = text.split("\n");
  const pick = () => Math.floor(rand() * lines.length);
  const kind = Math.floor(rand() * 6);
  if (kind === 0) lines.splice(pick(), 1); // drop an action
  else if (kind === 1) {
    const i = pick(), j = pick();
    [lines[i], lines[j]] = [lines[j], lines[i]]; // reorder two actions
  } else if (kind === 2) lines.splice(pick(), 0, lines[pick()]); // repeat an action
  else if (kind === 3) {
    const i = pick();
    const k = Math.floor(rand() * lines[i].length);
    lines[i] = lines[i].slice(0, k) + lines[i].slice(k + 1); // delete a character
  } else if (kind === 4) {
    const i = pick();
    lines[i] = lines[i].replace(
      /[A-Z] \d+/,
      () => `${"ABMNOPZ"[Math.floor(rand() * 7)]} ${Math.floor(rand() * 30)}`,
    );
  } else return text.slice(0, Math.floor(rand() * text.length)); // truncate
  return lines.join("\n");
}

Deno.test("fuzz: mutated real records are accepted or rejected with a reason, never thrown", () => {
  const texts = [...Deno.readDirSync(RECORDS)].map((e) =>
    Deno.readTextFileSync(new URL(e.name, RECORDS))
  );
  const rand = rng(7);
  const reasons = new Set<string>();
  let accepted = 0;
  for (let i = 0; i < 300; i++) {
    const text = mutate(texts[i % texts.length], rand);
    const r = ingestRecordFile({ name: `m${i}.sgf`, text });
    equal(r.games.length + r.rejections.length >= 1, true, `mutation ${i} gave nothing`);
    for (const x of r.rejections) {
      reasons.add(x.reason);
      ok(x.reason !== "internal_error", `mutation ${i}: ${x.message}`);
    }
    accepted += r.games.length;
  }
  ok(accepted > 0 && reasons.size >= 3, `${accepted} accepted, reasons ${[...reasons]}`);
});
