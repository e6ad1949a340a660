// bench gpu-mem: every access pattern moves exactly the data it claims (copies copy, reads sum,
// writes fill), over a count that leaves partial workgroups and a partial grid-stride block.
import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import { readBuffer, storageBuffer } from "../../src/gpu/buffers.ts";
import { memPatterns, patternName, patternPass, suite } from "../../src/gpu/mem_bench.ts";

const gpu = await getGpu();
const opts = { ignore: gpu === null, sanitizeResources: false, sanitizeOps: false };

Deno.test("gpu-mem: each pattern copies, sums or fills exactly", opts, async () => {
  const ctx = gpu!;
  const floats = 4 * 70_001; // 70,001 vec4s or 280,004 scalars: no size divides evenly
  const data = Float32Array.from({ length: floats }, (_, i) => (i % 97) - 48);
  for (const p of memPatterns()) {
    const n = floats / (p.vec4 ? 4 : 1), w = p.vec4 ? 4 : 1;
    const src = storageBuffer(ctx, data, "test.src");
    const dst = storageBuffer(ctx, floats * 4, "test.dst");
    const pp = await patternPass(ctx, p, src, dst, n);
    const enc = ctx.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pp.pipeline);
    pass.setBindGroup(0, pp.bind);
    pass.dispatchWorkgroups(...pp.groups);
    pass.end();
    ctx.device.queue.submit([enc.finish()]);
    const got = new Float32Array(await readBuffer(ctx, dst, floats * 4));
    const name = patternName(p);
    if (p.kind === "copy") {
      assert.deepEqual(got, data, name);
    } else if (p.kind === "write") {
      for (let i = 0; i < floats; i++) assert.equal(got[i], Math.floor(i / w), `${name} at ${i}`);
    } else {
      const threads = pp.groups[0] * pp.groups[1] * p.workgroup;
      for (let t = 0; t < Math.min(threads, n); t++) {
        for (let l = 0; l < w; l++) {
          let want = 0;
          for (let j = 0; j < p.perThread; j++) {
            const e = t + j * threads;
            if (e < n) want += data[e * w + l];
          }
          assert.equal(got[t * w + l], want, `${name} thread ${t} lane ${l}`);
        }
      }
    }
    pp.uniform.destroy();
    src.destroy();
    dst.destroy();
  }
});

Deno.test("gpu-mem: the suite reports every pattern and rejects bad arguments", opts, async () => {
  const out: string[] = [];
  const r = await suite.run({
    full: false,
    backend: "gpu",
    args: ["mib=1", "reps=1"],
    log: (l) => out.push(l),
  });
  assert.equal(r.tables[0].rows.length, memPatterns().length);
  for (const row of r.tables[0].rows) assert.ok(Number(row[5]) > 0, `${row[0]}: GB/s`);
  for (const bad of [["mib=0"], ["reps=x"], ["size=3"], ["mib"]]) {
    await assert.rejects(
      suite.run({ full: false, backend: "gpu", args: bad, log: () => {} }),
      /gpu-mem/,
      bad.join(" "),
    );
  }
});
