// The readback of GpuNet's inference calls (ReadbackQueue): eager, deferred and grouped map requests give
// the bytes readTensors gives, staging buffers are reused, the all-ones mask upload is skipped only
// while it is still in the buffer, and the WebGPU API counter counts and restores.
import assert from "node:assert/strict";
import { getGpu, type GpuContext } from "../../src/gpu/device.ts";
import { storageBuffer } from "../../src/gpu/buffers.ts";
import { countGpuCalls } from "../../src/gpu/api_count.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet, GpuNet, type NetOutputs } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { InferencePipeline } from "../../src/nn/pipeline.ts";
import { syntheticBatch } from "../../src/nn/train.ts";
import {
  defaultMapGroup,
  GROUP_DEPTH,
  hostPhases,
  MAP_GROUP,
  MAP_MODES,
  type MapMode,
  parseMapGroup,
  ReadbackQueue,
} from "../../src/nn/gpu/readback.ts";
import { type GpuTensor, readTensors } from "../../src/nn/gpu/tensor.ts";
import { maxDiff } from "./helpers.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const ctx = await getGpu();
const opts = { ignore: !ctx, sanitizeResources: false, sanitizeOps: false };
const tiny = NET_PRESETS.tiny;

function tensor(data: Float32Array): GpuTensor {
  return { shape: [data.length], buffer: storageBuffer(ctx!, data, "test"), size: data.length };
}

Deno.test(
  "ReadbackQueue: every map mode reads what readTensors reads, reusing staging",
  opts,
  async () => {
    const a = tensor(Float32Array.from({ length: 70 }, (_, i) => i * 0.5 - 3));
    const b = tensor(new Float32Array([7, -1, 2.5]));
    const want = await readTensors(ctx!, [a, b]);
    // Every mode, and the grouped one in groups of 4 with 8 calls in flight (groups need 6).
    const configs = [
      ...MAP_MODES.map((m) => [m, MAP_GROUP, 5] as const),
      ["grouped", 4, 8] as const,
    ];
    for (const [mode, group, depth] of configs) {
      const q = new ReadbackQueue(ctx!, mode);
      q.mapGroup = group;
      const p = hostPhases();
      q.profile = p;
      // `depth` calls in flight, then as many more: at most `depth` staging buffers ever exist.
      for (let round = 0; round < 2; round++) {
        const got = await Promise.all(
          Array.from({ length: depth }, () => q.submit(ctx!.device.createCommandEncoder(), [a, b])),
        );
        for (const g of got) {
          assert.deepEqual(g[0], want[0]);
          assert.deepEqual(g[1], want[1]);
        }
      }
      assert.equal(q.buffers, depth, `${mode} ${group}: staging buffers`);
      assert.equal(p.calls, 2 * depth);
      assert.ok(p.encode >= 0 && p.submit > 0 && p.readout > 0, JSON.stringify(p));
      q.destroy();
    }
    a.buffer.destroy();
    b.buffer.destroy();
  },
);

Deno.test("ReadbackQueue: a call pending at destroy is rejected", opts, async () => {
  const a = tensor(new Float32Array([1, 2]));
  const q = new ReadbackQueue(ctx!, "deferred");
  const p1 = q.submit(ctx!.device.createCommandEncoder(), [a]); // alone: requested at once
  const p2 = q.submit(ctx!.device.createCommandEncoder(), [a]); // deferred
  q.destroy();
  await assert.rejects(p2, /disposed/);
  await p1.catch(() => {}); // its map may be aborted by the destroy
  a.buffer.destroy();
});

