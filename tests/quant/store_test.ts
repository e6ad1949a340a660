import assert from "node:assert/strict";
import {
  createQuantStore,
  decodeAll,
  decodeBlock,
  decodeBlockPositiveSums,
  encodeAll,
  encodeBlock,
  formatInfo,
  isKibitzError,
  loadLevel,
  payloadWords,
  QUANT_FORMATS,
  regretFormat,
  storeBytes,
  strategyFormat,
  updateAll,
  updateStrategy,
} from "../../mod.ts";
import { xorshift32 } from "../helpers/prng.ts";

for (const format of QUANT_FORMATS) {
  Deno.test(`quant ${format}: round-trip error within half a level (nearest) and one level (stochastic)`, () => {
    const info = formatInfo(format);
    const rand = xorshift32(99);
    const sizes = [1, 3, 64, 257, 1000];
    const s = createQuantStore(format, sizes);
    const values = new Float32Array(s.n);
    for (let i = 0; i < s.n; i++) values[i] = (info.signed ? rand() * 2 - 1 : rand()) * 50;
    for (const mode of ["nearest", "stochastic"] as const) {
      encodeAll(s, values, { seed: 1, iteration: 3, mode });
      const back = decodeAll(s);
      for (let b = 0; b < s.blocks; b++) {
        let max = 0;
        for (let e = s.offsets[b]; e < s.offsets[b + 1]; e++) {
          max = Math.max(max, Math.abs(values[e]));
        }
        const step = info.levels === 0 ? 0 : max / info.levels;
        // A level is max/levels wide; allow f32 rounding of the decode on top.
        const bound = (mode === "nearest" ? 0.5 : 1) * step + 1e-6 * max;
        for (let e = s.offsets[b]; e < s.offsets[b + 1]; e++) {
          const err = Math.abs(back[e] - values[e]);
          assert.ok(
            err <= bound,
            `${format}/${mode} block ${b} element ${e}: error ${err} > ${bound}`,
          );
        }
      }
    }
  });
}

Deno.test("quant: stochastic rounding is unbiased (mean error within 3 standard errors of zero)", () => {
  for (const format of ["i8", "u8", "i4", "u4"] as const) {
    const info = formatInfo(format);
    // One block [scale, x]: x sits between two levels, so every encode rounds it up or down.
    const x = info.levels === 7 || info.levels === 15 ? 0.3137 : 0.51234;
    const s = createQuantStore(format, [2]);
    const values = new Float32Array([1, x]);
    const trials = 20000;
    let sum = 0, sumSq = 0;
    const out = new Float32Array(2);
    for (let seed = 0; seed < trials; seed++) {
      encodeBlock(s, 0, values, 0, { seed, iteration: 1 });
      decodeBlock(s, 0, out);
      const err = out[1] - x;
      sum += err;
      sumSq += err * err;
    }
    const mean = sum / trials;
    const sd = Math.sqrt(sumSq / trials - mean * mean);
    const se = sd / Math.sqrt(trials);
    assert.ok(sd > 0, `${format}: stochastic rounding never varied`);
    assert.ok(Math.abs(mean) <= 3 * se, `${format}: mean error ${mean} vs 3 SE ${3 * se}`);
  }
});

Deno.test("quant: the noise depends on block and element, not only the iteration", () => {
  const s = createQuantStore("u8", [1000, 1000]);
  const values = new Float32Array(2000).fill(0.5);
  values[0] = 1;
  values[1000] = 1;
  encodeAll(s, values, { seed: 3, iteration: 5 });
  let same = 0;
  for (let i = 1; i < 1000; i++) if (loadLevel(s, i) === loadLevel(s, 1000 + i)) same++;
  // Independent fair coin flips agree about half the time; identical noise would agree always.
  assert.ok(same > 400 && same < 600, `blocks agree on ${same} of 999 roundings`);
});

