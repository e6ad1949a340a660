// div_rn in shaders/quant/codec.wgsl is the one place the GPU divides: the block's inverse scale
// levels / max. It must be the correctly rounded f32 quotient on every device (the CPU twin is
// Math.fround(a / b), exact for f32 operands), whatever the driver does to float expressions.
import assert from "node:assert/strict";
import { computePipeline, dispatch, getGpu, readBuffer, storageBuffer } from "../../src/gpu/mod.ts";
import codec from "../../shaders/quant/codec.wgsl" with { type: "text" };
import { xorshift32 } from "../helpers/prng.ts";

const gpu = await getGpu();

const PROBE = `${codec}
@group(0) @binding(0) var<storage, read> num: array<f32>;
@group(0) @binding(1) var<storage, read> den: array<f32>;
@group(0) @binding(2) var<storage, read_write> quo: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&quo)) { quo[gid.x] = div_rn(num[gid.x], den[gid.x]); }
}
`;

Deno.test({
  name: "quant gpu: div_rn is the correctly rounded quotient (levels / block max and random pairs)",
  ignore: !gpu,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const ctx = gpu!;
    const rand = xorshift32(7);
    const n = 1 << 16;
    const a = new Float32Array(n), b = new Float32Array(n);
    const levels = [32767, 65535, 127, 255, 7, 15];
    for (let i = 0; i < n; i++) {
      // Half the cases are the real use (levels over a block max anywhere from 2^-100 to 2^100);
      // the rest random positive normals whose quotient stays normal, ties and exact cases included.
      if (i % 2 === 0) {
        a[i] = levels[i % levels.length];
        b[i] = Math.fround((0.5 + rand()) * 2 ** Math.floor(rand() * 200 - 100));
      } else {
        a[i] = Math.fround((1 + rand()) * 2 ** Math.floor(rand() * 60 - 30));
        b[i] = i % 7 === 1 ? Math.fround(a[i] / 2 ** (i % 5)) : Math.fround(1 + rand());
      }
    }
    const pipeline = await computePipeline(ctx, PROBE, "main");
    const bn = storageBuffer(ctx, a), bd = storageBuffer(ctx, b), bq = storageBuffer(ctx, n * 4);
    await dispatch(ctx, pipeline, [bn, bd, bq], Math.ceil(n / 64));
    const got = new Float32Array(await readBuffer(ctx, bq, n * 4));
    let bad = 0, first = "";
    for (let i = 0; i < n; i++) {
      const want = Math.fround(a[i] / b[i]);
      if (got[i] !== want) {
        if (bad++ === 0) first = `${a[i]} / ${b[i]}: gpu ${got[i]}, correctly rounded ${want}`;
      }
    }
    for (const buf of [bn, bd, bq]) buf.destroy();
    assert.equal(bad, 0, `${bad} of ${n} quotients differ; first: ${first}`);
  },
});
