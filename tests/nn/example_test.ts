// Runs the README's network example (the block that builds `netPreset("small")`) in this process,
// with "./mod.ts" pointed at the checkout, so the documented training step is the tested one.
import assert from "node:assert/strict";

const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
const block = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  .find((b) => b.includes('netPreset("small")') && b.includes("trainer.train("));

Deno.test({
  name: "README example: a training step of the small model from a script importing mod.ts",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    assert.ok(block, "the README has no network training example");
    const mod = new URL("../../mod.ts", import.meta.url).href;
    const code = block.replaceAll('"./mod.ts"', JSON.stringify(mod));
    const lines: string[] = [];
    const log = console.log;
    console.log = (...a: unknown[]) => lines.push(a.join(" "));
    try {
      await import(`data:application/typescript;base64,${btoa(code)}`);
    } finally {
      console.log = log;
    }
    assert.match(lines[0], /^(gpu|cpu): loss \d+\.\d{4} at lr 0\.01$/);
    assert.match(lines[1], /^best move \d+ value -?\d\.\d{3}$/);
  },
});