Deno.test("quant: vanishing update with nearest rounding, kept alive by stochastic rounding (seed 001 3.2)", () => {
  // An 8-bit cumulative strategy block [big, small]; each iteration adds a little to `small`, far below
  // one level (big/255). Nearest rounding drops every addition; stochastic rounding keeps the expectation.
  const iterations = 400;
  const add = 0.1; // one level is 100/255 ~ 0.39
  const expected = 10 + iterations * add;
  const results: Record<string, number> = {};
  for (const mode of ["nearest", "stochastic"] as const) {
    const s = createQuantStore("u8", [2]);
    encodeBlock(s, 0, new Float32Array([100, 10]), 0, { seed: 1, iteration: 0, mode: "nearest" });
    const sigma = new Float32Array([0, add]);
    for (let t = 1; t <= iterations; t++) {
      updateStrategy(s, 0, sigma, 0, 1, 1, { seed: 9, iteration: t, mode });
    }
    const out = new Float32Array(2);
    decodeBlock(s, 0, out);
    results[mode] = out[1];
  }
  assert.ok(Math.abs(results.nearest - 10) < 0.4, `nearest moved: ${results.nearest}`);
  assert.ok(
    Math.abs(results.stochastic - expected) < 0.15 * iterations * add,
    `stochastic reached ${results.stochastic}, expected about ${expected}`,
  );
});

Deno.test("quant: 4-bit layout puts the even element in the low nibble of each byte", () => {
  const s = createQuantStore("u4", [5]);
  encodeBlock(s, 0, new Float32Array([15, 1, 2, 3, 4]), 0, {
    seed: 0,
    iteration: 0,
    mode: "nearest",
  });
  const bytes = new Uint8Array(s.words.buffer);
  assert.equal(bytes[0], 15 | (1 << 4));
  assert.equal(bytes[1], 2 | (3 << 4));
  assert.equal(bytes[2], 4);
  assert.equal(s.scales[0], 15);
  const i4 = createQuantStore("i4", [3]);
  encodeBlock(i4, 0, new Float32Array([-7, 7, -1]), 0, { seed: 0, iteration: 0, mode: "nearest" });
  assert.deepEqual([loadLevel(i4, 0), loadLevel(i4, 1), loadLevel(i4, 2)], [-7, 7, -1]);
  assert.equal(new Uint8Array(i4.words.buffer)[0], (-7 & 15) | (7 << 4));
});

Deno.test("quant: blocks straddling words and odd lengths keep their neighbours intact", () => {
  for (const format of QUANT_FORMATS) {
    const sizes = [3, 1, 5, 2, 7];
    const s = createQuantStore(format, sizes);
    const values = new Float32Array(s.n).map((_, i) => (i % 3) + 1);
    encodeAll(s, values, { seed: 0, iteration: 0, mode: "nearest" });
    // Re-encode block 2 only and check the others did not move.
    const before = decodeAll(s);
    encodeBlock(s, 2, new Float32Array([9, 8, 7, 6, 5]), 0, {
      seed: 0,
      iteration: 0,
      mode: "nearest",
    });
    const after = decodeAll(s);
    for (let b = 0; b < s.blocks; b++) {
      if (b === 2) continue;
      for (let e = s.offsets[b]; e < s.offsets[b + 1]; e++) {
        assert.equal(after[e], before[e], `${format} element ${e}`);
      }
    }
    assert.ok(Math.abs(after[s.offsets[2]] - 9) < 1e-5, `${format}: ${after[s.offsets[2]]}`);
  }
});

Deno.test("quant: a zero block stores scale 0 and decodes to zeros", () => {
  for (const format of QUANT_FORMATS) {
    const s = createQuantStore(format, [4, 3]);
    encodeAll(s, new Float32Array([0, 0, 0, 0, 1, -0, 2]), { seed: 0, iteration: 0 });
    if (s.scales.length) assert.equal(s.scales[0], 0);
    assert.deepEqual([...decodeAll(s).slice(0, 4)], [0, 0, 0, 0]);
  }
});

Deno.test("quant: NaN and infinite inputs are rejected with a clear error", () => {
  for (const format of QUANT_FORMATS) {
    for (const bad of [NaN, Infinity, -Infinity]) {
      const s = createQuantStore(format, [3]);
      assert.throws(
        () => encodeBlock(s, 0, new Float32Array([1, bad, 2]), 0, { seed: 0, iteration: 0 }),
        (e: unknown) =>
          isKibitzError(e, "non_finite") && /block 0, element 1/.test((e as Error).message),
      );
      // Updates that overflow to infinity are rejected the same way.
      assert.throws(
        () =>
          updateAll(s, "strategy", new Float32Array([3e38, 3e38, 3e38]), 1, 3, {
            seed: 0,
            iteration: 1,
          }),
        (e: unknown) => isKibitzError(e, "non_finite"),
      );
    }
  }
});

