// WGSL specialization by text replacement fails loudly when the text it edits is gone (no adapter).
import assert from "node:assert/strict";
import { isKibitzError } from "../../src/errors.ts";
import { matmulSource, specializeWgsl } from "../../src/nn/gpu/kernels.ts";

Deno.test("specializeWgsl replaces exactly one occurrence and rejects none or several", () => {
  assert.equal(
    specializeWgsl("a; const X = 1u; b;", "const X = 1u;", "const X = 4u;", "t"),
    "a; const X = 4u; b;",
  );
  assert.throws(
    () => specializeWgsl("const Y = 1u;", "const X = 1u;", "const X = 4u;", "shader.wgsl"),
    (e) => isKibitzError(e, "wgsl_specialize") && /shader\.wgsl: .*found none/.test(e.message),
  );
  assert.throws(
    () => specializeWgsl("x x", "x", "y", "twice"),
    (e) => isKibitzError(e, "wgsl_specialize") && /found several/.test(e.message),
  );
});

Deno.test("the matmul shader still holds the tile constant it is specialized by", () => {
  const src = matmulSource(4);
  assert.match(src, /^const TW = 4u;$/m);
  assert.doesNotMatch(src, /const TW = 16u;/);
  assert.match(matmulSource(16), /^const TW = 16u;$/m);
});
