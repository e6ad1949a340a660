// The stochastic-rounding threshold, exhaustively at its edges (CPU; the GPU twin is compared in
// gpu_parity_test.ts on the same probes): u < frac rounds up, u = frac does not.
import assert from "node:assert/strict";
import {
  createQuantStore,
  encodeAll,
  formatInfo,
  loadLevel,
  QUANT_FORMATS,
  roundingUniform,
} from "../../src/quant/mod.ts";
import {
  EDGE_ITERATION,
  EDGE_SEED,
  edgeProbes,
  edgeValues,
  nextF32,
  ZERO_U_ITERATION,
} from "./rounding_edges.ts";

const INT_FORMATS = QUANT_FORMATS.filter((f) => f !== "f32");

for (const format of INT_FORMATS) {
  Deno.test(`quant ${format}: stochastic rounding at every threshold edge (frac = u, just above, just below, 0)`, () => {
    const { sizes, probes } = edgeProbes(format);
    const s = createQuantStore(format, sizes);
    encodeAll(s, edgeValues(format, sizes, probes), {
      seed: EDGE_SEED,
      iteration: EDGE_ITERATION,
      mode: "stochastic",
    });
    const { levels } = formatInfo(format);
    let checked = 0;
    for (const p of probes) {
      const e = s.offsets[p.block];
      assert.equal(s.scales[p.block], levels, "inverse scale exactly 1");
      assert.equal(loadLevel(s, e), levels);
      assert.equal(loadLevel(s, e + p.element), p.want, `${format} ${p.what} (t = ${p.value})`);
      for (let k = 1; k < p.element; k++) assert.equal(loadLevel(s, e + k), 0);
      checked++;
    }
    assert.ok(checked >= 4 * 14, `${checked} probes`);
  });
}

Deno.test("quant: frac = u = 0 (t an exact level and a zero uniform) stays on that level", () => {
  assert.equal(roundingUniform(EDGE_SEED, ZERO_U_ITERATION, 0, 1), 0);
  for (const format of INT_FORMATS) {
    const { signed, levels } = formatInfo(format);
    for (const L of [signed ? -levels : 0, 0, 1, levels - 1, levels]) {
      const s = createQuantStore(format, [2]);
      encodeAll(s, new Float32Array([levels, L]), {
        seed: EDGE_SEED,
        iteration: ZERO_U_ITERATION,
        mode: "stochastic",
      });
      assert.equal(loadLevel(s, 1), L, `${format} level ${L}`);
    }
  }
});

Deno.test("edge probe helpers: next float steps and probes cover every 8-bit level", () => {
  assert.equal(nextF32(1, 1), 1 + 2 ** -23);
  assert.equal(nextF32(1, -1), 1 - 2 ** -24);
  assert.equal(nextF32(-2, 1), -2 + 2 ** -23);
  const { probes } = edgeProbes("i8");
  assert.equal(new Set(probes.map((p) => p.want)).size, 255); // -127 .. 127
  assert.equal(probes.length, 4 * 254);
});