Deno.test("quant: memory accounting is exact for every format", () => {
  assert.equal(storeBytes("f32", 10, 3), 40);
  assert.equal(storeBytes("i16", 10, 3), 20 + 12);
  assert.equal(storeBytes("u16", 11, 3), 24 + 12);
  assert.equal(storeBytes("u8", 9, 2), 12 + 8);
  assert.equal(storeBytes("i4", 17, 1), 12 + 4);
  assert.equal(storeBytes("u4", 16, 4), 8 + 16);
  for (const format of QUANT_FORMATS) {
    const s = createQuantStore(format, [5, 0, 13, 1]);
    assert.equal(s.words.byteLength + s.scales.byteLength, storeBytes(format, 19, 4), format);
    assert.equal(s.words.length, payloadWords(format, 19));
  }
});

Deno.test("quant: bits map to formats, and bad widths are errors", () => {
  assert.equal(regretFormat(8, true), "i8");
  assert.equal(regretFormat(8, false), "u8");
  assert.equal(regretFormat(4, false), "u4");
  assert.equal(strategyFormat(16), "u16");
  assert.throws(() => regretFormat(12, true), (e: unknown) => isKibitzError(e, "bad_format"));
  assert.throws(() => strategyFormat(2), (e: unknown) => isKibitzError(e, "bad_format"));
});

Deno.test("quant: byte-aligned formats decode through their lanes exactly as the word layout says", () => {
  for (const format of ["i16", "u16", "i8", "u8"] as const) {
    const { levels, signed } = formatInfo(format);
    const s = createQuantStore(format, [5, 2, 7]);
    const next = xorshift32(7);
    const values = new Float32Array(s.n).map(() => (signed ? 2 * next() - 1 : next()) * 3);
    encodeAll(s, values, { seed: 3, iteration: 1, mode: "stochastic" });
    const out = decodeAll(s);
    for (let b = 0; b < s.blocks; b++) {
      const d = Math.fround(s.scales[b] * Math.fround(1 / levels));
      for (let e = s.offsets[b]; e < s.offsets[b + 1]; e++) {
        // loadLevel reads the packed word with shifts: an independent view of the same bits.
        assert.equal(out[e], Math.fround(loadLevel(s, e) * d), `${format} element ${e}`);
      }
    }
    // An update whose result is not finite throws and leaves the block as it was.
    const before = [...s.words];
    assert.throws(
      () => updateStrategy(s, 1, new Float32Array([1, NaN]), 0, 1, 1, { seed: 0, iteration: 2 }),
      (e: unknown) => isKibitzError(e, "non_finite") && /block 1, element 1/.test(String(e)),
    );
    assert.deepEqual([...s.words], before);
  }
});

Deno.test("quant: decodeBlockPositiveSums gives decodeBlock's values and per-column positive sums", () => {
  for (const format of QUANT_FORMATS) {
    const { signed } = formatInfo(format);
    const s = createQuantStore(format, [6, 12, 0]);
    const next = xorshift32(11);
    const values = new Float32Array(s.n).map(() => (signed ? 2 * next() - 1 : next()) * 5);
    encodeAll(s, values, { seed: 1, iteration: 4 });
    for (let b = 0; b < s.blocks; b++) {
      const len = s.offsets[b + 1] - s.offsets[b], width = 3;
      const want = new Float32Array(len), got = new Float32Array(len);
      decodeBlock(s, b, want);
      const sums = new Float64Array(width).fill(0.25),
        expected = new Float64Array(width).fill(0.25);
      for (let e = 0; e < len; e++) {
        expected[e % width] = Math.fround(expected[e % width] + Math.max(want[e], 0)); // f32 sums
      }
      decodeBlockPositiveSums(s, b, got, width, sums);
      assert.deepEqual([...got], [...want], `${format} block ${b}`);
      assert.deepEqual([...sums], [...expected], `${format} block ${b} sums`);
    }
  }
});
