import type { GpuContext } from "../../gpu/device.ts";
import { mapStaging, storageBuffer } from "../../gpu/buffers.ts";
import { numel, type Shaped } from "../tensor.ts";

/**
 * A tensor on the GPU: a shape and a storage buffer of at least numel values, f32 unless `half`
 * (f16 storage of an f16 inference plan: 2 bytes a value, or 4 when the f16 path is emulated).
 */
export interface GpuTensor extends Shaped {
  readonly buffer: GPUBuffer;
  readonly size: number;
  readonly half?: boolean;
}

/** A pool's buffers at one moment (see TensorPool.snapshot). */
export interface PoolSnapshot {
  readonly held: ReadonlySet<GPUBuffer>;
  readonly all: ReadonlySet<GPUBuffer>;
}

/** What a recording took from a pool (see TensorPool.takenSince). */
export interface PoolTaken {
  readonly made: readonly GPUBuffer[];
  readonly reused: readonly GPUBuffer[];
}

/**
 * Hands out storage buffers by size and takes them back, so the buffers of dead activations are
 * reused by later ops (and by later plans: a plan writes its scratch before reading it).
 */
export class TensorPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private readonly all: GPUBuffer[] = [];
  /** Bytes held by the pool (live and free). */
  bytes = 0;

  constructor(private readonly ctx: GpuContext) {}

  /**
   * A tensor of `shape`, reusing a free buffer of the same size when there is one; `halfBytes`
   * (2, or 4 when emulated) makes it an f16-storage tensor.
   */
  acquire(
    shape: readonly number[],
    label = "nn.tensor",
    halfBytes: 2 | 4 | null = null,
  ): GpuTensor {
    const size = numel(shape);
    const bytes = Math.max(4, Math.ceil(size * (halfBytes ?? 4) / 4) * 4);
    const list = this.free.get(bytes);
    let buffer = list?.pop();
    if (!buffer) {
      buffer = storageBuffer(this.ctx, bytes, label);
      this.all.push(buffer);
      this.bytes += bytes;
    }
    return halfBytes
      ? { shape: [...shape], buffer, size, half: true }
      : { shape: [...shape], buffer, size };
  }

  /** Returns a tensor's buffer to the pool. */
  release(t: GpuTensor): void {
    const bytes = t.buffer.size;
    let list = this.free.get(bytes);
    if (!list) this.free.set(bytes, list = []);
    if (!list.includes(t.buffer)) list.push(t.buffer);
  }

  /** The buffers handed out and not returned, and every buffer the pool has (a snapshot). */
  snapshot(): PoolSnapshot {
    const free = new Set([...this.free.values()].flat());
    return { held: new Set(this.all.filter((b) => !free.has(b))), all: new Set(this.all) };
  }

  /**
   * What a recording took since `before`: the buffers created since (`made`, returned to the pool
   * or not), and the older ones it holds that were free then (`reused`: scratch of earlier plans).
   */
  takenSince(before: PoolSnapshot): PoolTaken {
    const now = this.snapshot();
    return {
      made: this.all.filter((b) => !before.all.has(b)),
      reused: this.all.filter((b) => before.all.has(b) && now.held.has(b) && !before.held.has(b)),
    };
  }

  /**
   * Undoes what a failed recording took: the buffers it made are destroyed and dropped (after a
   * failed allocation some are invalid), and the ones it reused go back to the free list, where
   * the earlier plans whose scratch they are still expect them.
   */
  giveBack(taken: PoolTaken): void {
    const gone = new Set(taken.made);
    for (const b of gone) {
      b.destroy();
      this.bytes -= b.size;
    }
    const keep = this.all.filter((b) => !gone.has(b));
    this.all.length = 0;
    this.all.push(...keep);
    for (const [size, list] of this.free) this.free.set(size, list.filter((b) => !gone.has(b)));
    for (const buffer of taken.reused) this.release({ shape: [], buffer, size: 0 });
  }

  /** Destroys every buffer the pool created. */
  destroy(): void {
    for (const b of this.all) b.destroy();
    this.all.length = 0;
    this.free.clear();
    this.bytes = 0;
  }
}

/** Uploads host values into a new (unpooled) GPU tensor. */
export function uploadTensor(
  ctx: GpuContext,
  shape: readonly number[],
  data: Float32Array,
  label = "nn.param",
): GpuTensor {
  return { shape: [...shape], buffer: storageBuffer(ctx, data, label), size: data.length };
}

/**
 * Copies several tensors back in one submit and one map (readbacks cost a round trip each, so
 * they are batched). With `enc`, the copies go after the work already encoded there and the whole
 * is one submit: a call's plan and its readback then cost the host one submission, not two.
 */
export async function readTensors(
  ctx: GpuContext,
  ts: readonly GpuTensor[],
  enc: GPUCommandEncoder = ctx.device.createCommandEncoder(),
): Promise<Float32Array[]> {
  const offsets: number[] = [];
  let total = 0;
  for (const t of ts) {
    offsets.push(total);
    total += Math.ceil(t.size * 4 / 256) * 256;
  }
  const staging = ctx.device.createBuffer({ size: Math.max(4, total), usage: 0x1 | 0x8 });
  ts.forEach((t, i) => {
    if (t.size > 0) enc.copyBufferToBuffer(t.buffer, 0, staging, offsets[i], t.size * 4);
  });
  ctx.device.queue.submit([enc.finish()]);
  return await mapStaging(
    staging,
    (mapped) =>
      ts.map((t, i) => new Float32Array(mapped.slice(offsets[i], offsets[i] + t.size * 4))),
  );
}