Deno.test(
  "GpuNet: calls with and without masks, in every map mode, in flight, uploaded directly or ahead, equal the CPU net",
  opts,
  async () => {
    const w = initWeights(tiny, 3);
    const cpu = new CpuNet(w);
    // Three positions: the packed mask's rows (src/nn/mask_bits.ts) at their own words.
    const masked = syntheticBatch(tiny, 3, 11);
    assert.ok(masked.mask!.some((v) => v === 0), "the synthetic mask has illegal moves");
    const bare = { size: 3, planes: masked.planes };
    // The all-ones mask stays in the plan's buffer across calls without one, and a masked call
    // in between must overwrite it (and the next bare call restore it).
    const order = [bare, bare, masked, bare, masked, masked, bare, bare];
    const want: NetOutputs[] = [];
    for (const b of order) want.push(await cpu.infer(b));
    // Every map mode, with the inputs uploaded directly and ahead (GpuNet.uploadAhead).
    let direct: NetOutputs[] | null = null;
    for (const mapMode of MAP_MODES) {
      for (const ahead of [false, true]) {
        const net = await GpuNet.create(ctx!, w, { mapMode });
        assert.equal(net.mapMode, mapMode);
        net.uploadAhead = ahead;
        const pipe = new InferencePipeline(net, 4);
        const got = await Promise.all(order.map((b) => pipe.evaluateAsync(b)));
        const one: NetOutputs[] = [];
        for (const b of order) one.push(await net.infer(b));
        const what = `${mapMode}${ahead ? ", ahead" : ""}`;
        got.forEach((g, i) => {
          assert.ok(maxDiff(g.probs, want[i].probs) < 1e-5, `${what} call ${i} probs`);
          assert.ok(maxDiff(g.value, want[i].value) < 1e-5, `${what} call ${i} value`);
          // In flight and one at a time, ahead and direct: the same bits.
          assert.equal(maxDiff(g.probs, one[i].probs), 0);
          assert.equal(maxDiff(g.value, one[i].value), 0);
          if (direct) assert.equal(maxDiff(g.probs, direct[i].probs), 0, `${what} call ${i}`);
        });
        direct ??= got;
        net.dispose();
      }
    }
  },
);

Deno.test("countGpuCalls counts WebGPU method calls and restores the methods", opts, () => {
  const proto = (globalThis as unknown as { GPUQueue: { prototype: object } }).GPUQueue.prototype;
  const before = Object.getOwnPropertyDescriptor(proto, "writeBuffer")!.value;
  const buf = storageBuffer(ctx!, 16, "count");
  const c = countGpuCalls();
  ctx!.device.queue.writeBuffer(buf, 0, new Float32Array([1, 2]));
  ctx!.device.queue.writeBuffer(buf, 8, new Float32Array([3]));
  ctx!.device.createCommandEncoder().finish();
  const counts = c.stop();
  assert.equal(counts.get("GPUQueue.writeBuffer"), 2);
  assert.equal(counts.get("GPUDevice.createCommandEncoder"), 1);
  assert.equal(counts.get("GPUCommandEncoder.finish"), 1);
  assert.equal(Object.getOwnPropertyDescriptor(proto, "writeBuffer")!.value, before);
  ctx!.device.queue.writeBuffer(buf, 0, new Float32Array([4]));
  assert.equal(counts.get("GPUQueue.writeBuffer"), 2, "stopped: no more counting");
  buf.destroy();
});

/** A stand-in device that logs encoder finishes, submits and map requests in order. */
function loggingContext(log: string[]): GpuContext {
  const device = {
    createBuffer: (d: { size: number }) => ({
      size: d.size,
      mapAsync: () => {
        log.push("map");
        return Promise.resolve();
      },
      getMappedRange: () => new ArrayBuffer(d.size),
      unmap() {},
      destroy() {},
    }),
    createCommandEncoder: () => ({
      copyBufferToBuffer() {},
      finish: () => (log.push("finish"), {}),
    }),
    queue: { submit: () => log.push("submit") },
  };
  return { device } as unknown as GpuContext;
}

/** A queue on the logging device in `mode`, and `submit(now)`: one call of a 2-float tensor. */
function loggedQueue(mode: MapMode) {
  const t = { shape: [2], size: 2, buffer: {} } as unknown as GpuTensor;
  const log: string[] = [];
  const ctx = loggingContext(log);
  const q = new ReadbackQueue(ctx, mode);
  const submit = (now = false) => q.submit(ctx.device.createCommandEncoder(), [t], 0, now);
  return { log, q, submit };
}

