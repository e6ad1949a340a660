// Runs a fixture script (tests/fixtures/...) in a process of its own, for checks that must not
// share the test process's state (one that destroys the shared GPU device), and reads the JSON
// object it prints last.
import assert from "node:assert/strict";

/**
 * Runs `tests/fixtures/<path>` with `args`; fails on a non-zero exit; the last line's JSON, of the
 * shape `T` the fixture prints (or `{ skipped: true }` where it found no GPU).
 */
export async function runFixture<T>(
  path: string,
  ...args: string[]
): Promise<T | { skipped: true }> {
  const script = new URL(`../fixtures/${path}`, import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
}
