// `deno task bench gpu-mem`: the adapter's memory bandwidth through WebGPU by access pattern. The
// network's memory-bound kernels (batch norm, Winograd transforms) ran at 0.9-1.8 TB/s on an H200
// whose plain copy kernel made 1.48 TB/s and whose HBM gives about 4.8; this suite measures what a
// kernel's shape buys: loads in flight per thread (1 to 8 vec4s, all issued before any store),
// vec4 against scalar, the workgroup size, a grid-stride loop, read-only and write-only passes.
import { type BenchReport, type BenchSuite, newReport } from "../bench/report.ts";
import { benchKeyValues, benchPositiveInt } from "../bench/report.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, type GpuContext, requireGpu } from "./device.ts";
import { workgroups1d } from "./dispatch.ts";
import { computePipeline } from "./pipeline.ts";
import { bestOfThreePasses } from "./timing.ts";
import { uniformBuffer } from "./buffers.ts";

/** One access pattern: what each thread moves and how the threads are laid out. */
export interface MemPattern {
  /** copy: read and write; read: read and sum (one vec4 written per thread); write: store only. */
  kind: "copy" | "read" | "write";
  /** Elements a thread handles, all loads issued before the first store. */
  perThread: number;
  /** vec4<f32> elements, or scalar f32. */
  vec4: boolean;
  workgroup: number;
  /** A fixed grid of `gridStride` workgroups looping over the buffer (0: one pass, no loop). */
  gridStride: number;
}

/** The pattern's name in the report, e.g. `copy vec4 x4 wg256`. */
export function patternName(p: MemPattern): string {
  return `${p.kind} ${p.vec4 ? "vec4" : "f32"} x${p.perThread} wg${p.workgroup}${
    p.gridStride ? ` grid-stride ${p.gridStride}` : ""
  }`;
}

/**
 * WGSL of one pattern: element j of thread t is t + j T (T threads in all), so each of the thread's
 * loads is coalesced across the workgroup; a grid-stride pattern repeats that over blocks of T V.
 */
export function memPatternSource(p: MemPattern): string {
  const t = p.vec4 ? "vec4<f32>" : "f32";
  const zero = p.vec4 ? "vec4<f32>(0.0)" : "0.0";
  const r = Array.from({ length: p.perThread }, (_, j) => j);
  const body = (base: string) => {
    const at = (j: number) => `${base} + ${j}u * tt`;
    if (p.kind === "write") {
      // `keep` (always 0: q._a is 0) keeps src in the layout the bench binds.
      return r.map((j) => `    if (${at(j)} < q.n) { dst[${at(j)}] = ${t}(f32(${at(j)})) + keep; }`)
        .join("\n");
    }
    const loads = r.map((j) => `    let r${j} = src[min(${at(j)}, q.n - 1u)];`).join("\n");
    if (p.kind === "read") {
      return `${loads}\n    acc += ${
        r.map((j) => `select(${zero}, r${j}, ${at(j)} < q.n)`).join(" + ")
      };`;
    }
    return `${loads}\n${
      r.map((j) => `    if (${at(j)} < q.n) { dst[${at(j)}] = r${j}; }`).join("\n")
    }`;
  };
  const loop = p.gridStride
    ? `  for (var b = 0u; b < q.n; b += tt * ${p.perThread}u) {\n${body("b + t")}\n  }`
    : `  {\n${body("t")}\n  }`;
  return `struct Q { n: u32, _a: u32, _b: u32, _c: u32 }
@group(0) @binding(0) var<storage, read> src: array<${t}>;
@group(0) @binding(1) var<storage, read_write> dst: array<${t}>;
@group(0) @binding(2) var<uniform> q: Q;

@compute @workgroup_size(${p.workgroup})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let tt = nwg.x * nwg.y * ${p.workgroup}u;
  let t = gid.x + gid.y * nwg.x * ${p.workgroup}u;
  var acc = ${zero};${
    p.kind === "write" ? `\n  let keep = select(${zero}, src[0], q._a != 0u);` : ""
  }
${loop}
  if (${p.kind === "read" ? "t < q.n" : "false"}) { dst[t] = acc; }
}
`;
}

/** The patterns the suite measures (the first is the H200 probe's: vec4, one load, grid-stride). */
export function memPatterns(): MemPattern[] {
  const c = (
    kind: MemPattern["kind"],
    perThread: number,
    vec4 = true,
    workgroup = 256,
    gridStride = 0,
  ): MemPattern => ({ kind, perThread, vec4, workgroup, gridStride });
  return [
    c("copy", 1, true, 256, 4096),
    c("copy", 1, true, 64),
    c("copy", 1, true, 256),
    c("copy", 2),
    c("copy", 4),
    c("copy", 8),
    c("copy", 4, true, 64),
    c("copy", 4, true, 256, 4096),
    c("copy", 1, false, 64),
    c("copy", 4, false, 256),
    c("read", 1),
    c("read", 4),
    c("write", 1),
    c("write", 4),
  ];
}

