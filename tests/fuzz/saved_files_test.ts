// Property-based fuzzing of saved files read back: network checkpoints (bytes flipped, cut,
// extended, or a rewritten header with a valid checksum), game stores (arbitrary lines) and zip
// archives (bytes flipped or cut). Every case loads or fails with a KibitzError naming the file.
import fc from "fast-check";
import { ok } from "node:assert/strict";
import { zipSync } from "fflate";
import { decodeCheckpoint, encodeCheckpoint } from "../../src/nn/checkpoint.ts";
import { netPreset } from "../../src/nn/config.ts";
import { initWeights } from "../../src/nn/params.ts";
import { ingestBoardspace } from "../../src/sgf/ingest.ts";
import { streamGamePositions } from "../../src/sgf/positions.ts";
import { sgfMembersOfZip } from "../../src/sgf/sources.ts";
import { FUZZ_SEED, settle, settleAsync } from "./settle.ts";
import { splitHeadered, withHeader } from "./json_header.ts";

const RECORDS = new URL("../fixtures/sgf/records/", import.meta.url).pathname;
const ABBO = `${RECORDS}HV-Abbo69-WeakBot-2018-10-28-2007.sgf`;

// ---- checkpoints -------------------------------------------------------------------------------

const tiny = netPreset("tiny");
const weights = initWeights(tiny, 3);
const velocity = new Map(
  weights.specs.filter((s) => s.trainable).map((
    s,
  ) => [s.name, new Float32Array(weights.tensors.get(s.name)!.data.length)]),
);
const good = encodeCheckpoint(weights, { step: 7 }, velocity);
const file = splitHeadered(good, 12);
const header = file.header as { config: Record<string, unknown>; tensors: { name: string }[] };

const headerEdit = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((j) => JSON.stringify(j)),
  fc.tuple(fc.constantFrom("config", "tensors", "meta", "velocity"), fc.jsonValue({ maxDepth: 2 }))
    .map(([k, v]) => JSON.stringify({ ...header, [k]: v })),
  fc.tuple(
    fc.nat(40),
    fc.constantFrom("filters", "blocks", "planes", "moves"),
    fc.oneof(fc.integer(), fc.constant(1e12)),
  )
    .map(([_, k, v]) => JSON.stringify({ ...header, config: { ...header.config, [k]: v } })),
  fc.tuple(fc.nat(20), fc.array(fc.integer({ min: -2, max: 1 << 20 }), { maxLength: 4 }))
    .map(([i, shape]) => {
      const tensors = header.tensors.map((
        t: { name: string },
        j: number,
      ) => (j === i ? { ...t, shape } : t));
      return JSON.stringify({ ...header, tensors });
    }),
);
const checkpointBytes = fc.oneof(
  fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 })), {
    minLength: 1,
    maxLength: 4,
  })
    .map((flips) => {
      const b = good.slice();
      for (const [at, x] of flips) b[at] ^= x;
      return b;
    }),
  fc.nat(good.length).map((n) => good.slice(0, n)),
  fc.uint8Array({ maxLength: 64 }).map((extra) => new Uint8Array([...good, ...extra])),
  headerEdit.map((json) => withHeader(file, json)),
  fc.uint8Array({ maxLength: 200 }),
);

Deno.test("fuzz: damaged checkpoints load or fail with an error naming the file", () => {
  ok(decodeCheckpoint(good, "good.ckpt").meta.step === 7);
  fc.assert(
    fc.property(checkpointBytes, (bytes) => {
      const r = settle(() => decodeCheckpoint(bytes, "fuzz.ckpt", tiny));
      if (!r.ok) ok(r.error.message.startsWith("fuzz.ckpt: "), r.error.message);
    }),
    { seed: FUZZ_SEED, numRuns: 500 },
  );
});

// ---- game stores ---------------------------------------------------------------------------------

const dir = Deno.makeTempDirSync({ prefix: "kibitz_fuzz_" });
const store0 = `${dir}/seed.jsonl`;
await ingestBoardspace([ABBO], { out: store0 });
const validLine = Deno.readTextFileSync(store0).trim();
const game = JSON.parse(validLine);

const storeLine = fc.oneof(
  fc.constant(validLine),
  fc.jsonValue({ maxDepth: 2 }).map((j) => JSON.stringify(j)),
  fc.tuple(
    fc.constantFrom("id", "moves", "gameType", "result", "source"),
    fc.jsonValue({ maxDepth: 1 }),
  )
    .map(([k, v]) => JSON.stringify({ ...game, [k]: v })),
  fc.array(
    fc.oneof(fc.constantFrom("wQ", "bG1 -wQ", "pass", "wA1 wQ/"), fc.string({ maxLength: 8 })),
    { maxLength: 6 },
  )
    .map((moves) => JSON.stringify({ ...game, id: `x${moves.length}`, moves })),
  fc.string({ maxLength: 30 }),
);

Deno.test("fuzz: game stores with arbitrary lines ingest into, stream, or fail with bad_store", async () => {
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(storeLine, { maxLength: 5 }), async (lines) => {
      const path = `${dir}/s${n++}.jsonl`;
      Deno.writeTextFileSync(path, lines.join("\n") + "\n");
      const before = Deno.readTextFileSync(path);
      const positions = await settleAsync(async () => {
        let count = 0;
        for await (const _ of streamGamePositions(path)) count++;
        return count;
      });
      if (!positions.ok) ok(positions.error.message.length > 0);
      const r = await settleAsync(() => ingestBoardspace([ABBO], { out: path }));
      if (!r.ok) {
        ok(r.error.code === "bad_store" && r.error.message.startsWith(`${path}:`), r.error.message);
        ok(Deno.readTextFileSync(path) === before, "a failed ingest left the store as it was");
      }
      ok(
        ![...Deno.readDirSync(dir)].some((e) =>
          e.name.endsWith(".tmp") || e.name.endsWith(".lock")
        ),
      );
    }),
    { seed: FUZZ_SEED, numRuns: 60 },
  );
});

// ---- zip archives ----------------------------------------------------------------------------------

const zip = zipSync({
  "a.sgf": Deno.readFileSync(ABBO),
  "b/c.sgf": new TextEncoder().encode("(;GM[27];P0[1 done])"),
  "note.txt": new TextEncoder().encode("x"),
});

Deno.test("fuzz: damaged zip archives give members, too_large or bad_zip, never a crash", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.array(fc.tuple(fc.nat(zip.length - 1), fc.integer({ min: 1, max: 255 })), {
          minLength: 1,
          maxLength: 6,
        })
          .map((flips) => {
            const b = zip.slice();
            for (const [at, x] of flips) b[at] ^= x;
            return b;
          }),
        fc.nat(zip.length).map((n) => zip.slice(0, n)),
        fc.uint8Array({ maxLength: 300 }),
      ),
      async (bytes) => {
        const r = await settleAsync(async () => {
          const out = [];
          for await (const m of sgfMembersOfZip(bytes, "fuzz.zip", { maxMemberBytes: 1 << 16 })) {
            out.push(m);
          }
          return out;
        });
        if (!r.ok) {
          ok(r.error.code === "bad_zip" && r.error.message.startsWith("fuzz.zip"), r.error.message);
        } else {
          for (const m of r.value) {
            if ("reason" in m) ok(["too_large", "bad_zip"].includes(m.reason), m.reason);
          }
        }
      },
    ),
    { seed: FUZZ_SEED, numRuns: 400 },
  );
});

globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
