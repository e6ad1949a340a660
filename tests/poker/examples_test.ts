import assert from "node:assert/strict";
import { parseSolveConfig } from "../../src/poker/config.ts";

// Every example config shipped in examples/ must load without errors.
for (const entry of Deno.readDirSync("examples")) {
  if (!entry.name.endsWith(".toml")) continue;
  Deno.test(`examples/${entry.name} is a valid solve config`, async () => {
    const text = await Deno.readTextFile(`examples/${entry.name}`);
    const config = parseSolveConfig(text, `examples/${entry.name}`);
    assert.ok(config);
  });
}