/** Bytes one pass of `p` moves over `n` elements of 4 or 16 bytes (read + write). */
export function patternBytes(p: MemPattern, n: number): number {
  const el = p.vec4 ? 16 : 4;
  const threads = Math.ceil(n / p.perThread);
  if (p.kind === "copy") return 2 * n * el;
  if (p.kind === "write") return n * el;
  return n * el + Math.min(threads, n) * el;
}

/** A pattern ready to dispatch over `n` elements of `src` into `dst` (free `uniform` after use). */
export interface PatternPass {
  pipeline: GPUComputePipeline;
  bind: GPUBindGroup;
  groups: [number, number, number];
  uniform: GPUBuffer;
}

/** Compiles pattern `p` and binds it to `src` and `dst` over their first `n` elements. */
export async function patternPass(
  ctx: GpuContext,
  p: MemPattern,
  src: GPUBuffer,
  dst: GPUBuffer,
  n: number,
): Promise<PatternPass> {
  const pipeline = await computePipeline(
    ctx,
    memPatternSource(p),
    "main",
    {},
    `mem.${patternName(p)}`,
  );
  const uniform = uniformBuffer(ctx, new Uint32Array([n, 0, 0, 0]).buffer, "mem.q");
  const bind = ctx.device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
      { binding: 2, resource: { buffer: uniform } },
    ],
  });
  const groups: [number, number, number] = p.gridStride
    ? [p.gridStride, 1, 1]
    : workgroups1d(ctx, Math.ceil(n / p.perThread), p.workgroup);
  return { pipeline, bind, groups, uniform };
}

/** GPU (or wall) ms of one pass of pattern `p` over `bytes` of source data: best of 3 x `reps`. */
async function timePattern(
  ctx: GpuContext,
  p: MemPattern,
  src: GPUBuffer,
  dst: GPUBuffer,
  bytes: number,
  reps: number,
): Promise<{ ms: number; timer: string }> {
  const pp = await patternPass(ctx, p, src, dst, bytes / (p.vec4 ? 16 : 4));
  try {
    const t = await bestOfThreePasses(ctx, `gpu-mem ${patternName(p)}`, (pass) => {
      pass.setPipeline(pp.pipeline);
      pass.setBindGroup(0, pp.bind);
      for (let i = 0; i < reps; i++) pass.dispatchWorkgroups(...pp.groups);
    });
    return { ms: t.ms / reps, timer: `${t.timer} passes of ${reps}` };
  } finally {
    pp.uniform.destroy();
  }
}

/** `deno task bench gpu-mem`: bandwidth by access pattern on the WebGPU adapter. */
export const suite: BenchSuite = {
  description: "memory bandwidth of WebGPU kernels by access pattern (GB/s)",
  usage:
    "  mib=N      source buffer size in MiB (default 256 on hardware, 16 on software adapters)\n" +
    "  reps=N     dispatches per timed pass (default 10)",
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("gpu-mem", opts.args, ["mib", "reps"]);
    const ctx = await requireGpu();
    const report = newReport("gpu-mem", describeAdapter(ctx.report));
    const mib = Number(kv.get("mib") ?? (ctx.report.isFallback ? 16 : 256));
    const reps = benchPositiveInt("gpu-mem", kv, "reps", 10);
    const limit = ctx.device.limits.maxStorageBufferBindingSize;
    if (!Number.isInteger(mib) || mib < 1 || mib * 2 ** 20 > limit) {
      throw new KibitzError(
        "bad_args",
        `gpu-mem: mib= must be a whole number from 1 to ${Math.floor(limit / 2 ** 20)}, got ${
          kv.get("mib")
        }`,
      );
    }
    const bytes = mib * 2 ** 20;
    const usage = 0x80 | 0x8 | 0x4; // STORAGE | COPY_DST | COPY_SRC
    const src = ctx.device.createBuffer({ size: bytes, usage, label: "mem.src" });
    const dst = ctx.device.createBuffer({ size: bytes, usage, label: "mem.dst" });
    const rows: (string | number | null)[][] = [];
    try {
      for (const p of memPatterns()) {
        const { ms, timer } = await timePattern(ctx, p, src, dst, bytes, reps);
        const moved = patternBytes(p, bytes / (p.vec4 ? 16 : 4));
        const gbs = moved / ms / 1e6;
        rows.push([patternName(p), p.perThread, p.vec4 ? 16 : 4, p.workgroup, ms, gbs, timer]);
        opts.log(`${patternName(p)}: ${gbs.toFixed(0)} GB/s (${ms.toFixed(3)} ms)`);
      }
    } finally {
      src.destroy();
      dst.destroy();
    }
    report.tables.push({
      title:
        `Memory bandwidth by access pattern (${mib} MiB source; GB/s = bytes read + written / GPU time)`,
      columns: [
        "pattern",
        "elements per thread",
        "bytes per element",
        "workgroup",
        "ms per pass",
        "GB/s",
        "timer",
      ],
      rows,
    });
    report.notes.push(
      ctx.report.isFallback
        ? "The adapter is a software rasterizer: these figures are the CPU's memory, not a GPU's."
        : "Elements of a thread are a whole thread-count apart, so each load is coalesced across the workgroup; `grid-stride N` runs N workgroups looping over the buffer (the probe behind GPU_FACTS' 1.48 TB/s on the H200).",
    );
    return report;
  },
};
