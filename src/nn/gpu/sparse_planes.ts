// The GPU side of the sparse plane upload (src/nn/sparse_planes.ts): a kernel that writes each
// position's planes from their bases, then the cells that differ, into the plan's input (f32) or
// into its input cast's output (f16 storage, or its f32-bound emulation).
import type { GpuContext } from "../../gpu/device.ts";
import { storageBuffer, uniformBuffer } from "../../gpu/buffers.ts";
import type { Planes } from "../planes.ts";
import { packSparsePlanes, sparseLayout } from "../sparse_planes.ts";
import { type ConvStorage, f16Prelude } from "./conv_gemm.ts";

/**
 * WGSL of `expand`: one workgroup of 256 a position (positions past 65,535 along y). Its threads
 * fill the position's planes with their bases, meet at a barrier, then write its entries (each
 * cell at most once, so the writes do not race).
 */
export function expandPlanesSource(storage: ConvStorage): string {
  const prelude = storage === "f32" ? "alias s16 = f32;\n\n" : f16Prelude(storage);
  return `${prelude}struct Params { n: u32, planes: u32, area: u32, first: u32 }

@group(0) @binding(0) var<storage, read> sp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<s16>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn expand(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let pos = wid.y * 65535u + wid.x;
  if (pos >= p.n) { return; }
  let per = p.planes * p.area;
  let at = pos * per;
  for (var c = 0u; c < p.planes; c++) {
    let v = s16(bitcast<f32>(sp[pos * p.planes + c]));
    for (var i = lid.x; i < p.area; i += 256u) { out[at + c * p.area + i] = v; }
  }
  storageBarrier();
  let offsets = p.n * p.planes;
  let end = sp[offsets + pos + 1u];
  for (var e = sp[offsets + pos] + lid.x; e < end; e += 256u) {
    let w = p.first + 2u * e;
    out[at + sp[w]] = s16(bitcast<f32>(sp[w + 1u]));
  }
}
`;
}

/**
 * A plan's sparse upload: the buffer calls pack their planes into (sparseLayout's words for the
 * plan's positions), the expansion's parameters, and its bind groups by target buffer.
 */
export class SparseUpload {
  readonly layout: ReturnType<typeof sparseLayout>;
  /** Where a call's packed planes go on the GPU. */
  readonly buffer: GPUBuffer;
  /** The host side of the packing (reused call to call). */
  readonly words: Uint32Array;
  private readonly params: GPUBuffer;
  private readonly groups = new Map<GPUBuffer, GPUBindGroup>();

  constructor(
    private readonly ctx: GpuContext,
    readonly n: number,
    readonly planes: number,
    readonly area: number,
  ) {
    this.layout = sparseLayout(n, planes, area);
    this.words = new Uint32Array(this.layout.words);
    this.buffer = storageBuffer(ctx, this.words.byteLength, "nn.input.sparse");
    this.params = uniformBuffer(
      ctx,
      new Uint32Array([n, planes, area, this.layout.first]).buffer,
      "nn.input.sparse.params",
    );
  }

  /** Packs `src` (n positions); the words to upload, or null where it is too dense to pay. */
  pack(src: Planes): Uint32Array | null {
    const used = packSparsePlanes(src, this.n, this.planes, this.area, this.words);
    return used < 0 ? null : this.words.subarray(0, used);
  }

  /**
   * Encodes, in a pass of its own, the expansion of the uploaded words into `target` by
   * `pipeline` (expandPlanes for f32 storage, expandPlanesH for an f16 plan's s16).
   */
  encode(enc: GPUCommandEncoder, pipeline: GPUComputePipeline, target: GPUBuffer): void {
    let group = this.groups.get(target);
    if (!group) {
      group = this.ctx.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: this.buffer } },
          { binding: 1, resource: { buffer: target } },
          { binding: 2, resource: { buffer: this.params } },
        ],
      });
      this.groups.set(target, group);
    }
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(Math.min(this.n, 65535), Math.ceil(this.n / 65535), 1);
    pass.end();
  }

  /** Frees its buffers. */
  destroy(): void {
    this.buffer.destroy();
    this.params.destroy();
    this.groups.clear();
  }
}
