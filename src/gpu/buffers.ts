import type { GpuContext } from "./device.ts";

/** Typed arrays that can be uploaded to the GPU. */
export type GpuArray = Float32Array | Uint32Array | Int32Array | Uint8Array | Uint16Array;

const STORAGE = 0x80 | 0x8 | 0x4; // STORAGE | COPY_DST | COPY_SRC

function padded(bytes: number): number {
  return Math.max(4, Math.ceil(bytes / 4) * 4);
}

/** Creates a storage buffer holding `data` (or `byteLength` zero bytes), padded to 4 bytes. */
export function storageBuffer(
  ctx: GpuContext,
  data: GpuArray | number,
  label = "storage",
): GPUBuffer {
  const size = padded(typeof data === "number" ? data : data.byteLength);
  const buffer = ctx.device.createBuffer({
    size,
    usage: STORAGE,
    label,
    mappedAtCreation: typeof data !== "number",
  });
  if (typeof data !== "number") {
    new Uint8Array(buffer.getMappedRange()).set(
      new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    );
    buffer.unmap();
  }
  return buffer;
}

/** Creates a uniform buffer from raw words (u32/f32 views over one ArrayBuffer), padded to 16 bytes. */
export function uniformBuffer(ctx: GpuContext, data: ArrayBuffer, label = "params"): GPUBuffer {
  const size = Math.max(16, Math.ceil(data.byteLength / 16) * 16);
  const buffer = ctx.device.createBuffer({
    size,
    usage: 0x40 | 0x8,
    label,
    mappedAtCreation: true,
  });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data));
  buffer.unmap();
  return buffer;
}

/** Writes `data` into an existing buffer at `offset` bytes. */
export function writeBuffer(ctx: GpuContext, buffer: GPUBuffer, data: GpuArray, offset = 0): void {
  let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  // WebGPU takes no views of SharedArrayBuffer (worker storage): copy those first.
  if (!(bytes.buffer instanceof ArrayBuffer)) bytes = bytes.slice();
  if (bytes.byteLength % 4 === 0) {
    ctx.device.queue.writeBuffer(buffer, offset, bytes as Uint8Array<ArrayBuffer>);
  } else {
    const tmp = new Uint8Array(padded(bytes.byteLength));
    tmp.set(bytes);
    ctx.device.queue.writeBuffer(buffer, offset, tmp);
  }
}

/**
 * Maps a MAP_READ staging buffer whose copies are submitted, returns what `read` takes from its
 * mapped range (which is gone afterwards: `read` copies what it keeps) and destroys it, also when
 * the map fails (a lost device), so a failed readback leaks nothing.
 */
export async function mapStaging<T>(
  staging: GPUBuffer,
  read: (mapped: ArrayBuffer) => T,
): Promise<T> {
  try {
    await staging.mapAsync(0x1); // READ
    return read(staging.getMappedRange());
  } finally {
    staging.destroy(); // unmaps too
  }
}

/** mapStaging's copy of the first `byteLength` bytes (all by default). */
export function readStaging(
  staging: GPUBuffer,
  byteLength = staging.size,
): Promise<ArrayBuffer> {
  return mapStaging(staging, (mapped) => mapped.slice(0, byteLength));
}

/** Copies a buffer back to the CPU (one round trip: batch work before calling this). */
export async function readBuffer(
  ctx: GpuContext,
  buffer: GPUBuffer,
  byteLength = buffer.size,
): Promise<ArrayBuffer> {
  const size = padded(byteLength);
  const staging = ctx.device.createBuffer({ size, usage: 0x1 | 0x8 }); // MAP_READ | COPY_DST
  const enc = ctx.device.createCommandEncoder();
  enc.copyBufferToBuffer(buffer, 0, staging, 0, size);
  ctx.device.queue.submit([enc.finish()]);
  return await readStaging(staging, byteLength);
}
