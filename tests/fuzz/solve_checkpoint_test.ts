// Property-based fuzzing of a solve's checkpoint read back (deno task solve --resume): bytes
// flipped, cut or extended, a rewritten header with a valid checksum, or arbitrary bytes. Every case
// restores or fails with a KibitzError naming the file.
import fc from "fast-check";
import { deepEqual, ok } from "node:assert/strict";
import { solverStateViews } from "../../src/cfr/solver_state.ts";
import { checkpointSink, openCheckpoint } from "../../src/poker/checkpoint.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { prepareSpot, runSolve } from "../../src/poker/solve.ts";
import { riverSpot } from "../helpers/spots.ts";
import { FUZZ_SEED, settleAsync } from "./settle.ts";
import { splitHeadered, withHeader } from "./json_header.ts";

const dir = Deno.makeTempDirSync({ prefix: "kibitz_fuzz_ckpt_" });
const path = `${dir}/checkpoint.bin`;
const config = parseSolveConfig(
  `${riverSpot("66%", "")}[solver]\nthreads = 1\nregret_bits = 8\nstrategy_bits = 8\n` +
    "max_iterations = 10\ntarget_exploitability_pct = 0\n",
);
const CPU = { backend: "cpu" as const, reason: "fuzz" };
const made = await runSolve(prepareSpot(config), {
  backend: CPU,
  checkpoint: checkpointSink({
    path,
    config: "fuzz",
    limits: { maxIterations: 10, targetPct: 0 },
    minutes: 0,
    keep: true,
    info: () => {},
  }, "solve"),
});
const good = Deno.readFileSync(path);
const file = splitHeadered(good, 16);
const header = file.header as {
  state: { stores: object[]; discount: object } & Record<string, unknown>;
} & Record<string, unknown>;
// The solver the cases restore into (a resumed solve's, before its first iteration).
const target = (await runSolve(prepareSpot(config), { backend: CPU })).solver;

const value = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.integer(),
  fc.constantFrom(1e300, -1, 0.5, null, "x", true, [], {}),
);
const headerEdit = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((j) => JSON.stringify(j)),
  fc.tuple(
    fc.constantFrom("config", "phase", "state", "seconds", "reached", "gridFrom", "limits"),
    value,
  ).map(([k, v]) => JSON.stringify({ ...header, [k]: v })),
  fc.tuple(fc.constantFrom("algorithm", "iteration", "nodeHandVisits", "discount"), value)
    .map(([k, v]) => JSON.stringify({ ...header, state: { ...header.state, [k]: v } })),
  fc.tuple(fc.constantFrom("alpha", "beta", "gamma", "shift", "resetPow4", "resetFrom"), value)
    .map(([k, v]) =>
      JSON.stringify({
        ...header,
        state: { ...header.state, discount: { ...header.state.discount, [k]: v } },
      })
    ),
  fc.tuple(
    fc.nat(2),
    fc.constantFrom("name", "format", "n", "blocks", "wordBytes", "scaleBytes"),
    value,
  ).map(([i, k, v]) => {
    const stores = header.state.stores.map((s: object, j: number) =>
      j === i ? { ...s, [k]: v } : s
    );
    return JSON.stringify({ ...header, state: { ...header.state, stores } });
  }),
);
const checkpointBytes = fc.oneof(
  fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 })), {
    minLength: 1,
    maxLength: 4,
  }).map((flips) => {
    const b = good.slice();
    for (const [at, x] of flips) b[at] ^= x;
    return b;
  }),
  fc.nat(good.length).map((n) => good.slice(0, n)),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((extra) =>
    new Uint8Array([...good, ...extra])
  ),
  headerEdit.map((json) => withHeader(file, json)),
  fc.uint8Array({ maxLength: 200 }),
);

Deno.test("fuzz: damaged solve checkpoints restore or fail with an error naming the file", async () => {
  try {
    await (await openCheckpoint(path)).restore(target);
    deepEqual(solverStateViews(target), solverStateViews(made.solver));
    await fc.assert(
      fc.asyncProperty(checkpointBytes, async (bytes) => {
        Deno.writeFileSync(path, bytes);
        const r = await settleAsync(async () => (await openCheckpoint(path)).restore(target));
        if (!r.ok) return ok(r.error.message.startsWith(`${path}: `), r.error.message);
        // Restored: a solver that can run (counts are counts, the discount's fields are numbers).
        ok(Number.isSafeInteger(target.iteration) && target.iteration >= 0);
        for (const [k, v] of Object.entries(made.solver.discount)) {
          const got = (target.discount as unknown as Record<string, unknown>)[k];
          ok(typeof got === typeof v, `discount ${k}: ${JSON.stringify(got)}`);
        }
      }),
      { seed: FUZZ_SEED, numRuns: 400 },
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