Deno.test("ReadbackQueue: deferred requests a call's map after the next call is encoded", async () => {
  for (const mode of ["eager", "deferred"] as const) {
    const { log, q, submit } = loggedQueue(mode);
    const calls = [0, 1, 2].map(() => submit());
    await Promise.all(calls); // the last call's map: by the timer in deferred mode
    const one = ["finish", "submit", "map"];
    assert.deepEqual(
      log,
      mode === "eager" ? [...one, ...one, ...one] : [
        ...one, // alone in flight: nothing to overlap, so its map at once
        "finish",
        "submit", // the second call's map is deferred...
        "finish",
        "map", // ...until the third is encoded: the wait (in Deno) covers the second call only
        "submit",
        "map", // the third's, by the timer
      ],
      mode,
    );
    assert.equal(q.buffers, 3);
    q.destroy();
  }
});

Deno.test("ReadbackQueue: grouped requests maps every second call once 4 are in flight", async () => {
  const { log, q, submit } = loggedQueue("grouped");
  assert.equal(GROUP_DEPTH, 4);
  const calls = [0, 1, 2, 3, 4, 5].map(() => submit());
  await Promise.all(calls);
  assert.deepEqual(log, [
    ...["finish", "submit", "map"], // alone: at once
    ...["finish", "submit"], // 1 in flight: deferred as in the deferred mode...
    ...["finish", "map", "submit"],
    ...["finish", "map", "submit"], // ...until 4 are in flight:
    ...["finish", "submit"], // one unrequested call: submitted behind it, no wait
    ...["finish", "map", "map", "submit"], // two: both requested (one wait)
    "map", // the last one's, by the timer
  ]);
  q.destroy();
});

Deno.test("ReadbackQueue: grouped in groups of 4 requests maps every fourth call once 6 are in flight", async () => {
  const { log, q, submit } = loggedQueue("grouped");
  assert.equal(q.mapGroup, MAP_GROUP);
  q.mapGroup = 4;
  const calls = Array.from({ length: 12 }, () => submit());
  await Promise.all(calls);
  assert.deepEqual(log, [
    ...["finish", "submit", "map"], // alone: at once
    ...["finish", "submit"], // 1 in flight: deferred...
    ...[0, 1, 2, 3].flatMap(() => ["finish", "map", "submit"]), // ...until 6 are in flight:
    ...[0, 1, 2].flatMap(() => ["finish", "submit"]), // up to 3 unrequested calls, no wait
    ...["finish", "map", "map", "map", "map", "submit"], // four: all requested (one wait)
    ...["finish", "submit", "finish", "submit"],
    ...["map", "map", "map"], // the last ones', by the timer
  ]);
  q.destroy();
});

Deno.test("map group: KIBITZ_NN_MAP_GROUP and GpuNet.mapGroup take integers from 2 to 64", () => {
  assert.equal(parseMapGroup("4"), 4);
  assert.equal(parseMapGroup(64), 64);
  for (const bad of ["1", "65", "2.5", "x", -3]) {
    assert.throws(() => parseMapGroup(bad), /integer from 2 to 64, got/);
  }
  // The variable's values (passed in: the process environment is shared with the test modules
  // running beside this one).
  assert.equal(defaultMapGroup("6"), 6);
  assert.throws(() => defaultMapGroup("0"), /KIBITZ_NN_MAP_GROUP/);
  assert.equal(defaultMapGroup(""), MAP_GROUP);
  assert.equal(defaultMapGroup(undefined), MAP_GROUP);
});

Deno.test("ReadbackQueue: a call submitted as the last one maps at once", async () => {
  const { log, q, submit } = loggedQueue("deferred");
  const calls = [false, false, true].map((last) => submit(last));
  // Its map right after its submit: not after the deferred timer.
  assert.deepEqual(log, [
    ...["finish", "submit", "map"],
    ...["finish", "submit"],
    ...["finish", "map", "submit", "map"],
  ]);
  await Promise.all(calls);
  assert.equal(log.length, 9, "nothing left for the timer");
  q.destroy();
});
