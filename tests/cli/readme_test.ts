import assert from "node:assert/strict";

// Every ```ts block of the README must type-check and run as written from the repository root.
const readme = await Deno.readTextFile("README.md");
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
const files = blocks.map((_, i) => `./.readme_example_${i}_${Deno.pid}.ts`);

async function deno(args: string[]): Promise<{ code: number; err: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: r.code, err: new TextDecoder().decode(r.stderr) };
}

Deno.test({
  name: "README: every TypeScript example type-checks and runs as written",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    assert.ok(blocks.length >= 2, `found ${blocks.length} ts blocks`);
    try {
      for (let i = 0; i < blocks.length; i++) await Deno.writeTextFile(files[i], blocks[i]);
      // One type-check of all examples together (each alone would re-check the whole library).
      const check = await deno(["check", ...files]);
      assert.equal(check.code, 0, `README examples fail to type-check:\n${check.err}`);
      for (let i = 0; i < blocks.length; i++) {
        await t.step(`example ${i + 1}`, async () => {
          const r = await deno(["run", "-A", "--no-check", files[i]]);
          assert.equal(r.code, 0, `example ${i + 1} failed:\n${blocks[i]}\n${r.err}`);
        });
      }
    } finally {
      for (const f of files) await Deno.remove(f).catch(() => {});
    }
  },
});
