import assert from "node:assert/strict";
import {
  computePipeline,
  dispatch,
  getGpu,
  gpuSelfTest,
  isKibitzError,
  readBuffer,
  resolveBackend,
  storageBuffer,
  timeComputePass,
} from "../../mod.ts";

const gpu = await getGpu();
const opts = { ignore: gpu === null, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name:
    "gpu: the adapter report names the adapter and the device limits are raised to the adapter's",
  ...opts,
  fn() {
    const r = gpu!.report;
    assert.ok(r.description.length > 0 || r.vendor.length > 0);
    assert.equal(typeof r.isFallback, "boolean");
    assert.equal(
      r.limits.maxStorageBufferBindingSize,
      gpu!.adapter.limits.maxStorageBufferBindingSize,
    );
    assert.equal(
      r.limits.maxComputeInvocationsPerWorkgroup,
      gpu!.adapter.limits.maxComputeInvocationsPerWorkgroup,
    );
  },
});

Deno.test({
  name: "gpu: the self-test kernel's results match the CPU",
  ...opts,
  async fn() {
    const r = await gpuSelfTest(gpu!, 70_001);
    assert.equal(r.mismatches, 0, r.firstMismatch ?? "");
    assert.ok(r.ok);
  },
});

Deno.test({
  name: "gpu: a WGSL error throws with the compiler's message and line instead of yielding zeros",
  ...opts,
  async fn() {
    const bad = "@compute @workgroup_size(1)\nfn main() {\n  let x: u32 = undefined_thing;\n}\n";
    await assert.rejects(
      () => computePipeline(gpu!, bad, "main", {}, "bad.wgsl"),
      (e: unknown) => isKibitzError(e, "shader_error") && /bad\.wgsl:3/.test((e as Error).message),
    );
    await assert.rejects(
      () => computePipeline(gpu!, "@compute @workgroup_size(1) fn main() {}", "nope"),
      (e: unknown) => isKibitzError(e, "shader_error"),
    );
  },
});

Deno.test({
  name: "gpu: pipelines are cached, dispatch and readback round-trip, timing reports a duration",
  ...opts,
  async fn() {
    const src = `@group(0) @binding(0) var<storage, read_write> x: array<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&x)) { x[g.x] = x[g.x] * 2u + 1u; }
}`;
    const p1 = await computePipeline(gpu!, src);
    const p2 = await computePipeline(gpu!, src);
    assert.equal(p1, p2);
    const buf = storageBuffer(gpu!, new Uint32Array([1, 2, 3, 4, 5]));
    await dispatch(gpu!, p1, [buf], 1);
    assert.deepEqual([...new Uint32Array(await readBuffer(gpu!, buf, 20))], [3, 5, 7, 9, 11]);
    const bg = gpu!.device.createBindGroup({
      layout: p1.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: buf } }],
    });
    const t = await timeComputePass(gpu!, (pass) => {
      pass.setPipeline(p1);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(1);
    });
    assert.ok(t.wallMs > 0);
    assert.ok(t.gpuMs === null || t.gpuMs >= 0);
    assert.deepEqual([...new Uint32Array(await readBuffer(gpu!, buf, 8))], [7, 11]);
    buf.destroy();
  },
});

Deno.test("gpu: backend names resolve, and unknown names are clear errors", async () => {
  assert.equal(await resolveBackend("cpu"), "cpu");
  assert.equal(await resolveBackend("auto"), gpu ? "gpu" : "cpu");
  await assert.rejects(() => resolveBackend("tpu"), (e: unknown) => isKibitzError(e, "bad_args"));
});
