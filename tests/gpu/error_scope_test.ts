// withValidation: the scope is popped on every exit, so none is left to swallow later errors, and
// concurrent callers each see their own errors.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { withValidation } from "../../src/gpu/error_scope.ts";
import { shaderModule } from "../../src/gpu/pipeline.ts";

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };

/** A validation error: a buffer with no usage. */
const invalid = () => ctx!.device.createBuffer({ size: 4, usage: 0 });

/** Fails if an error scope is left pushed (popping an empty stack rejects). */
async function assertNoScopeLeft(): Promise<void> {
  await assert.rejects(ctx!.device.popErrorScope(), "an error scope was left pushed");
}

Deno.test("withValidation returns the value and the scope's error", opts, async () => {
  const ok = await withValidation(ctx!, () => 5);
  assert.deepEqual(ok, { value: 5, error: null });
  const bad = await withValidation(ctx!, () => (invalid(), 6));
  assert.equal(bad.value, 6);
  assert.ok(bad.error);
  await assertNoScopeLeft();
});

Deno.test("withValidation pops its scope when the function throws", opts, async () => {
  await assert.rejects(
    withValidation(ctx!, () => {
      invalid();
      throw new Error("shape check");
    }),
    /shape check/,
  );
  await assertNoScopeLeft();
  await assert.rejects(
    withValidation(ctx!, async () => {
      await Promise.resolve();
      throw new Error("readback failed");
    }),
    /readback failed/,
  );
  await assertNoScopeLeft();
});

Deno.test("concurrent synchronous callers each get their own error", opts, async () => {
  const [a, b, c] = await Promise.all([
    withValidation(ctx!, () => 1),
    withValidation(ctx!, () => (invalid(), 2)),
    withValidation(ctx!, () => 3),
  ]);
  assert.equal(a.error, null);
  assert.ok(b.error);
  assert.equal(c.error, null);
  await assertNoScopeLeft();
});

Deno.test(
  "shader modules compiled concurrently: the bad one fails, the good one not",
  opts,
  async () => {
    const good = "@compute @workgroup_size(1) fn main() {}";
    const bad = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";
    const [g, b] = await Promise.allSettled([
      shaderModule(ctx!, good, "scope.good"),
      shaderModule(ctx!, bad, "scope.bad"),
    ]);
    assert.equal(g.status, "fulfilled");
    assert.equal(b.status, "rejected");
    assert.match(String((b as PromiseRejectedResult).reason), /scope\.bad/);
    await assertNoScopeLeft();
  },
);
