// How long the GPU's queue spends on the copies around a call: queue.writeBuffer's upload (flushed
// ahead of the next submit's commands) and a copy into a mappable buffer for the readback. Calls in
// flight pay these between one call's work and the next's (session 31, H200: batch-256 inference
// calls with 2 in flight each lost about 2.1 ms to the plan's GPU time). Each copy is timed as the
// gap between two timestamped passes, against the same passes without it. The first pass spins
// long enough that the host's part of writeBuffer (its memcpy) ends before the GPU gets there.
import type { GpuContext } from "./device.ts";
import { readBuffer, storageBuffer, uniformBuffer } from "./buffers.ts";
import { computePipeline } from "./pipeline.ts";

/** Bytes of each copy a call makes: its inputs' upload and its outputs' readback (multiples of 4). */
export interface CallCopies {
  upload: number;
  readback: number;
}

/** GPU ms the queue spends on each copy (median over the repetitions). */
export interface QueueCopyTimes {
  /** queue.writeBuffer into a storage buffer. */
  uploadMs: number;
  /** copyBufferToBuffer from a storage buffer into a MAP_READ buffer. */
  readbackMs: number;
}

/** A one-thread pass of `p.n` dependent multiply-adds (entry `spin`): a pass of predictable length. */
export const SPIN_WGSL = `struct P { n: u32, _a: u32, _b: u32, _c: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<uniform> p: P;

// One thread runs n dependent multiply-adds: a pass of predictable length that does not load the GPU.
@compute @workgroup_size(1)
fn spin() {
  var x = 1.0;
  for (var i = 0u; i < p.n; i++) { x = fma(x, 0.9999999, 1e-7); }
  if (x == 42.0) { out[0] = x; }
}
`;

/** The buffer usages the GPU timeline probes (this one, submit_gap.ts) create their buffers with. */
export const QUERY_RESOLVE = 0x200, COPY_SRC = 0x4, COPY_DST = 0x8, MAP_READ = 0x1, STORAGE = 0x80;

/** The middle of `xs` (the upper one of the two for an even count): a probe's repetitions. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Times the queue's upload and readback copies of a call (`bytes`) on an adapter with timestamp
 * queries (null without): `reps` gaps with the copy and as many without, medians subtracted. About
 * 4 reps + 1 readback floors of wall time, plus the spins (`spinMs` each).
 */
export async function queueCopyTimes(
  ctx: GpuContext,
  bytes: CallCopies,
  reps = 5,
  spinMs = 20,
): Promise<QueueCopyTimes | null> {
  if (!ctx.timestamps) return null;
  const size = Math.max(bytes.upload, bytes.readback, 4);
  const pipeline = await computePipeline(ctx, SPIN_WGSL, "spin", {}, "copy-probe.spin");
  const out = storageBuffer(ctx, 16, "copy-probe.out");
  const dst = ctx.device.createBuffer({ size, usage: STORAGE | COPY_DST | COPY_SRC });
  const staging = ctx.device.createBuffer({ size, usage: MAP_READ | COPY_DST });
  const data = new Float32Array(bytes.upload / 4).fill(0.5);
  const resolve = ctx.device.createBuffer({ size: 32, usage: QUERY_RESOLVE | COPY_SRC });
  const qs = ctx.device.createQuerySet({ type: "timestamp", count: 4 });
  const made: { destroy(): void }[] = [out, dst, staging, resolve, qs];
  // One bind group per spin length (three in all: the calibration run, the timed spin, 1).
  const binds = new Map<number, GPUBindGroup>();
  const bindFor = (n: number) => {
    let bind = binds.get(n);
    if (!bind) {
      const params = uniformBuffer(ctx, new Uint32Array([n, 0, 0, 0]).buffer, "copy-probe.p");
      made.push(params);
      bind = ctx.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer: out } }, {
          binding: 1,
          resource: { buffer: params },
        }],
      });
      binds.set(n, bind);
    }
    return bind;
  };
  const pass = (enc: GPUCommandEncoder, first: number, n: number) => {
    const bind = bindFor(n);
    const p = enc.beginComputePass({
      timestampWrites: {
        querySet: qs,
        beginningOfPassWriteIndex: first,
        endOfPassWriteIndex: first + 1,
      },
    });
    p.setPipeline(pipeline);
    p.setBindGroup(0, bind);
    p.dispatchWorkgroups(1);
    p.end();
  };
  // ns of the first pass and from its end to the second's start: across two submits with the
  // upload written between them, or in one command buffer with the readback copy between the
  // passes (`copy` false: the same without it).
  const gap = async (n: number, kind: "upload" | "readback", copy: boolean): Promise<number[]> => {
    const e1 = ctx.device.createCommandEncoder();
    pass(e1, 0, n);
    let e2 = e1;
    if (kind === "readback") {
      if (copy) e1.copyBufferToBuffer(dst, 0, staging, 0, bytes.readback);
    } else {
      ctx.device.queue.submit([e1.finish()]);
      if (copy) ctx.device.queue.writeBuffer(dst, 0, data);
      e2 = ctx.device.createCommandEncoder();
    }
    pass(e2, 2, 1);
    e2.resolveQuerySet(qs, 0, 4, resolve, 0);
    ctx.device.queue.submit([e2.finish()]);
    const t = new BigUint64Array(await readBuffer(ctx, resolve, 32));
    return [Number(t[1] - t[0]), Number(t[2] - t[1])];
  };
  try {
    // The spin's length: scaled from a first run to about spinMs.
    const n0 = 1 << 16;
    const [ns0] = await gap(n0, "readback", false);
    const n = Math.max(n0, Math.min(2 ** 31, Math.round(n0 * (spinMs * 1e6) / Math.max(ns0, 1))));
    const ms = async (kind: "upload" | "readback", copy: boolean) => {
      const out: number[] = [];
      for (let r = 0; r < reps; r++) out.push((await gap(n, kind, copy))[1] / 1e6);
      return median(out);
    };
    const upload = (await ms("upload", true)) - (await ms("upload", false));
    const readback = (await ms("readback", true)) - (await ms("readback", false));
    return { uploadMs: Math.max(0, upload), readbackMs: Math.max(0, readback) };
  } finally {
    for (const b of made) b.destroy();
  }
}
