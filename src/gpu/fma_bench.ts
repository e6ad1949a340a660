// `deno task bench gpu-fma`: where a WGSL GEMM's time goes, in probes of its parts. The Winograd
// GEMMs run at 28-30 TFLOP/s on an H200 whose register FMA chains reach 55.5 through WebGPU; these
// kernels separate the inner loop (operands from workgroup memory into a register block of
// outputs, the GEMM tilings' exact loop, no global loads) from the FMA units alone. If the inner
// loop is near the FMA figure, the global loads and barriers of the full GEMM are what to work on;
// if it is near the GEMM's 28-30, the loop itself is (workgroup-memory reads, the index clamps
// WebGPU's robustness adds to them).
import {
  benchKeyValues,
  benchPositiveInt,
  type BenchReport,
  type BenchSuite,
  newReport,
} from "../bench/report.ts";
import { describeAdapter, type GpuContext, requireGpu } from "./device.ts";
import { computePipeline } from "./pipeline.ts";
import { bestOfThreePasses } from "./timing.ts";
import { storageBuffer, uniformBuffer } from "./buffers.ts";
import { workgroups1d } from "./dispatch.ts";

/** One probe: FMA chains in registers, or a GEMM inner loop over workgroup memory. */
export interface FmaProbe {
  kind: "registers" | "inner-loop";
  /** inner-loop: threads along columns and rows, 4x4 blocks a thread along rows and columns. */
  wx: number;
  wy: number;
  gm: number;
  gn: number;
  /** inner-loop: K steps per staged slice (the loop runs `reps` times over the slice). */
  bk: number;
}

/** The probe's name in the report. */
export function probeName(p: FmaProbe): string {
  if (p.kind === "registers") return "registers: 16 vec4 FMA chains a thread";
  const bm = 4 * p.wy * p.gm, bn = 4 * p.wx * p.gn;
  return `inner loop ${bm}x${bn}k${p.bk}t${p.wx * p.wy} (${4 * p.gm}x${4 * p.gn} a thread)`;
}

/** FLOPs one thread does per repetition of the probe's loop. */
export function probeFlopsPerRep(p: FmaProbe): number {
  return p.kind === "registers" ? 16 * 4 * 2 : p.bk * 16 * p.gm * p.gn * 2;
}

/** Threads in one workgroup of the probe. */
export function probeThreads(p: FmaProbe): number {
  return p.kind === "registers" ? 256 : p.wx * p.wy;
}

/**
 * WGSL of a probe. Both read their seeds from `src` and write one value a thread to `dst`, so no
 * work can be dropped. The inner loop is the Winograd GEMM's (src/nn/gpu/winograd_gemm.ts): A as
 * vec4 rows of 4 output rows, B as vec4s of 4 columns, `fma(vec4(a[i]), b, acc)`.
 */
export function fmaProbeSource(p: FmaProbe): string {
  const head = `struct Q { reps: u32, _a: u32, _b: u32, _c: u32 }
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> q: Q;
`;
  const r16 = Array.from({ length: 16 }, (_, i) => i);
  if (p.kind === "registers") {
    return `${head}
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let s = src[li % 64u];
  let m = src[64u + li % 64u];
${r16.map((i) => `  var a${i} = s + vec4<f32>(${i}.0);`).join("\n")}
  for (var r = 0u; r < q.reps; r++) {
${r16.map((i) => `    a${i} = fma(a${i}, m, s);`).join("\n")}
  }
  dst[(wid.y * nwg.x + wid.x) * 256u + li] = ${r16.map((i) => `a${i}`).join(" + ")};
}
`;
  }
  const as4 = p.wy * p.gm, bs4 = p.wx * p.gn;
  const acc: string[] = [], step: string[] = [];
  // Two staged slices, alternating by repetition (as the double-buffered GEMMs' `cur`), so that no
  // compiler can hoist the workgroup-memory reads out of the repetition loop.
  for (let g = 0; g < p.gm; g++) {
    step.push(`let a${g} = As[oa + kk * ${as4}u + ${g * p.wy}u + lid.y];`);
  }
  for (let h = 0; h < p.gn; h++) {
    step.push(`let b${h} = Bs[ob + kk * ${bs4}u + ${h * p.wx}u + lid.x];`);
  }
  for (let g = 0; g < p.gm; g++) {
    for (let i = 0; i < 4; i++) {
      for (let h = 0; h < p.gn; h++) {
        acc.push(`acc_${g}_${i}_${h}`);
        step.push(`acc_${g}_${i}_${h} = fma(vec4<f32>(a${g}[${i}]), b${h}, acc_${g}_${i}_${h});`);
      }
    }
  }
  const threads = p.wx * p.wy;
  return `${head}
var<workgroup> As: array<vec4<f32>, ${2 * p.bk * as4}>;
var<workgroup> Bs: array<vec4<f32>, ${2 * p.bk * bs4}>;

@compute @workgroup_size(${p.wx}, ${p.wy})
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = lid.y * ${p.wx}u + lid.x;
  for (var e = t; e < ${2 * p.bk * as4}u; e += ${threads}u) { As[e] = src[e % 128u]; }
  for (var e = t; e < ${2 * p.bk * bs4}u; e += ${threads}u) { Bs[e] = src[(e + 7u) % 128u]; }
  workgroupBarrier();
${acc.map((a) => `  var ${a} = vec4<f32>(0.0);`).join("\n")}
  for (var r = 0u; r < q.reps; r++) {
    let oa = (r & 1u) * ${p.bk * as4}u;
    let ob = (r & 1u) * ${p.bk * bs4}u;
    for (var kk = 0u; kk < ${p.bk}u; kk++) {
${step.map((l) => `      ${l}`).join("\n")}
    }
  }
  dst[(wid.y * nwg.x + wid.x) * ${threads}u + t] = ${acc.join(" + ")};
}
`;
}

