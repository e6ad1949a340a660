import assert from "node:assert/strict";
import { getGpu, storageBuffer } from "../../src/gpu/mod.ts";
import {
  createQuantStore,
  downloadQuantStore,
  encodeAll,
  gpuUpdate,
  QUANT_FORMATS,
  type QuantFormat,
  type QuantStore,
  updateAll,
  type UpdateOp,
  uploadQuantStore,
} from "../../src/quant/mod.ts";
import { xorshift32 } from "../helpers/prng.ts";
import { EDGE_ITERATION, EDGE_SEED, edgeProbes, edgeValues } from "./rounding_edges.ts";

const gpu = await getGpu();

function blockSizes(rand: () => number): number[] {
  // Sizes 1 to 5000 including the awkward ones (odd, word-straddling, a zero-size block).
  const sizes = [1, 2, 3, 5, 7, 8, 9, 31, 0, 4999, 5000, 17];
  for (let i = 0; i < 12; i++) sizes.push(1 + Math.floor(rand() * 700));
  return sizes;
}

function randomValues(n: number, rand: () => number, signed: boolean, scale: number): Float32Array {
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = (signed ? rand() * 2 - 1 : rand()) * scale;
    v[i] = rand() < 0.05 ? 0 : x;
  }
  return v;
}

function assertStoresEqual(cpu: QuantStore, got: QuantStore, what: string): void {
  assert.equal(got.scales.length, cpu.scales.length);
  for (let b = 0; b < cpu.scales.length; b++) {
    if (!Object.is(cpu.scales[b], got.scales[b]) && cpu.scales[b] !== got.scales[b]) {
      assert.fail(`${what}: scale of block ${b}: cpu ${cpu.scales[b]} gpu ${got.scales[b]}`);
    }
  }
  if (cpu.f32 && got.f32) {
    for (let i = 0; i < cpu.n; i++) {
      if (cpu.f32[i] !== got.f32[i]) {
        assert.fail(`${what}: element ${i}: cpu ${cpu.f32[i]} gpu ${got.f32[i]}`);
      }
    }
    return;
  }
  for (let w = 0; w < cpu.words.length; w++) {
    if (cpu.words[w] !== got.words[w]) {
      assert.fail(
        `${what}: word ${w}: cpu ${cpu.words[w].toString(16)} gpu ${got.words[w].toString(16)}`,
      );
    }
  }
}

const CASES: { op: UpdateOp; formats: QuantFormat[]; a: number; c: number }[] = [
  { op: "set", formats: [...QUANT_FORMATS], a: 0, c: 0 },
  { op: "dcfr", formats: ["f32", "i16", "i8", "i4"], a: 0.91, c: 0.5 },
  { op: "plus", formats: ["f32", "i16", "u16", "i8", "u8", "i4", "u4"], a: 0.97, c: 0 },
  { op: "strategy", formats: ["f32", "u16", "u8", "u4"], a: 0.83, c: 0.37 },
];

for (const { op, formats, a, c } of CASES) {
  for (const format of formats) {
    Deno.test({
      name: `quant gpu parity: ${op} on ${format} is bit-exact with the CPU`,
      ignore: gpu === null,
      sanitizeResources: false,
      sanitizeOps: false,
      async fn() {
        const rand = xorshift32(format.length * 7919 + op.length * 104729 + 17);
        const sizes = blockSizes(rand);
        const signed = format.startsWith("i") || format === "f32";
        const cpu = createQuantStore(format, sizes);
        encodeAll(cpu, randomValues(cpu.n, rand, signed && op !== "strategy", 40), {
          seed: 7,
          iteration: 1,
        });
        const g = uploadQuantStore(gpu!, cpu);
        for (let it = 2; it <= 3; it++) {
          const input = randomValues(cpu.n, rand, op !== "strategy", it * 3);
          const key = { seed: 12345, iteration: it };
          updateAll(cpu, op, input, a, c, key);
          const inBuf = storageBuffer(gpu!, input);
          await gpuUpdate(g, op, inBuf, a, c, key);
          inBuf.destroy();
        }
        const got = await downloadQuantStore(g, createQuantStore(format, sizes));
        assertStoresEqual(cpu, got, `${op}/${format}`);
      },
    });
  }
}

for (const format of QUANT_FORMATS.filter((f) => f !== "f32")) {
  Deno.test({
    name: `quant gpu parity: stochastic rounding of ${format} at every threshold edge`,
    ignore: gpu === null,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      // The probes of rounding_edges_test.ts (whose CPU results are checked by hand there); for
      // 16-bit formats the levels up to 256 (higher ones need blocks of ~65,000 elements each).
      const { sizes, probes } = edgeProbes(format, 256);
      const key = { seed: EDGE_SEED, iteration: EDGE_ITERATION, mode: "stochastic" as const };
      const values = edgeValues(format, sizes, probes);
      const cpu = createQuantStore(format, sizes);
      const g = uploadQuantStore(gpu!, cpu);
      updateAll(cpu, "set", values, 0, 0, key);
      const inBuf = storageBuffer(gpu!, values);
      await gpuUpdate(g, "set", inBuf, 0, 0, key);
      inBuf.destroy();
      const got = await downloadQuantStore(g, createQuantStore(format, sizes));
      assertStoresEqual(cpu, got, `edges/${format}`);
    },
  });
}

Deno.test({
  name: "quant gpu: a non-finite update result is reported as an error naming the block",
  ignore: gpu === null,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    for (const format of ["f32", "u8"] as const) {
      const cpu = createQuantStore(format, [4, 4]);
      const g = uploadQuantStore(gpu!, cpu);
      const input = new Float32Array([1, 2, 3, 4, 5, NaN, 7, 8]);
      const inBuf = storageBuffer(gpu!, input);
      await assert.rejects(
        () => gpuUpdate(g, "set", inBuf, 0, 0, { seed: 1, iteration: 1 }),
        (e: unknown) =>
          e instanceof Error && /non-finite/.test(e.message) &&
          (format === "f32" || /block 1/.test(e.message)),
      );
      inBuf.destroy();
    }
  },
});
