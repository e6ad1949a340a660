import assert from "node:assert/strict";

// Every ```ts block of the README must run as written from the repository root.
const readme = await Deno.readTextFile("README.md");
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);

Deno.test("README: has library examples", () => {
  assert.ok(blocks.length >= 2, `found ${blocks.length} ts blocks`);
});

blocks.forEach((code, i) => {
  Deno.test({
    name: `README example ${i + 1} runs as written`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const file = `./.readme_example_${i}_${Deno.pid}.ts`;
      await Deno.writeTextFile(file, code);
      try {
        const r = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--check", file],
          stdout: "piped",
          stderr: "piped",
          env: { NO_COLOR: "1" },
        }).output();
        const err = new TextDecoder().decode(r.stderr);
        assert.equal(r.code, 0, `example ${i + 1} failed:\n${code}\n${err}`);
      } finally {
        await Deno.remove(file).catch(() => {});
      }
    },
  });
});
