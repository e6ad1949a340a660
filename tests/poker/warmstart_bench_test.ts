import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { parseWarmstartArgs, WARMSTART_USAGE } from "../../src/poker/warmstart_bench.ts";

Deno.test("bench warmstart arguments: defaults, lists, and errors that name the argument and the valid values", () => {
  const d = parseWarmstartArgs([]);
  assert.deepEqual(d.methods, ["cold", "regrets", "values"]);
  assert.deepEqual(d.storages, ["f32", "8"]);
  assert.equal(d.t2 && !d.f1, true);
  assert.deepEqual(d.regretWeights, [30]);
  const f = parseWarmstartArgs(["spots=f1", "methods=cold,values", "max=120", "threads=8"]);
  assert.equal(f.f1 && !f.t2, true);
  assert.deepEqual(f.methods, ["cold", "values"]);
  assert.equal(f.maxIts, 120);
  assert.equal(f.threads, 8);
  assert.equal(parseWarmstartArgs(["f1"]).t2 && parseWarmstartArgs(["f1"]).f1, true);
  const bad = (args: string[], re: RegExp) =>
    assert.throws(
      () => parseWarmstartArgs(args),
      (e) => isKibitzError(e, "bad_args") && re.test(e.message) && /--help/.test(e.message),
    );
  bad(["methods=cold,x"], /methods=cold,x: unknown value "x"; valid: cold, regrets, values/);
  bad(["storage=16"], /storage=16: unknown value "16"; valid: f32, 8/);
  bad(["spots=t3"], /spots=t3: unknown value "t3"; valid: t2, f1/);
  bad(["max=0"], /max=0: must be a positive number/);
  bad(["epsilon=2"], /epsilon=2: must be in 0\.\.1/);
  bad(["resets=never"], /resets=never: unknown value "never"; valid: continue, none, keep/);
  bad(["foo"], /unknown argument "foo"/);
  bad(["foo=1"], /unknown argument "foo"/);
  // Every key the parser accepts is in the --help text.
  for (const k of ["spots", "methods", "storage", "max", "every", "small", "threads", "rweight"]) {
    assert.match(WARMSTART_USAGE, new RegExp(`^${k}=`, "m"));
  }
  for (const k of ["weight", "resets", "rresets", "subtrees", "responses", "epsilon", "offline"]) {
    assert.match(WARMSTART_USAGE, new RegExp(`^${k}=`, "m"));
  }
  for (const k of ["new", "from", "csv"]) assert.match(WARMSTART_USAGE, new RegExp(`^${k}=`, "m"));
});
