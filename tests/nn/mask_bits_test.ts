// The packed legal-move mask the GPU reads (src/nn/mask_bits.ts): bit i of row r, rows in whole
// words, legal where the float mask is > 0 (as the CPU graph reads it).
import assert from "node:assert/strict";
import { allLegalMask, maskWords, packMask, randomMask } from "../../src/nn/mask_bits.ts";
import { maxLegal } from "../../src/nn/compact_probs.ts";
import { rng } from "../../src/nn/tensor.ts";

Deno.test("maskWords: whole 32-bit words a row", () => {
  assert.deepEqual([1, 31, 32, 33, 5489].map(maskWords), [1, 1, 1, 2, 172]);
});

Deno.test("packMask: bit i & 31 of word (i >> 5) of each row; > 0 is legal", () => {
  const moves = 70, rows = 3, words = maskWords(moves);
  const mask = new Float32Array(rows * moves);
  const legal = [[0, 31, 32, 69], [5], []];
  legal.forEach((ms, r) => ms.forEach((m) => mask[r * moves + m] = 1));
  // Neither negatives, zeros nor NaN are legal; any positive value is.
  mask[1 * moves + 6] = -1;
  mask[1 * moves + 7] = NaN;
  mask[1 * moves + 40] = 0.25;
  const out = packMask(mask, rows, moves);
  assert.equal(out.length, rows * words);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < moves; i++) {
      const bit = (out[r * words + (i >> 5)] >>> (i & 31)) & 1;
      assert.equal(bit, mask[r * moves + i] > 0 ? 1 : 0, `row ${r} move ${i}`);
    }
    // The bits past the last move stay clear.
    for (let i = moves; i < words * 32; i++) {
      assert.equal((out[r * words + (i >> 5)] >>> (i & 31)) & 1, 0, `row ${r} pad ${i}`);
    }
  }
  assert.equal(out[0], (1 | (1 << 31)) >>> 0);
  // An output buffer is overwritten row by row (stale words do not survive).
  const reused = new Uint32Array(rows * words).fill(0xffffffff);
  assert.deepEqual(packMask(mask, rows, moves, reused), out);
});

Deno.test("allLegalMask: every move of every row", () => {
  const m = allLegalMask(2, 33);
  assert.deepEqual([...m], [0xffffffff, 1, 0xffffffff, 1]);
});

Deno.test("randomMask draws the counts asked for, capped at the moves", () => {
  const mask = randomMask(4, 9, (r) => [0, 4, 8, 20][r], rng(2));
  assert.ok(mask.every((v) => v === 0 || v === 1));
  const bits = packMask(mask, 4, 9);
  assert.deepEqual([0, 1, 2, 3].map((r) => maxLegal(bits.subarray(r), 1, 9)), [0, 4, 8, 9]);
});