/** The probes: the FMA units, and the inner loops of the tilings the Winograd tuner picks. */
export function fmaProbes(): FmaProbe[] {
  const loop = (wx: number, wy: number, gm: number, gn: number, bk: number): FmaProbe => ({
    kind: "inner-loop",
    wx,
    wy,
    gm,
    gn,
    bk,
  });
  return [
    { kind: "registers", wx: 0, wy: 0, gm: 0, gn: 0, bk: 0 },
    loop(16, 16, 2, 2, 8), // 128 x 128: the training GEMM's tiling on the H200
    loop(16, 16, 1, 2, 8), // 64 x 128: inference's
    loop(16, 16, 1, 1, 16), // 64 x 64
    loop(16, 16, 4, 2, 8), // 256 x 128: 16 x 8 a thread
  ];
}

async function timeProbe(
  ctx: GpuContext,
  p: FmaProbe,
  groups: number,
  reps: number,
): Promise<{ ms: number; tflops: number; timer: string }> {
  const pipe = await computePipeline(ctx, fmaProbeSource(p), "main", {}, `fma.${probeName(p)}`);
  const grid = workgroups1d(ctx, groups, 1);
  const threads = grid[0] * grid[1] * probeThreads(p);
  const seeds = new Float32Array(512).map((_, i) => 1 - (i % 7) * 1e-4);
  const src = storageBuffer(ctx, seeds, "fma.src");
  const dst = storageBuffer(ctx, threads * 16, "fma.dst");
  const u = uniformBuffer(ctx, new Uint32Array([reps, 0, 0, 0]).buffer, "fma.q");
  const bind = ctx.device.createBindGroup({
    layout: pipe.getBindGroupLayout(0),
    entries: [src, dst, u].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  try {
    const t = await bestOfThreePasses(ctx, `gpu-fma ${probeName(p)}`, (pass) => {
      pass.setPipeline(pipe);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(...grid);
    });
    const flops = threads * reps * probeFlopsPerRep(p);
    return { ms: t.ms, tflops: flops / t.ms / 1e9, timer: t.timer };
  } finally {
    for (const b of [src, dst, u]) b.destroy();
  }
}

/** `deno task bench gpu-fma`: FMA throughput of the FMA units and of GEMM inner loops. */
export const suite: BenchSuite = {
  description: "TFLOP/s of register FMA chains and of WGSL GEMM inner loops",
  usage:
    "  groups=N   workgroups a probe runs (default 4096 on hardware, 8 on software adapters)\n" +
    "  reps=N     loop repetitions a thread (default 4096 on hardware, 16 on software adapters)",
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("gpu-fma", opts.args, ["groups", "reps"]);
    const ctx = await requireGpu();
    const soft = ctx.report.isFallback;
    const groups = benchPositiveInt("gpu-fma", kv, "groups", soft ? 8 : 4096);
    const reps = benchPositiveInt("gpu-fma", kv, "reps", soft ? 16 : 4096);
    const report = newReport("gpu-fma", describeAdapter(ctx.report));
    const rows: (string | number | null)[][] = [];
    for (const p of fmaProbes()) {
      // The inner loops do 8-32x a register chain's work per repetition: fewer repetitions.
      const r = p.kind === "registers"
        ? reps
        : Math.max(1, Math.round(reps / (p.bk * p.gm * p.gn / 4)));
      const t = await timeProbe(ctx, p, groups, r);
      rows.push([probeName(p), groups, r, t.ms, t.tflops, t.timer]);
      opts.log(`${probeName(p)}: ${t.tflops.toFixed(2)} TFLOP/s (${t.ms.toFixed(3)} ms)`);
    }
    report.tables.push({
      title: "FMA throughput: registers alone, and GEMM inner loops reading workgroup memory",
      columns: ["probe", "workgroups", "repetitions", "ms", "TFLOP/s", "timer"],
      rows,
    });
    report.notes.push(
      soft
        ? "The adapter is a software rasterizer: these figures are the CPU's, not a GPU's."
        : "The Winograd GEMMs' full kernels reach 28-30 TFLOP/s on an H200 (bench nn's tuner table); compare their tilings' inner-loop rows here.",
    );
    return report;
  },
};
