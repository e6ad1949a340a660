import {
  benchFlag,
  benchKeyValues,
  type BenchReport,
  type BenchSuite,
  newReport,
  writeReport,
} from "../bench/report.ts";
import { KibitzError } from "../errors.ts";
import { describeAdapter, getGpu, type GpuContext } from "../gpu/device.ts";
import { timeComputePass } from "../gpu/timing.ts";
import { queueCopyTimes } from "../gpu/copy_probe.ts";
import { type SubmitGaps, submitGaps } from "../gpu/submit_gap.ts";
import { forwardMacs, HIVE_MOVES, type NetConfig, netPreset } from "./config.ts";
import { maskWords } from "./mask_bits.ts";
import { conv2d, conv2dBackwardInput, conv2dBackwardWeight } from "./cpu/conv.ts";
import { GpuRecorder } from "./gpu/backend.ts";
import { HARDWARE_TILES, loadKernels, TEST_TILES } from "./gpu/kernels.ts";
import { deviceHasF16, type HalfStorage, loadHalfKernels } from "./gpu/f16.ts";
import { TensorPool, uploadTensor } from "./gpu/tensor.ts";
import { winoShapeKey } from "./gpu/backend.ts";
import {
  fusedTestCandidates,
  gemmBlock,
  hardwareCandidates,
  splitCandidates,
  testCandidates,
  WGRAD_VARIANTS,
} from "./gpu/winograd_gemm.ts";
import {
  pickWinoKernels,
  tuneWgrad,
  tuneWinograd,
  winogradTuneLog,
  type WinoTuneResult,
} from "./gpu/winograd_tune.ts";
import {
  CpuNet,
  GpuNet,
  type NetBatch,
  type NetPrecision,
  type PolicyValueNet,
  resolvePrecision,
} from "./net.ts";
import { initWeights, type NetWeights } from "./params.ts";
import { cpuTensor, rng } from "./tensor.ts";
import { syntheticBatch, Trainer } from "./train.ts";
import { runTrainSteps } from "./train_steps.ts";
import { unfusedWinogradBytes, winogradTraffic } from "./gpu/winograd_fused.ts";
import { mixedTiling } from "./winograd_mixed.ts";
import type { WinogradTile } from "./winograd.ts";
import {
  BENCH_LEGAL,
  BENCH_OFF_BASE,
  benchBatch,
  callMs,
  hostProfileRows,
  hostProfileTable,
  pipelinedCallsPerS,
  planCost,
  readbackFloorMs,
} from "./bench_latency.ts";
import { isHalfPlanes } from "./planes.ts";
import { packSparsePlanes, SPARSE_MIN_BATCH, sparseLayout } from "./sparse_planes.ts";
import { type PlanProfile, profilePlan, sustainedReplays } from "./bench_profile.ts";
import { MIXED_SHAPE } from "./gpu/winograd_mixed_tune.ts";
import { setTuneCacheEnabled } from "./gpu/tune_cache.ts";

type Dir =
  | "forward"
  | "backward-input"
  | "backward-weight"
  | "forward Winograd F(2x2)"
  | "forward Winograd F(4x4)"
  | "forward fused f16"
  | "forward Winograd F(4x4) f16"
  | "backward-input Winograd F(4x4)"
  | "backward-weight Winograd F(4x4)";
const DIRS: Dir[] = ["forward", "backward-input", "backward-weight"];
/** Forward by Winograd (transforms + batched GEMM + output transform with the fused epilogue). */
const WINOGRAD_DIRS: Dir[] = ["forward Winograd F(2x2)", "forward Winograd F(4x4)"];
/** Training's backward passes by Winograd (input gradient: flipped-weight conv; weight gradient). */
const WINOGRAD_BACK: Dir[] = ["backward-input Winograd F(4x4)", "backward-weight Winograd F(4x4)"];

/**
 * The storage of the f16 rows: f16 where the device has shader-f16; KIBITZ_BENCH_F16_EMULATE=1 runs
 * them emulated (f32 storage, test tiles) elsewhere, to check the rows' code path (timings then
 * mean nothing); otherwise none (the rows are left out).
 */
function benchHalf(ctx: GpuContext | null): HalfStorage | null {
  if (!ctx) return null;
  if (deviceHasF16(ctx)) return "f16";
  return Deno.env.get("KIBITZ_BENCH_F16_EMULATE") === "1" ? "f16-emulated" : null;
}

function randomTensor(shape: number[], seed: number) {
  const next = rng(seed);
  const t = cpuTensor(shape);
  for (let i = 0; i < t.data.length; i++) t.data[i] = next() * 2 - 1;
  return t;
}

/** FLOPs of one 3x3 convolution pass (2 per multiply-add); the three directions cost the same. */
export function convFlops(n: number, c: number, h: number, w: number): number {
  return 2 * n * h * w * c * c * 9;
}

/** Times one conv direction on the CPU reference (one run: they are slow). */
function cpuConvMs(dir: Dir, n: number, c: number, h: number, w: number): number {
  const x = randomTensor([n, c, h, w], 1), wt = randomTensor([c, c, 3, 3], 2);
  const t0 = performance.now();
  if (dir === "forward") conv2d(x, wt);
  else if (dir === "backward-input") conv2dBackwardInput(x, wt);
  else conv2dBackwardWeight(x, x, 3);
  return performance.now() - t0;
}

/** Times one conv direction on the GPU: median of 5 timestamped passes of `reps` dispatches each. */
async function gpuConvMs(ctx: GpuContext, dir: Dir, n: number, c: number, h: number, w: number) {
  const pool = new TensorPool(ctx);
  // Software adapters run the direct family (llvmpipe needs minutes for the hardware-size GEMMs).
  const family = ctx.report.isFallback ? "direct" : "tiled";
  const half = dir.endsWith("f16") ? benchHalf(ctx) : null;
  const tiles = half === "f16-emulated" ? TEST_TILES : HARDWARE_TILES;
  const rec = half
    ? new GpuRecorder(ctx, await loadKernels(ctx, tiles, "tiled"), pool, true)
    : new GpuRecorder(ctx, await loadKernels(ctx, undefined, family), pool);
  const x = uploadTensor(ctx, [n, c, h, w], randomTensor([n, c, h, w], 1).data);
  const wt = uploadTensor(ctx, [c, c, 3, 3], randomTensor([c, c, 3, 3], 2).data);
  const dw = pool.acquire([c, c, 3, 3]);
  let variant = "";
  if (dir.startsWith("backward") && dir.includes("Winograd")) {
    rec.winograd = 4;
    rec.winogradTrain = true;
    variant = await pickVariant(ctx, rec, 4, n, c, h, w);
  }
  if (dir === "forward") rec.conv2d(x, wt);
  else if (half) {
    // f16 storage (input, weight, output), f32 accumulation, bias epilogue; the casts run before.
    rec.half = await loadHalfKernels(ctx, tiles, half);
    const bias = pool.acquire([c]);
    const xh = rec.toHalf(x), wh = rec.toHalf(wt);
    const u = dir.includes("Winograd") ? pool.acquire([36, c, c]) : null;
    if (u) {
      rec.winograd = 4;
      rec.winogradFilter(wt, u, 4);
      variant = await pickVariant(ctx, rec, 4, n, c, h, w);
    }
    rec.submit();
    rec.ops.length = 0;
    rec.convFused(xh, wh, bias, null, false, u);
  } else if (dir.startsWith("forward Winograd")) {
    const m = dir.includes("2x2") ? 2 : 4;
    const u = pool.acquire([(m + 2) * (m + 2), c, c]), bias = pool.acquire([c]);
    rec.winograd = m;
    rec.winogradFilter(wt, u, m);
    variant = await pickVariant(ctx, rec, m, n, c, h, w);
    rec.submit();
    rec.ops.length = 0;
    rec.convFused(x, wt, bias, null, false, u);
  } else rec.conv2dBackward(x, wt, x, dw, false);
  if (dir.startsWith("backward-input")) {
    // Keep only the weight flip and the data-gradient GEMM (with its split-K sum, if any).
    const wgradOps = rec.ops.length;
    rec.conv2dBackward(x, wt, x, dw, true);
    rec.ops.splice(0, 2 * wgradOps);
  }
  await timeComputePass(ctx, (pass) => rec.encode(pass));
  const once = await timeComputePass(ctx, (pass) => rec.encode(pass));
  const reps = Math.max(1, Math.min(20, Math.floor(200 / Math.max(1, once.gpuMs ?? once.wallMs))));
  const run = () =>
    timeComputePass(ctx, (pass) => {
      for (let r = 0; r < reps; r++) rec.encode(pass);
    });
  await warmUp(ctx, run);
  const samples: number[] = [];
  let timer = "wall";
  for (let i = 0; i < 5; i++) {
    const t = await run();
    samples.push((t.gpuMs ?? t.wallMs) / reps);
    if (t.gpuMs !== null) timer = "gpu timestamps";
  }
  samples.sort((a, b) => a - b);
  rec.destroy();
  pool.destroy();
  x.buffer.destroy();
  wt.buffer.destroy();
  return { ms: samples[2], timer: `${timer}, median of 5${variant}` };
}

/** Sets the recorder's Winograd GEMM for the shape (the autotuner's pick on hardware); its name. */
async function pickVariant(
  ctx: GpuContext,
  rec: GpuRecorder,
  m: 2 | 4,
  n: number,
  c: number,
  h: number,
  w: number,
): Promise<string> {
  const shape = { n, ci: c, co: c, h, w };
  const k = await pickWinoKernels(ctx, rec.kernels, rec.half, m, shape);
  if (k) rec.winoChoice.set(winoShapeKey(m, n, c, c, h, w), k);
  return `; GEMM ${k ? k.candidate.name : "legacy"}`;
}

/** A comma-separated list of batch sizes from argument `key=` (empty items skipped). */
function batchSizes(key: string, value: string, example: string): number[] {
  return value.split(",").filter((x) => x).map((x) => {
    const b = Number(x);
    if (!Number.isInteger(b) || b < 1) {
      throw new KibitzError(
        "bad_args",
        `nn: ${key}= takes batch sizes like ${example}, got "${x}"`,
      );
    }
    return b;
  });
}

/**
 * Wall ms a step of `count` (at least 4) training steps on `b` run as the training loops run them
 * (2 in flight), in the steady state: from the second step's losses to the last's, over the steps
 * between. The first step runs alone (its map requested at once, the host waiting on it) and the
 * last one's losses come a readback floor after its GPU work: a run of thousands of steps pays
 * them once, a 7-step bench run a few ms a step. Until session 30 the last step's map also waited
 * for the deferred timer (1.5x a step's GPU time: about 140 ms at batch 256 on the H200, 20 ms a
 * step of 7), and this figure was the whole run's wall time over its steps.
 */
async function pipelinedSteps(net: PolicyValueNet, b: NetBatch, count: number): Promise<number> {
  const n = Math.max(4, count);
  const trainer = new Trainer(net, {
    momentum: 0.9,
    weightDecay: 1e-4,
    lrMax: 0.01,
    lrMin: 0.01,
    totalSteps: n,
  });
  const at: number[] = [];
  await runTrainSteps(trainer, {
    until: n,
    batch: () => b,
    onStep: () => void at.push(performance.now()),
  });
  return (at[n - 1] - at[1]) / (n - 2);
}

/**
 * Keeps a hardware GPU busy for 1.5 s before timing: it idles at a low clock and boosts under load
 * (an H200 idled at 345 MHz against 1980 under load, and a lone 46 ms conv pass ran 3-4x slower
 * than the same pass after a warm-up). Software adapters have no clocks to raise.
 */
async function warmUp(ctx: GpuContext, run: () => Promise<unknown>): Promise<void> {
  if (ctx.report.isFallback) return;
  // Within a few seconds of the last warm-up the clocks are still up (the rows between keep the
  // GPU busy): 0.3 s warms the new work's caches and keeps the whole --full run near 2 minutes.
  const hot = performance.now() - lastWarmUp < 5000;
  const until = performance.now() + (hot ? 300 : 1500);
  while (performance.now() < until) await run();
  lastWarmUp = performance.now();
}
let lastWarmUp = -Infinity;

/**
 * Positions per second of `infer` (wall time: upload, one submit, one batched readback): from the
 * median call on the GPU, from the mean of the calls on the CPU.
 */
async function inferRate(
  ctx: GpuContext | null,
  net: PolicyValueNet,
  batch: number,
  budgetMs: number,
): Promise<number> {
  const b = benchBatch(net, batch);
  await net.infer(b);
  if (ctx && net instanceof GpuNet) {
    await warmUp(ctx, () => net.infer(b));
    return batch * 1000 / await callMs(net, b, budgetMs);
  }
  let n = 0;
  const t0 = performance.now();
  do {
    await net.infer(b);
    n++;
  } while (performance.now() - t0 < budgetMs);
  return n * batch / ((performance.now() - t0) / 1000);
}

function fitsBinding(ctx: GpuContext | null, cfg: NetConfig, batch: number): boolean {
  if (!ctx) return false;
  return batch * cfg.filters * cfg.height * cfg.width * 4 <=
    ctx.device.limits.maxStorageBufferBindingSize;
}

function peakArg(args: string[]): number | null {
  const a = args.find((x) => x.startsWith("peak="));
  if (!a) return null;
  const v = Number(a.slice(5));
  if (!(v > 0)) throw new KibitzError("bad_args", `peak=<GFLOP/s> must be positive, got "${a}"`);
  return v;
}

/** The run's sizes: smoke (default), quick (`quick=1`: the issue's sizes, GPU only), full. */
type Mode = "smoke" | "quick" | "full";

/** Milliseconds each inference rate is measured for. */
function budget(mode: Mode): number {
  return mode === "smoke" ? 1000 : mode === "quick" ? 1200 : 2000;
}

/** Sections of the nn bench that `only=` selects. */
const NN_SECTIONS = ["conv", "infer", "latency", "train"];

type Row = (string | number | null)[];

/** `deno task bench nn`: conv GFLOP/s (forward, both backwards) and inference positions/s, CPU and GPU. */
export const suite: BenchSuite = {
  description:
    "nn: 3x3 conv GFLOP/s forward/backward and inference positions/s, CPU reference and GPU",
  async run(opts): Promise<BenchReport> {
    const kv = benchKeyValues("nn", opts.args, [
      "peak",
      "quick",
      "only",
      "model",
      "browser",
      "tune",
      "gemm",
      "tune-cache",
      "precision",
      "modes",
      "batches",
    ]);
    // The bench times the autotuner itself: results from the disk cache (an earlier run) would make
    // its tuner tables stale, so the cache is off unless `tune-cache=1`.
    setTuneCacheEnabled(benchFlag(kv, "tune-cache"));
    // `tune=64,256`: the batches the autotuner section tunes the 256 -> 256 layer at (hardware,
    // quick and full runs; default 256). `gemm=NAME,...`: training rows with those Winograd GEMMs
    // forced, beside the tuned one (an A/B of the step with the earlier best).
    const tuneBatches = batchSizes("tune", kv.get("tune") ?? "256", "64,256");
    const forcedGemms = (kv.get("gemm") ?? "").split(",").filter((x) => x);
    // `precision=f32,f16`: the latency section once per inference storage (default: the default,
    // `auto`); f16 is skipped on devices without shader-f16.
    const precisions = (kv.get("precision") ?? "auto").split(",").filter((x) => x).map((x) => {
      if (x !== "f32" && x !== "f16" && x !== "auto") {
        throw new KibitzError("bad_args", `nn: precision= takes f32, f16 or auto, got "${x}"`);
      }
      return x as NetPrecision;
    });
    // `only=latency,train` runs some sections (conv, infer, latency, train): a capped device run.
    const only = kv.get("only")?.split(",").filter((x) => x) ?? null;
    for (const x of only ?? []) {
      if (!NN_SECTIONS.includes(x)) {
        throw new KibitzError(
          "bad_args",
          `nn: only= takes ${NN_SECTIONS.join(", ")}, got "${x}"`,
        );
      }
    }
    const want = (section: string) => only === null || only.includes(section);
    // `modes=gpu-fused-f16`: the inference section's rows of these graphs only (a capped device run).
    const modes = kv.get("modes")?.split(",").filter((x) => x) ?? null;
    // `batches=256`: the inference section's rows at these batch sizes only (a capped device run).
    const batchesArg = kv.get("batches");
    const onlyBatches = batchesArg === undefined
      ? null
      : batchSizes("batches", batchesArg, "8,256");
    const mode: Mode = opts.full ? "full" : benchFlag(kv, "quick") ? "quick" : "smoke";
    const big = mode !== "smoke";
    const ctx = opts.backend === "cpu" ? null : await getGpu();
    if (opts.backend === "gpu" && !ctx) throw new KibitzError("no_gpu", "no WebGPU adapter found");
    // `model=` runs the inference, latency and training sections on another preset (quick and full
    // modes on a software adapter take the tiny one: the 19 x 256 model needs hours there).
    const modelArg = kv.get("model") ?? null;
    if (modelArg !== null) netPreset(modelArg);
    const model = modelArg ?? (ctx?.report.isFallback && big ? "tiny" : null);
    const preset = (name: string) => model ?? name;
    // `browser=1`: the latency section also measures the floor and calls in headless Chromium.
    const browser = benchFlag(kv, "browser");
    const adapter = ctx ? describeAdapter(ctx.report) : null;
    const report = newReport("nn", adapter);
    const peak = peakArg(opts.args);
    // `--backend gpu` and quick=1 leave out the CPU reference rows (minutes each at full sizes).
    const cpuRows = opts.backend !== "gpu" && mode !== "quick";
    const h = 26, w = 26;
    const convRows: Row[] = [], tuneRows: Row[] = [], inferRows: Row[] = [], byteRows: Row[] = [];
    const latRows: Row[] = [], trainRows: Row[] = [], profRows: Row[] = [], newRows: Row[] = [];
    const hostRows: Row[] = [];
    const summary = new Map<string, number>();
    const winners = new Map<string, string>();
    const sumTable = { title: "", columns: ["measure", "Kibitz", "target"], rows: [] as Row[] };
    report.tables.push(
      {
        title:
          "3x3 convolution, 26x26 board, stride 1, same padding (FLOPs = 2 N H W C_in C_out 9)",
        columns: ["backend", "filters", "batch", "pass", "ms", "GFLOP/s", "% of peak", "timer"],
        rows: convRows,
      },
      {
        title:
          "Autotuner: every Winograd F(4x4,3x3) GEMM variant on the layer shape (input transform + GEMM + output transform) and the fused kernels where KIBITZ_NN_WINO_FUSED=1 (fused-io: one dispatch; fused-o: input transform + fused GEMM and output transform; their GEMM column is the fused kernel), the split-K Winograd GEMMs where a layer has at most 512 tile columns (names ending `sN`: N partials along the channels, added by the output transform), the split-K factors and tile families of the direct convs of small batches (`splits=N`: the default tile family; `64x64 splits=N`: the other one), and for 3x3 layers below the Winograd table's threshold the best direct conv against the best F(4x4) conv (`direct or F(4x4)` rows) (GFLOP/s by the direct count; DRAM GB/s = the traffic model's bytes for the path / ms)",
        columns: [
          "storage",
          "shape",
          "variant",
          "ms",
          "GEMM alone ms",
          "GFLOP/s",
          "DRAM GB/s (traffic model)",
          "picked",
          "timer",
        ],
        rows: tuneRows,
      },
      {
        title:
          "Session-16 GEMM candidates (vec4 U loads, padded A rows, 16 x 8 per thread; f16 products `fN` in f16 plans) against the best earlier candidate on each tuned shape (ms: input transform + GEMM + output transform; ratio < 1: a new one is faster)",
        columns: [
          "storage",
          "shape",
          "best earlier",
          "ms",
          "GEMM ms",
          "best new",
          "ms",
          "GEMM ms",
          "new / earlier",
        ],
        rows: newRows,
      },
      {
        title:
          "Bytes one 3x3 layer moves by path (static model, 256 -> 256 filters, 26x26): DRAM = each tensor once per kernel that touches it; tile reads = operands re-read per row / column block (L2 traffic). Unfused Winograd GEMM with 128 x 128 blocks, fused kernels with 16 x 16.",
        columns: ["activations", "batch", "path", "DRAM MB", "tile reads MB", "dispatches"],
        rows: byteRows,
      },
      {
        title:
          "Inference (median wall time per call: upload, forward, masked softmax, one batched readback)",
        columns: [
          "model",
          "tower",
          "backend",
          "graph",
          "batch",
          "positions/s",
          "effective GFLOP/s",
        ],
        rows: inferRows,
      },
      latencyTableShape(latRows),
      hostProfileTable(hostRows),
      {
        title:
          "Training step (forward, backward, SGD update; one submit and one loss readback on the GPU)",
        columns: ["model", "tower", "backend", "batch", "ms/step", "positions/s", "timer"],
        rows: trainRows,
      },
      profileTableShape(profRows),
    );
    if (ctx) report.tables.push(sumTable);
    // Every row is written as soon as it is measured: a run cut by a time cap keeps its figures.
    const flush = async () => {
      Object.assign(sumTable, summaryTable(summary, convRows, big, winners));
      if (opts.out) await writeReport(report, opts.out);
    };
    // A failing row (or section) is noted and skipped, so the rest of the run still measures.
    const attempt = async (what: string, fn: () => Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        const msg = `${what}: ${(e as Error).message}`.slice(0, 400);
        report.notes.push(`error, skipped: ${msg}`);
        opts.log(`error: ${msg}`);
        await flush();
      }
    };
    // The static traffic model, beside the GPU rows it explains (CPU runs leave it out).
    if (ctx && want("conv")) {
      for (const [act, bytes] of [["f32", 4], ["f16", 2]] as const) {
        for (const n of [1, 8, 64, 256]) {
          for (const t of winogradTraffic(4, { n, ci: 256, co: 256, h, w }, bytes)) {
            byteRows.push([act, n, t.path, t.dramBytes / 1e6, t.tileBytes / 1e6, t.dispatches]);
          }
        }
      }
    }
    const convCases = mode === "full"
      ? { gpu: [[256, 1], [256, 64], [256, 256], [32, 256]], cpu: [[256, 1], [32, 16]] }
      : mode === "quick"
      ? { gpu: [[256, 256]], cpu: [] }
      : { gpu: [[32, 1], [32, 8]], cpu: [[32, 1]] };
    for (
      const [backend, cases] of [
        ["cpu", cpuRows && want("conv") ? convCases.cpu : []],
        ["gpu", ctx && want("conv") ? convCases.gpu : []],
      ] as const
    ) {
      for (const [c, n] of cases) {
        const dirs: Dir[] = backend === "gpu" && !ctx!.report.isFallback
          ? [
            ...DIRS,
            ...(mode === "quick" ? WINOGRAD_DIRS.slice(1) : WINOGRAD_DIRS),
            ...WINOGRAD_BACK,
          ]
          : [...DIRS];
        if (backend === "gpu" && benchHalf(ctx)) {
          dirs.push("forward fused f16", "forward Winograd F(4x4) f16");
        }
        for (const dir of dirs) {
          const flops = convFlops(n, c, h, w);
          if (backend === "gpu" && !fitsBinding(ctx, { ...netPreset("small"), filters: c }, n)) {
            convRows.push([
              backend,
              c,
              n,
              dir,
              null,
              null,
              peak ? null : "-",
              "over binding limit",
            ]);
            continue;
          }
          await attempt(`conv ${backend} ${c}f batch ${n} ${dir}`, async () => {
            const r = backend === "cpu"
              ? { ms: cpuConvMs(dir, n, c, h, w), timer: "wall" }
              : await gpuConvMs(ctx!, dir, n, c, h, w);
            const gflops = flops / (r.ms * 1e6);
            const pct = peak ? `${(100 * gflops / peak).toFixed(1)} %` : "-";
            convRows.push([backend, c, n, dir, r.ms, gflops, pct, r.timer]);
            opts.log(
              `conv ${backend} ${c}f batch ${n} ${dir}: ${r.ms.toFixed(2)} ms, ${
                gflops.toFixed(2)
              } GFLOP/s (${r.timer})`,
            );
            await flush();
          });
        }
      }
    }
    if (ctx) {
      const shown = new Set<WinoTuneResult>();
      const show = async (r: WinoTuneResult) => {
        shown.add(r);
        const d = r.dims, flops = 2 * d.n * d.h * d.w * d.ci * d.co * (d.k ?? 3) ** 2;
        const wk = `${r.storage}:${d.n}`;
        if (!winners.has(wk) && !r.shape.startsWith("wgrad ") && !r.shape.startsWith("fc ")) {
          winners.set(wk, r.winner);
        }
        for (const t of r.timings) {
          const gf = t.ms ? flops / (t.ms * 1e6) : null;
          const bytes = modelBytes(r, t.name);
          tuneRows.push([
            r.storage,
            r.shape,
            t.name,
            t.ms,
            t.gemmMs,
            gf,
            t.ms && bytes !== null ? bytes / (t.ms * 1e6) : null,
            t.name === r.winner ? "yes" : t.error ? `failed: ${t.error.slice(0, 80)}` : "",
            r.timer,
          ]);
          opts.log(
            `tune ${r.storage} ${r.shape} ${t.name}: ${t.ms?.toFixed(3) ?? "-"} ms (GEMM ${
              t.gemmMs?.toFixed(3) ?? "-"
            } ms)${t.name === r.winner ? "  <- picked" : ""}`,
          );
        }
        const cmp = newAgainstEarlier(r);
        if (cmp) {
          newRows.push([r.storage, r.shape, ...cmp]);
          opts.log(
            `new vs earlier ${r.storage} ${r.shape}: ${cmp[3]} ${fmtMs(cmp[4])} ms against ${
              cmp[0]
            } ${fmtMs(cmp[1])} ms (${fmtMs(cmp[6])}x)`,
          );
        }
        await flush();
      };
      // The tuner's own section belongs to the conv and inference runs (`only=latency,train`
      // leaves it out: a capped device run).
      await attempt("Winograd autotuner", async () => {
        if (!want("conv") && !want("infer")) return;
        if (ctx.report.isFallback) {
          // The tuner's code path at test size (software adapters do not tune their plans).
          const kernels = await loadKernels(ctx, TEST_TILES, "tiled");
          const cands = [
            ...testCandidates().filter((x) => !x.half).slice(0, 2),
            ...testCandidates().filter((x) => x.gemm.vecA && !x.gemm.f16k).slice(0, 1),
            ...fusedTestCandidates().slice(0, 2),
          ];
          const s = { n: 1, ci: 8, co: 8, h: 7, w: 7 };
          await show(await tuneWinograd(ctx, kernels, null, 4, s, cands));
          await show(await tuneWgrad(ctx, kernels, 4, s));
        } else if (big) {
          const kernels = await loadKernels(ctx, HARDWARE_TILES, "tiled");
          for (const n of tuneBatches) {
            const s = { n, ci: 256, co: 256, h, w };
            await show(await tuneWinograd(ctx, kernels, null, 4, s));
            // Training's weight-gradient GEMM: built-in against the `vp` variants.
            await show(await tuneWgrad(ctx, kernels, 4, s));
            if (benchHalf(ctx) === "f16") {
              // f16 storage, the f16 V/M and f16-product variants included (opt-in for plans:
              // their F(4x4) error).
              const half = await loadHalfKernels(ctx, HARDWARE_TILES, "f16");
              await show(await tuneWinograd(ctx, kernels, half, 4, s, hardwareCandidates(true)));
            }
          }
        }
      });
      const rest = async () => {
        for (const r of winogradTuneLog()) {
          if (!shown.has(r)) await show(r);
        }
      };
      // GPU graphs: "fused" (batch norm folded, bias/residual/ReLU in the conv epilogue, Winograd
      // by the selection table with the tuned GEMM on tiled kernels; the default), "fused-direct"
      // (the same without Winograd) and "unfused" (one dispatch per op, as in training).
      const inferCases: [string, InferMode, number[]][] = mode === "full"
        ? [
          ["small", "cpu", [1, 64]],
          ["small", "gpu-fused", [1, 64, 256]],
          ["default", "cpu", [1]],
          ["default", "gpu-fused", [1, 8, 64, 256]],
          ["default", "gpu-fused-legacy", [64, 256]],
          ["default", "gpu-fused-nobridge", [8, 64, 256]],
          ["default", "gpu-fused-f6", [64, 256]],
          ["default", "gpu-fused-f7", [64, 256]],
          ["default", "gpu-fused-f4", [64, 256]],
          ["default", "gpu-fused-direct", [64, 256]],
          ["default", "gpu-unfused", [64, 256]],
          ["default", "gpu-fused-f16", [1, 8, 64, 256]],
          ["default", "gpu-fused-f16-direct", [64, 256]],
        ]
        : mode === "quick"
        ? [
          ["default", "gpu-fused", [1, 8, 64, 256]],
          // The built-in GEMM's A/B (measured in sessions 15 and 23: the tuned GEMM wins) gave
          // its place to the bridges' A/B.
          ["default", "gpu-fused-nobridge", [256]],
          // The default times F(6x6) and F(7x7) against F(4x4) per layer shape (winograd6 and
          // winograd7 "tuned"): the A/B keeps F(4x4) (the tuner table's "F(4x4) or F(6x6) or
          // F(7x7)" rows show every tile's timings).
          ["default", "gpu-fused-f4", [256]],
          ["default", "gpu-fused-f16", [1, 8, 64, 256]],
        ]
        : [
          ["small", "cpu", [1]],
          ["small", "gpu-fused", [1, 8]],
          ["small", "gpu-unfused", [1, 8]],
          ["small", "gpu-fused-f16", [1, 8]],
        ];
      const picked = inferCases.filter(([, im]) => modes === null || modes.includes(im));
      if (modes && want("infer") && !picked.length) {
        const known = [...new Set(inferCases.map(([, im]) => im))].join(", ");
        throw new KibitzError("bad_args", `nn: modes= takes ${known} in ${mode} mode`);
      }
      for (const [name, im, batches] of want("infer") ? picked : []) {
        const one: [string, InferMode, number[]] = [
          im === "cpu" ? name : preset(name),
          im,
          onlyBatches ? batches.filter((b) => onlyBatches.includes(b)) : batches,
        ];
        if (!one[2].length) continue;
        await attempt(
          `inference ${one[0]} ${one[1]}`,
          () =>
            inferenceRows(ctx, [one], mode, cpuRows, inferRows, summary, opts.log, flush, profRows),
        );
      }
      if (want("infer")) await attempt("autotuner rows of the plans", rest);
      // Without a big mode, the tiny model: a quick check that the measurements run.
      if (want("latency")) {
        await attempt(
          "latency",
          () =>
            latencyTable(
              ctx,
              preset(big ? "default" : "tiny"),
              big,
              { log: opts.log, rows: latRows, summary, flush, profRows, hostRows },
              precisions,
            ),
        );
        // The small-batch plans' tuning (split-K, tile family, direct or F(4x4)) beside them.
        await attempt("autotuner rows of the latency plans", rest);
      }
      if (want("latency") && browser) {
        await attempt(
          "latency in Chromium",
          // Imported here: the bundler (npm esbuild) loads only for browser=1, so GPU machines
          // without the npm cache still run the rest of the bench.
          () =>
            import("./bench_browser.ts").then((m) =>
              m.browserLatencyRows(
                preset(big ? "default" : "tiny"),
                big,
                opts.log,
                latRows,
                summary,
              )
            ).then(flush),
        );
      }
    } else if (cpuRows && want("infer")) {
      const cases: [string, InferMode, number[]][] = mode === "full"
        ? [["small", "cpu", [1, 64]], ["default", "cpu", [1]]]
        : [["small", "cpu", [1]]];
      await inferenceRows(null, cases, mode, cpuRows, inferRows, summary, opts.log, flush);
    }
    const trainCases: [string, "cpu" | "gpu", number[]][] = mode === "full"
      ? [["small", "cpu", [16]], ["small", "gpu", [64, 256]], ["default", "gpu", [64, 256]]]
      : mode === "quick"
      ? [["default", "gpu", [256]]]
      : [["small", "cpu", [2]], ["small", "gpu", [2]]];
    const hyper = { lr: 0.01, momentum: 0.9, weightDecay: 1e-4 };
    for (const [name, backend, batches] of want("train") ? trainCases : []) {
      const preset = backend === "gpu" ? (model ?? name) : name;
      if ((backend === "gpu" && !ctx) || (backend === "cpu" && !cpuRows)) continue;
      await attempt(`training ${preset} ${backend}`, async () => {
        const cfg = netPreset(preset);
        const net = backend === "cpu"
          ? new CpuNet(initWeights(cfg, 1))
          : await GpuNet.create(ctx!, initWeights(cfg, 1));
        try {
          for (const batch of batches) {
            if (net instanceof GpuNet && batch > net.maxBatch()) {
              trainRows.push([
                preset,
                `${cfg.blocks}x${cfg.filters}`,
                backend,
                batch,
                null,
                null,
                "over binding limit",
              ]);
              continue;
            }
            const b = syntheticBatch(cfg, batch, 3);
            const steps = async (net: PolicyValueNet) => {
              await net.trainStep(b, hyper);
              if (backend === "gpu") await warmUp(ctx!, () => net.trainStep(b, hyper));
              let n = 0;
              const t0 = performance.now();
              do {
                await net.trainStep(b, hyper);
                n++;
              } while (performance.now() - t0 < (big ? 2000 : 1000));
              return { ms: (performance.now() - t0) / n, n };
            };
            // The step one at a time, and as the training loops run it (runTrainSteps: the next
            // step submitted before the previous one's losses come back): a row each, `what` in
            // the backend column, `note` after the timer.
            const stepRows = async (
              h: PolicyValueNet,
              what: string,
              note: () => Promise<string>,
            ) => {
              const one = await steps(h);
              const piped = await pipelinedSteps(
                h,
                b,
                Math.max(3, Math.round((big ? 2000 : 1000) / one.ms)),
              );
              const s = await note();
              const runs = [
                [one.ms, `mean of ${one.n}`],
                [
                  piped,
                  "2 steps in flight, steady state (from the 2nd step's losses to the last's)",
                ],
              ] as const;
              for (const [ms, how] of runs) {
                trainRows.push([
                  preset,
                  `${cfg.blocks}x${cfg.filters}`,
                  what,
                  batch,
                  ms,
                  batch * 1000 / ms,
                  `wall, ${how}${s}`,
                ]);
              }
              return { ms: one.ms, piped, note: s };
            };
            const { ms, piped, note } = await stepRows(net, backend, async () => {
              const gemms = net instanceof GpuNet ? await planGemms(net, batch) : "";
              return gemms ? `; Winograd GEMM ${gemms}` : "";
            });
            summary.set(`train:${preset}:${backend}:${batch}`, ms);
            summary.set(`trainPipe:${preset}:${backend}:${batch}`, piped);
            opts.log(
              `train ${preset} ${backend} batch ${batch}: ${ms.toFixed(1)} ms/step, ${
                piped.toFixed(1)
              } with 2 in flight${note}`,
            );
            await flush();
            // `gemm=`: the same step with each named Winograd GEMM forced (A/B in one run).
            for (const name of backend === "gpu" ? forcedGemms : []) {
              await attempt(`training ${preset} batch ${batch} with GEMM ${name}`, async () => {
                // The earlier build's step: the named forward GEMM, the built-in weight gradient.
                const forced = await GpuNet.create(ctx!, initWeights(cfg, 1), {
                  winogradGemm: name,
                  wgradGemm: "legacy",
                });
                try {
                  const f = await steps(forced);
                  trainRows.push([
                    preset,
                    `${cfg.blocks}x${cfg.filters}`,
                    backend,
                    batch,
                    f.ms,
                    batch * 1000 / f.ms,
                    `wall, mean of ${f.n}; Winograd GEMM forced: ${name}; ${await planGemms(
                      forced,
                      batch,
                    )}`,
                  ]);
                  opts.log(
                    `train ${preset} ${backend} batch ${batch}, GEMM forced ${name}: ${
                      f.ms.toFixed(1)
                    } ms/step (tuned: ${ms.toFixed(1)})`,
                  );
                  await flush();
                } finally {
                  forced.dispose();
                }
              });
            }
            // A/B on hardware: f16 training (the Winograd convs' V, M and dM stored as f16), F(4x4)
            // only (the default times F(6x6) and F(7x7) against it per layer), and each
            // layer's V kept from the forward pass for its weight gradient (opt-in: memory).
            const variants = [
              {
                what: "gpu f16 V/M",
                key: "trainF16",
                on: deviceHasF16(ctx!),
                opts: { trainPrecision: "f16" as const },
                label: "trainPrecision f16",
              },
              {
                what: "gpu F(4x4) only",
                key: "trainF4",
                on: true,
                opts: { winograd6: "off" as const, winograd7: "off" as const },
                label: "F(6x6) and F(7x7) not considered (winograd6, winograd7 off)",
              },
              {
                what: "gpu V kept",
                key: "trainKeepV",
                on: true,
                opts: { trainKeepV: true },
                label: "V kept for the weight gradient (trainKeepV)",
              },
            ];
            for (const v of net instanceof GpuNet && !ctx!.report.isFallback ? variants : []) {
              if (!v.on) continue;
              await attempt(`training ${preset} batch ${batch}, ${v.label}`, async () => {
                const h = await GpuNet.create(ctx!, initWeights(cfg, 1), v.opts);
                try {
                  let planMs = 0;
                  const f = await stepRows(h, v.what, async () => {
                    planMs = (await profilePlan(ctx!, await h.planFor(batch, true), {
                      warmMs: 0,
                      reps: 2,
                      samples: 1,
                    })).planMs;
                    return `; ${v.label} (plan ${planMs.toFixed(1)} GPU ms)`;
                  });
                  summary.set(`${v.key}:${preset}:${batch}`, f.piped);
                  summary.set(`${v.key}Gpu:${preset}:${batch}`, planMs);
                  opts.log(
                    `train ${preset} batch ${batch} ${v.label}: ${f.ms.toFixed(1)} ms/step, ${
                      f.piped.toFixed(1)
                    } with 2 in flight, plan ${planMs.toFixed(1)} GPU ms`,
                  );
                  await flush();
                } finally {
                  h.dispose();
                }
              });
            }
            if (net instanceof GpuNet) {
              // Where the step's GPU time goes: forward, backward (heads, tower), SGD, by kernel.
              const prof = await profilePlan(ctx!, await net.planFor(batch, true), {
                warmMs: 0,
                reps: 2,
                samples: 1,
              });
              profileRows(profRows, `training step, batch ${batch}`, prof);
              summary.set(`trainGpu:${preset}:${batch}`, prof.planMs);
              opts.log(
                `train batch ${batch} GPU: ${prof.planMs.toFixed(1)} ms; ${
                  prof.phases.map((p) => `${p.phase} ${p.ms.toFixed(1)}`).join(", ")
                }`,
              );
              await flush();
            }
          }
        } finally {
          net.dispose();
        }
      });
    }
    report.notes.push(
      "CPU rows are the TypeScript reference (single thread, f64 accumulation): a correctness twin, not a fast path.",
      "GPU conv rows time only the kernels (timestamp queries when the adapter has them; median of 5 passes, after 1.5 s of warm-up on hardware adapters so the clocks have boosted); backward-input = weight flip + implicit GEMM; Winograd rows run the GEMM variant the autotuner picked (named in the timer column).",
      ctx?.report.isFallback
        ? "The adapter is a software rasterizer (llvmpipe): its numbers say nothing about GPU speed, and it runs the direct (untiled) kernels; hardware adapters run the tiled implicit-GEMM kernels."
        : "Pass peak=<GFLOP/s> after the suite name to print the fraction of the GPU's fp32 peak.",
      `GPU inference batches of the ${HIVE_MOVES}-move models have ${BENCH_LEGAL[0]}-${
        BENCH_LEGAL[1]
      } legal moves a position, as Hive positions do (session 33), so calls read back only those moves' probabilities (compact readback; the A/B rows read back all ${HIVE_MOVES}); f16 plans take f16 planes where the adapter has shader-f16, as the AlphaZero evaluator encodes them. Their planes have ${
        Math.round(BENCH_OFF_BASE[0] * 16_224)
      }-${
        Math.round(BENCH_OFF_BASE[1] * 16_224)
      } values a position off 0 (in Hive's 16,224; real games: 66-601, mean 200), and calls of ${SPARSE_MIN_BATCH} or more positions upload them sparse on software adapters (session 34) and dense on hardware ones (session 43, KIBITZ_NN_SPARSE overrides); the upload A/B rows the other way.`,
    );
    if (model !== null && modelArg === null) {
      report.notes.push(
        `Software adapter: the inference, latency and training sections ran the ${model} model (model=default forces the 19 x 256 one: hours here); the figures check that the code paths run, not speeds.`,
      );
    } else if (modelArg !== null) {
      report.notes.push(`model=${modelArg}: inference, latency and training ran that preset.`);
    }
    if (mode === "smoke") {
      report.notes.push(
        "Small sizes; `quick=1` runs the issue's sizes on the GPU only (about 2-3 minutes on an H200); `--full` runs 256 filters at batch 1/64/256, the 19x256 default model and the CPU rows.",
      );
    }
    // Sections that measured nothing (CPU runs, `only=`) leave no empty table in the report.
    const kept = report.tables.filter((t) => t.rows.length > 0 || t === sumTable);
    report.tables.splice(0, report.tables.length, ...kept);
    await flush();
    return report;
  },
};

/**
 * The Winograd GEMM variants a net's batch-`batch` training plan runs ("legacy": built-in), and
 * its weight-gradient GEMM ("wgrad legacy" or "wgrad vp"); empty without Winograd.
 */
/**
 * "; F(6x6) on N layer shapes" (and F(7x7)) where a plan of `batch` runs some layers at a large
 * tile in place of the selection table's F(4x4) (the tuner's pick), else "".
 */
async function planTiles(net: GpuNet, batch: number, train: boolean): Promise<string> {
  if (net.winograd !== "auto") return "";
  const plan = await net.planFor(batch, train);
  // A layer shape running mixed tiles keeps its square tile's override (the tuner's comparison).
  const count = (m: Map<string, number>, t: number) =>
    [...m].filter(([k, x]) => x === t && !plan.mixedChoice.has(k)).length;
  const mixed = plan.mixedChoice.size;
  return (mixed
    ? `; mixed F(7x7)/F(6x6) tiles on ${mixed} layer shape${mixed > 1 ? "s" : ""}`
    : "") + [6, 7].map((t) => {
      const n = count(plan.winoOverride, t), g = count(plan.wgradOverride, t);
      return `${n ? `; F(${t}x${t}) on ${n} layer shape${n > 1 ? "s" : ""}` : ""}${
        g ? `; weight gradient F(${t}x${t}) on ${g}` : ""
      }`;
    }).join("");
}

async function planGemms(net: GpuNet, batch: number): Promise<string> {
  const plan = await net.planFor(batch, true);
  const names = [...plan.winoChoice.values()].map((k) => k.candidate.name);
  const labels = plan.ops.map((o) => o.label);
  if (!labels.some((l) => l.startsWith("winograd") || l.startsWith("wino."))) return "";
  // The weight-gradient GEMMs by variant (label suffix: VP, VPU, ...; none: the built-in one).
  const wgrad = labels.filter((l) => l.startsWith("winogradWgradGemm"))
    .map((l) => l.replace(/^winogradWgradGemm(Wide|H)?/, "").toLowerCase() || "legacy");
  return `${names.length ? [...new Set(names)].join(", ") : "legacy"}${
    wgrad.length ? `; wgrad ${[...new Set(wgrad)].join(", ")}` : ""
  }${await planTiles(net, batch, true)}`;
}

/**
 * The session-16 GEMM candidates' names (the bench's new-against-earlier table): vec4 U loads,
 * padded A rows or f16 products, at hardware and test sizes.
 */
const NEW_GEMMS = new Set([
  ...[...hardwareCandidates(true), ...testCandidates()]
    .filter((c) => c.gemm.vecA || c.gemm.padA || c.gemm.f16k)
    .map((c) => c.name),
  ...WGRAD_VARIANTS.map((v) => v.name),
]);

/** The split-K GEMM candidates' names (hardware and test sizes). */
const SPLIT_GEMMS = new Set(
  [...splitCandidates(), ...testCandidates()].filter((c) => c.gemm.splits).map((c) => c.name),
);

function fmtMs(v: string | number | null): string {
  return typeof v === "number" ? v.toFixed(3) : "-";
}

/**
 * For a Winograd tuning result, the best earlier candidate (the built-in GEMM and fused kernels
 * included) and the best session-16 one: [name, ms, GEMM ms, name, ms, GEMM ms, new / earlier];
 * null for other results or where a side has no timing.
 */
function newAgainstEarlier(r: WinoTuneResult): Row | null {
  if (!r.shape.startsWith("F") && !r.shape.startsWith("wgrad ")) return null;
  const ok = r.timings.filter((t) => t.ms !== null);
  const best = (xs: typeof ok) => xs.length ? xs.reduce((a, b) => (b.ms! < a.ms! ? b : a)) : null;
  // Split-K GEMMs (session 30) on neither side: the tuner table ranks them.
  const rest = ok.filter((t) => !SPLIT_GEMMS.has(t.name));
  const old = best(rest.filter((t) => !NEW_GEMMS.has(t.name)));
  const neu = best(rest.filter((t) => NEW_GEMMS.has(t.name)));
  if (!old || !neu) return null;
  return [old.name, old.ms, old.gemmMs, neu.name, neu.ms, neu.gemmMs, neu.ms! / old.ms!];
}

/**
 * The DRAM bytes the static traffic model gives a tuner row's path (unfused, fused output, fused
 * input + output; f32 V and M) at the row's tile (F(m) from the shape, or from an `F<m> ` row of
 * the mixed tiles' comparison; `mixed ` rows: the mixed tiles' slices), or null for the direct
 * convs, the split-K GEMMs and the bridged residual blocks (several convs a row).
 */
export function modelBytes(r: WinoTuneResult, name: string): number | null {
  if (!r.shape.startsWith("F") || r.shape.includes("bridged") || SPLIT_GEMMS.has(name)) {
    return null;
  }
  const d = r.dims, bytes = r.storage === "f32" ? 4 : 2;
  const tile = (m: number): m is WinogradTile => m === 2 || m === 4 || m === 6 || m === 7;
  const block = (cand: string) => {
    const c = [...hardwareCandidates(true), ...testCandidates()].find((x) => x.name === cand);
    return c?.gemm ? gemmBlock(c.gemm) : undefined;
  };
  if (r.shape.startsWith(MIXED_SHAPE)) {
    const at = name.indexOf(" "), kind = name.slice(0, at), cand = name.slice(at + 1);
    const t = mixedTiling(d.h, d.w), m = Number(kind.slice(1));
    if (kind === "mixed") {
      return t ? unfusedWinogradBytes(t.alpha, d.n * t.tiles, d, bytes, block(cand)?.bn) : null;
    }
    return tile(m) ? winogradTraffic(m, d, bytes, block(cand))[1].dramBytes : null;
  }
  const m = Number(r.shape.slice(1, r.shape.indexOf(":")));
  if (!tile(m)) return null;
  const t = winogradTraffic(m, d, bytes, block(name));
  return (name.startsWith("fused-io") ? t[3] : name.startsWith("fused-o") ? t[2] : t[1]).dramBytes;
}

type InferMode =
  | "cpu"
  | "gpu-fused"
  | "gpu-fused-legacy"
  | "gpu-fused-nobridge"
  | "gpu-fused-f6"
  | "gpu-fused-f7"
  | "gpu-fused-f4"
  | "gpu-fused-direct"
  | "gpu-unfused"
  | "gpu-fused-f16"
  | "gpu-fused-f16-direct";

/**
 * profilePlan's options for a plan's "GPU time alone": warm clocks and 4 replays back to back on
 * hardware, one cold replay on software adapters; one sample a dispatch.
 */
function aloneOpts(ctx: GpuContext): { warmMs: number; reps: number; samples: number } {
  const soft = ctx.report.isFallback;
  return { warmMs: soft ? 0 : 300, reps: soft ? 1 : 4, samples: 1 };
}

/**
 * The profile of the batch-`batch` inference plan of a net made from `weights` with `opts` (an
 * A/B's other plan), which is disposed after.
 */
async function profileVariant(
  ctx: GpuContext,
  weights: NetWeights,
  opts: Parameters<typeof GpuNet.create>[2],
  batch: number,
): Promise<PlanProfile> {
  const other = await GpuNet.create(ctx, weights, opts);
  try {
    return await profilePlan(ctx, await other.planFor(batch, false), aloneOpts(ctx));
  } finally {
    other.dispose();
  }
}

/** How a plan's tower chains are joined, from its ops' labels (bridge names end ".c" staged). */
export function planBridges(labels: string[]): "unbridged" | "plain" | "staged" {
  const bridges = labels.filter((l) => l.startsWith("wino.bridge."));
  if (!bridges.length) return "unbridged";
  return bridges.some((l) => l.endsWith(".c")) ? "staged" : "plain";
}

/**
 * The bridges' A/B (session 42) on hardware: the plan's GPU time alone with the tower's chains
 * joined each other way than the tuner chose (unbridged, one-thread-a-tile bridges, column-staged
 * bridges), one row each through `row`.
 */
export async function bridgeAb(
  ctx: GpuContext,
  net: GpuNet,
  batch: number,
  weights: NetWeights,
  netOpts: Parameters<typeof GpuNet.create>[2],
  row: (how: string, ms: number) => void,
  log: (line: string) => void,
): Promise<void> {
  const had = planBridges((await net.planFor(batch, false)).ops.map((o) => o.label));
  const ways = [
    ["unbridged", "without bridges", { winogradBridge: false }],
    ["plain", "one-thread-a-tile bridges", { bridgeStyle: "plain" as const }],
    ["staged", "column-staged bridges", { bridgeStyle: "staged" as const }],
  ] as const;
  for (const [way, how, opts] of ways) {
    if (way === had) continue;
    try {
      const p = await profileVariant(ctx, weights, { ...netOpts, ...opts }, batch);
      row(`tower ${how} (the tuner's: ${had})`, p.backToBackMs);
    } catch (e) {
      log(`bridges A/B (${how}): failed: ${(e as Error).message}`);
    }
  }
}

/** Sets `net`'s plane upload sparse (`on`) or dense, returning what sets it back. */
function switchSparse(net: GpuNet, on: boolean): () => void {
  const was = net.sparseUpload;
  net.sparseUpload = on;
  return () => void (net.sparseUpload = was);
}

/**
 * The plane upload's A/B at batch 256: the way `net` does not upload (its label, the summary key's
 * suffix) and what switches it there, returning what switches it back.
 */
export function uploadAb(
  net: GpuNet,
): { how: string; key: string; set: () => () => void } {
  const was = net.sparseUpload;
  return {
    how: was ? "planes uploaded dense" : "planes uploaded sparse",
    key: was ? "dense" : "sparse",
    set: () => switchSparse(net, !was),
  };
}

/** The inference rows: positions/s per (model, graph, batch), each written as it completes. */
async function inferenceRows(
  ctx: GpuContext | null,
  cases: [string, InferMode, number[]][],
  mode: Mode,
  cpuRows: boolean,
  rows: Row[],
  summary: Map<string, number>,
  log: (line: string) => void,
  flush: () => Promise<void>,
  profRows?: Row[],
): Promise<void> {
  const half = benchHalf(ctx);
  for (const [preset, im, batches] of cases) {
    const backend = im === "cpu" ? "cpu" : "gpu";
    if ((backend === "gpu" && !ctx) || (backend === "cpu" && !cpuRows)) continue;
    const f16 = im === "gpu-fused-f16" || im === "gpu-fused-f16-direct";
    if (f16 && !half) continue;
    const cfg = netPreset(preset);
    const weights = initWeights(cfg, 1);
    const netOpts: Parameters<typeof GpuNet.create>[2] = f16
      ? {
        ...(half === "f16"
          ? { fused: true, precision: "f16" as const }
          : { fused: true, tiled: true, tiles: TEST_TILES, f16Emulate: true }),
        winograd: im === "gpu-fused-f16-direct" ? "off" : undefined,
      }
      : {
        fused: im !== "gpu-unfused",
        winograd: im === "gpu-fused-direct"
          ? "off"
          : im === "gpu-fused-f6"
          ? 6
          : im === "gpu-fused-f7"
          ? 7
          : undefined,
        precision: "f32",
        // The A/B baselines: Winograd with the built-in GEMM instead of the tuned one; chained
        // Winograd convs with separate output and input transforms instead of bridges.
        ...(im === "gpu-fused-legacy" ? { winogradGemm: "legacy" } : {}),
        ...(im === "gpu-fused-nobridge" ? { winogradBridge: false } : {}),
        ...(im === "gpu-fused-f4" ? { winograd6: "off" as const, winograd7: "off" as const } : {}),
      };
    const net = backend === "cpu"
      ? new CpuNet(weights)
      : await GpuNet.create(ctx!, weights, netOpts);
    const graph = im === "cpu"
      ? "reference"
      : net instanceof GpuNet && net.precision !== "f32"
      ? `fused, ${net.precision} storage (f32 accumulation)${
        net.halfPlanes ? ", f16 planes" : ""
      }, Winograd ${net.winograd}`
      : net instanceof GpuNet && net.winograd !== "off"
      ? `${im.slice(4)}, Winograd ${net.winograd}${
        net.winogradGemm === "legacy" ? " (built-in GEMM, untuned)" : ""
      }${net.winogradBridge ? "" : " (no bridges: separate output and input transforms)"}${
        net.winograd6 === "off" && net.winograd7 === "off"
          ? " (F(6x6) and F(7x7) not considered)"
          : ""
      }`
      : im.slice(4);
    try {
      for (const batch of batches) {
        // One row per measured rate: positions/s and GFLOP/s by the direct count.
        const rateRow = (how: string, rate: number, key: string) => {
          const gflops = rate * 2 * forwardMacs(cfg) / 1e9;
          rows.push([preset, `${cfg.blocks}x${cfg.filters}`, backend, how, batch, rate, gflops]);
          summary.set(key, rate);
        };
        const rate = await inferRate(backend === "gpu" ? ctx : null, net, batch, budget(mode));
        const tiles = net instanceof GpuNet ? await planTiles(net, batch, false) : "";
        // f16 planes go where the plan casts its input; a plan without that cast widens them.
        const widened = net instanceof GpuNet && net.halfPlanes &&
            !(await net.planFor(batch, false)).halfInput
          ? " (f16 planes widened on the host: the plan has no input cast)"
          : "";
        rateRow(`${graph}${tiles}${widened}`, rate, `${preset}:${im}:${batch}`);
        log(`infer ${preset} ${backend} ${graph} batch ${batch}: ${rate.toFixed(1)} positions/s`);
        await flush();
        // Large batches also with two calls in flight, as the AlphaZero evaluator runs them: the
        // readback round trip of one overlaps the next one's GPU work (quick and full runs).
        if (
          net instanceof GpuNet && mode !== "smoke" && batch >= 64 && im.startsWith("gpu-fused")
        ) {
          // One row of `depth` calls of `input` in flight (key suffix `key`; `how` ends the label).
          const piped = async (input: NetBatch, depth: number, how: string, key: string) => {
            const { rate } = await pipelinedCallsPerS(net, input, depth, budget(mode));
            const perS = rate * batch;
            rateRow(
              `${graph}, ${depth} calls in flight${how}`,
              perS,
              `${preset}:${im}:${batch}:${depth}${key}`,
            );
            log(
              `infer ${preset} ${graph} batch ${batch}, ${depth} in flight${how}: ${
                perS.toFixed(1)
              } positions/s`,
            );
            await flush();
          };
          // The same with the net switched by `set`, which returns what restores it (null: the
          // net already runs that way; no row).
          const switched = async (
            input: NetBatch,
            depth: number,
            how: string,
            key: string,
            set: () => (() => void) | null,
          ) => {
            const restore = set();
            if (!restore) return;
            try {
              await piped(input, depth, how, key);
            } finally {
              restore();
            }
          };
          const asIs = () => () => {};
          const dense = () => switchSparse(net, false);
          const b = benchBatch(net, batch);
          await piped(b, 2, "", "");
          // The A/B rows at 256: the sparse upload against dense f16 planes (session 34; dense by
          // default on hardware since session 43), dense f16 planes against dense f32 ones
          // (session 33: the same GPU work, half the planes' upload), and the compact readback
          // against every move's.
          const upload = uploadAb(net);
          const ab = [
            [upload.how, upload.key, true, {}, upload.set],
            ["planes uploaded dense as f32", "f32", net.halfPlanes, { f32: true }, dense],
            [
              "every move's probability read back",
              "full",
              net.compactWidth > 0,
              { full: true },
              asIs,
            ],
          ] as const;
          for (const [how, key, applies, which, set] of ab) {
            if (applies && batch === 256) {
              await switched(benchBatch(net, batch, which), 2, `, ${how} (A/B)`, key, set);
            }
          }
          // The ceiling that pipelining approaches: the plan's GPU time alone, replayed back to back
          // with warm clocks (no upload, no readback).
          if (batch === 256 && ctx) {
            const prof = await profilePlan(ctx, await net.planFor(batch, false), aloneOpts(ctx));
            rateRow(
              `${graph}, GPU time alone (${prof.backToBackMs.toFixed(2)} ms a call)`,
              batch * 1000 / prof.backToBackMs,
              `${preset}:${im}:${batch}:gpu`,
            );
            // The same under sustained load (hardware: 32 replays, about 2.7 s at 19 x 256): do
            // the clocks explain what pipelined calls lose to the time above?
            if (!ctx.report.isFallback) {
              const n = 32;
              const sus = await sustainedReplays(ctx, await net.planFor(batch, false), n);
              if (sus) {
                const q = sus.quarter;
                rateRow(
                  `${graph}, GPU time alone under sustained load: replays 1-${q} ${
                    sus.firstMs.toFixed(2)
                  } ms, ${n - q + 1}-${n} ${
                    sus.lastMs.toFixed(2)
                  } ms a call (${n} back to back, one submit)`,
                  batch * 1000 / sus.lastMs,
                  `${preset}:${im}:${batch}:gpuSustained`,
                );
              }
            }
            // The mixed F(7x7)/F(6x6) tiles' A/B (session 35) on hardware: the plan's GPU time with
            // the tuner's choice flipped (on where it kept the square tiles, off where it took
            // them), profiled where it runs them.
            if (!ctx.report.isFallback && net.winograd === "auto") {
              try {
                const plan = await net.planFor(batch, false), had = plan.mixedChoice.size > 0;
                summary.set(
                  `${preset}:${im}:${batch}:gpuMixed${had ? "On" : "Off"}`,
                  prof.backToBackMs,
                );
                const p2 = await profileVariant(ctx, weights, {
                  ...netOpts,
                  winogradMixed: had ? "off" : "on",
                }, batch);
                const how = had ? "off" : "on";
                rateRow(
                  `${graph}, mixed F(7x7)/F(6x6) tiles ${how} (A/B), GPU time alone (${
                    p2.backToBackMs.toFixed(2)
                  } ms a call)`,
                  batch * 1000 / p2.backToBackMs,
                  `${preset}:${im}:${batch}:gpuMixedAb`,
                );
                summary.set(
                  `${preset}:${im}:${batch}:gpuMixed${had ? "Off" : "On"}`,
                  p2.backToBackMs,
                );
                if (profRows && !had) {
                  profileRows(
                    profRows,
                    `inference, batch ${batch}${f16 ? ", f16" : ""}, mixed tiles (A/B)`,
                    p2,
                  );
                }
              } catch (e) {
                log(`mixed tiles A/B, ${graph}: failed: ${(e as Error).message}`);
              }
              await flush();
              await bridgeAb(ctx, net, batch, weights, netOpts, (how, ms) =>
                rateRow(
                  `${graph}, ${how} (A/B), GPU time alone (${ms.toFixed(2)} ms a call)`,
                  batch * 1000 / ms,
                  `${preset}:${im}:${batch}:gpuBridge:${how}`,
                ), log);
              await flush();
            }
            // Where that time goes, by kernel (each dispatch in its own pass, one sample).
            if (profRows) {
              profileRows(profRows, `inference, batch ${batch}${f16 ? ", f16" : ""}`, prof);
              // The queue's copies around such a call (session 32): what pipelined calls pay
              // between one call's work and the next's (f16 planes: 2 bytes a value).
              await copyRows(ctx, profRows, `inference, batch ${batch}${f16 ? ", f16" : ""}`, {
                cfg,
                batch,
                planeBytes: isHalfPlanes(b.planes) ? 2 : 4,
                sparseBytes: net.sparseUpload ? sparseBytes(b, cfg) : null,
                width: net.compactWidth,
              });
              // What separates one call's work from the next on the GPU's timeline (session 41).
              const rec = await net.planFor(batch, false);
              const g = await gapRows(
                ctx,
                profRows,
                `inference, batch ${batch}${f16 ? ", f16" : ""}`,
                rec,
              );
              if (g) {
                summary.set(`${preset}:${im}:${batch}:gapOne`, g.onePassBoundaryMs);
                summary.set(`${preset}:${im}:${batch}:gapTwo`, g.twoSubmitsMs);
                summary.set(`${preset}:${im}:${batch}:gapMap`, g.mapBetweenMs);
              }
            }
            await flush();
            // Eight calls in flight, one row each way.
            const eight = (how: string, key: string, set: () => (() => void) | null) =>
              switched(b, 8, how, key, set);
            // As is: at least GROUP_DEPTH others outstanding at each submit, so map requests go
            // out every second call (the grouped mode, the default on hardware) and the queue
            // empties half as often as with two (each drain leaves the GPU idle until the next
            // submit). With 4 in flight a submit finds at most 3 others: the deferred mode.
            await eight("", "", asIs);
            // Map requests in groups of 4 (session 32): the queue empties every fourth call
            // (groups of G need G + 2 in flight).
            await eight(", map requests in groups of 4", "g4", () => {
              const group = net.mapGroup, mapMode = net.mapMode;
              net.setMapMode("grouped");
              net.mapGroup = 4;
              return () => {
                net.mapGroup = group;
                net.setMapMode(mapMode);
              };
            });
            // The inputs uploaded ahead (session 32; GpuNet.uploadAhead): each call's upload is
            // queued behind the previous call's work, into a buffer that work does not read,
            // instead of after the drain.
            await eight(", inputs uploaded ahead", "a", () => {
              if (net.uploadAhead) return null;
              net.uploadAhead = true;
              return () => void (net.uploadAhead = false);
            });
          }
        }
      }
    } finally {
      net.dispose();
    }
  }
}

/**
 * The readback floor, then per batch size: median ms per call, the plan's GPU ms and encoding ms,
 * and calls completed per second and per floor interval with 1, 4 and 16 calls in flight.
 */
async function latencyTable(
  ctx: GpuContext,
  preset: string,
  full: boolean,
  out: LatencyOut,
  precisions: NetPrecision[] = ["auto"],
): Promise<void> {
  const cfg = netPreset(preset);
  const auto = resolvePrecision(ctx, "auto", true, true);
  // The readback floor is the runtime's, whatever the network: measured once, shown with the
  // first network's rows.
  const floor = await readbackFloorMs(ctx);
  out.log(`readback floor (4 bytes): ${floor.toFixed(2)} ms`);
  out.summary.set("floor", floor);
  let floorShown = false;
  for (const want of precisions) {
    if (want === "f16" && !deviceHasF16(ctx)) {
      out.log("latency, f16: skipped (the device has no shader-f16)");
      continue;
    }
    const net = await GpuNet.create(ctx, initWeights(cfg, 1), { precision: want });
    // With several precisions, the rows name theirs, and the summary keeps the default's run.
    const label = precisions.length > 1 ? `${preset} ${net.precision}` : preset;
    const keep = precisions.length === 1 || net.precision === auto;
    if (!floorShown) {
      out.rows.push([
        label,
        "deno",
        "floor",
        null,
        floor,
        null,
        null,
        null,
        null,
        "4-byte copy + mapAsync round trip, median of 15",
      ]);
      await out.flush();
      floorShown = true;
    }
    try {
      await latencyRuns(ctx, net, label, full, keep ? out : { ...out, summary: new Map() }, floor);
    } finally {
      net.dispose();
    }
  }
}

/** Where the latency section writes: the log, its three tables' rows, the summary, and a flush. */
interface LatencyOut {
  log: (line: string) => void;
  rows: Row[];
  summary: Map<string, number>;
  flush: () => Promise<void>;
  profRows: Row[];
  hostRows: Row[];
}

/** latencyTable's rows for one network (one precision), against the readback floor `floor`. */
async function latencyRuns(
  ctx: GpuContext,
  net: GpuNet,
  preset: string,
  full: boolean,
  { log, rows, summary, flush, profRows, hostRows }: LatencyOut,
  floor: number,
): Promise<void> {
  const budget = full ? 1000 : 500;
  for (const size of [1, 8]) {
    const b = benchBatch(net, size);
    await net.infer(b);
    await warmUp(ctx, () => net.infer(b));
    const ms = await callMs(net, b, budget);
    const cost = await planCost(ctx, net, size);
    rows.push([
      preset,
      "deno",
      "one call",
      size,
      ms,
      cost.gpuMs,
      cost.encodeMs,
      cost.dispatches,
      1000 / ms * floor / 1000,
      cost.timer,
    ]);
    summary.set(`call:${size}`, ms);
    summary.set(`gpu:${size}`, cost.gpuMs);
    summary.set(`encode:${size}`, cost.encodeMs);
    log(
      `batch ${size}: ${ms.toFixed(2)} ms/call, GPU ${cost.gpuMs.toFixed(3)} ms, encode ${
        cost.encodeMs.toFixed(3)
      } ms, ${cost.dispatches} dispatches`,
    );
    await flush();
    for (const depth of [4, 16]) {
      const { rate, hostMs } = await pipelinedCallsPerS(net, b, depth, budget);
      rows.push([
        preset,
        "deno",
        `${depth} in flight`,
        size,
        1000 / rate,
        null,
        null,
        null,
        rate * floor / 1000,
        `${(rate * size).toFixed(0)} positions/s; host ${
          hostMs.toFixed(3)
        } ms per call (upload, encode, submit, map requests; see the host-side table)`,
      ]);
      summary.set(`pipe:${size}:${depth}`, rate * floor / 1000);
      summary.set(`host:${size}:${depth}`, hostMs);
      log(`batch ${size}, ${depth} in flight: ${rate.toFixed(1)} calls/s`);
      await flush();
    }
    // The host side of calls in flight, eager against deferred (session 17) and grouped (session
    // 30) map requests; at batch 1 also one call at a time (the deferred request must not add
    // latency).
    if (size === 1) await hostProfileRows(net, b, 1, budget, floor, preset, hostRows);
    const perFloor = await hostProfileRows(net, b, 16, budget, floor, preset, hostRows);
    summary.set(`pipeEager:${size}:16`, perFloor.get("eager") ?? NaN);
    summary.set(`pipeDeferred:${size}:16`, perFloor.get("deferred") ?? NaN);
    log(
      `batch ${size}, 16 in flight: ${
        [...perFloor].map(([m, v]) => `${m} ${v.toFixed(2)}`).join(", ")
      } calls per floor interval`,
    );
    await flush();
    // The plan's GPU time with warm clocks, back to back (what pipelined calls pay: when it
    // matches the 16-in-flight ms per call, pipelining is GPU-bound), and by phase and kernel.
    const prof = await profilePlan(ctx, await net.planFor(size, false), {
      warmMs: ctx.report.isFallback ? 0 : 300,
      reps: ctx.report.isFallback ? 1 : 16,
      samples: ctx.report.isFallback ? 1 : 3,
    });
    rows.push([
      preset,
      "deno",
      "GPU only, warm",
      size,
      null,
      prof.backToBackMs,
      null,
      cost.dispatches,
      null,
      `${prof.reps} replays back to back in one pass, per replay (one replay alone: ${
        prof.planMs.toFixed(3)
      } ms); ${prof.timer.split(";")[0]}`,
    ]);
    summary.set(`gpuWarm:${size}`, prof.backToBackMs);
    profileRows(profRows, `inference, batch ${size}`, prof);
    log(
      `batch ${size}: GPU warm ${prof.backToBackMs.toFixed(3)} ms per replay back to back, ${
        prof.planMs.toFixed(3)
      } alone; ${prof.phases.map((p) => `${p.phase} ${p.ms.toFixed(3)}`).join(", ")}`,
    );
    await flush();
  }
}

/** The per-phase / per-kernel GPU time table's title and columns around its rows. */
function profileTableShape(rows: Row[]) {
  return {
    title:
      "Where a plan's GPU time goes (warm clocks): every dispatch in its own timestamped pass, in sequence in one submit, summed by phase and kernel (the phase rows are the sums; `whole plan` = the plan as one pass)",
    columns: ["plan", "phase", "kernel", "dispatches", "GPU ms", "share of the sum", "timer"],
    rows,
  };
}

/** The bytes of `b`'s planes uploaded sparse (src/nn/sparse_planes.ts), or null if too dense. */
function sparseBytes(b: NetBatch, cfg: NetConfig): number | null {
  const area = cfg.height * cfg.width;
  const words = new Uint32Array(sparseLayout(b.size, cfg.planes, area).words);
  const used = packSparsePlanes(b.planes, b.size, cfg.planes, area, words);
  return used < 0 ? null : used * 4;
}

/**
 * Appends the queue's copy times of one inference call of `batch` positions (queueCopyTimes): the
 * inputs' upload (planes at `planeBytes` a value, and sparse at `sparseBytes` where the net
 * uploads them so; the mask packed as bits) and the outputs' readback copy (`width`
 * probabilities a position where the net reads back compact, else all).
 */
async function copyRows(
  ctx: GpuContext,
  rows: Row[],
  plan: string,
  { cfg, batch, planeBytes, sparseBytes, width }: {
    cfg: NetConfig;
    batch: number;
    planeBytes: number;
    sparseBytes: number | null;
    width: number;
  },
): Promise<void> {
  const pad = (b: number) => Math.ceil(b / 256) * 256;
  const mask = batch * 4 * maskWords(cfg.moves);
  const upload = batch * planeBytes * cfg.planes * cfg.height * cfg.width + mask;
  const readback = pad(4 * batch * (width || cfg.moves)) + pad(4 * batch);
  const timer =
    "gpu timestamps: the gap between two passes with the copy less without (median of 5)";
  const mb = (b: number) => (b / 1e6).toFixed(1);
  const row = (what: string, bytes: number, ms: number) =>
    rows.push([plan, "queue copies", `${what}, ${mb(bytes)} MB`, null, ms, "-", timer]);
  const t = await queueCopyTimes(ctx, { upload, readback });
  if (!t) return;
  row("upload (writeBuffer), dense planes", upload, t.uploadMs);
  if (sparseBytes !== null) {
    const sparse = await queueCopyTimes(ctx, { upload: sparseBytes + mask, readback: 4 });
    if (sparse) row("upload (writeBuffer), sparse planes", sparseBytes + mask, sparse.uploadMs);
  }
  row("readback copy", readback, t.readbackMs);
}

/**
 * Appends the GPU time lost between two runs of plan `rec` (submitGaps): at a pass boundary, at a
 * submit boundary, and with a map request between the submits (a drain in Deno).
 */
async function gapRows(
  ctx: GpuContext,
  rows: Row[],
  plan: string,
  rec: GpuRecorder,
): Promise<SubmitGaps | null> {
  const g = await submitGaps(ctx, (pass) => rec.encode(pass));
  if (!g) return null;
  const timer = "gpu timestamps: one run's end to the next's start (median of 3)";
  const row = (what: string, ms: number) =>
    rows.push([plan, "between calls", what, null, ms, "-", timer]);
  row("two passes in one command buffer", g.onePassBoundaryMs);
  row("two submits, the second queued while the first runs", g.twoSubmitsMs);
  row("two submits, a map request between (Deno: waits for the queue)", g.mapBetweenMs);
  return g;
}

/** Appends a plan profile's rows: whole plan, per phase, then the kernels of each phase. */
function profileRows(rows: Row[], plan: string, p: PlanProfile): void {
  const share = (ms: number) => p.sumMs > 0 ? `${(100 * ms / p.sumMs).toFixed(1)} %` : "-";
  rows.push([plan, "whole plan (one pass)", "-", null, p.planMs, null, p.timer]);
  rows.push([plan, "sum of the dispatches", "-", null, p.sumMs, share(p.sumMs), ""]);
  for (const ph of p.phases) {
    rows.push([plan, ph.phase, "(all)", ph.dispatches, ph.ms, share(ph.ms), ""]);
    const ks = p.rows.filter((r) => r.phase === ph.phase);
    for (const r of ks.slice(0, 10)) {
      rows.push([plan, ph.phase, r.kernel, r.dispatches, r.ms, share(r.ms), ""]);
    }
    if (ks.length > 10) {
      const rest = ks.slice(10);
      const ms = rest.reduce((a, r) => a + r.ms, 0);
      const n = rest.reduce((a, r) => a + r.dispatches, 0);
      rows.push([plan, ph.phase, `(${rest.length} other kernels)`, n, ms, share(ms), ""]);
    }
  }
}

/** The latency table's title and columns around its rows. */
function latencyTableShape(rows: Row[]) {
  return {
    title:
      "Latency and pipelining (fused graph): the readback floor, one call at a time, and N calls in flight (InferencePipeline); in Deno, and with browser=1 the same code in headless Chromium (the bundle, same machine)",
    columns: [
      "model",
      "runtime",
      "mode",
      "batch",
      "ms per call (wall)",
      "GPU ms of the plan",
      "encode + submit ms",
      "dispatches",
      "calls per floor interval",
      "note",
    ],
    rows,
  };
}

/** The issue's table (Kibitz rows) beside its targets, from the figures measured above. */
function summaryTable(
  m: Map<string, number>,
  convRows: (string | number | null)[][],
  full: boolean,
  winners: Map<string, string>,
) {
  const model = full ? "default" : "small";
  const conv = (dir: string) =>
    convRows.find((r) => r[0] === "gpu" && r[1] === 256 && r[2] === 256 && r[3] === dir)?.[4] ??
      null;
  const get = (k: string) => m.get(k) ?? null;
  const beyond = (get("gpu:1") ?? NaN) + (get("encode:1") ?? NaN);
  const beyondWarm = (get("gpuWarm:1") ?? NaN) + (get("encode:1") ?? NaN);
  const whole = (a: number | null, b: number | null) =>
    a === null && b === null
      ? null
      : [a, b].map((x) => x === null ? "-" : x.toFixed(0)).join(" / ");
  const pair = (a: number | null, b: number | null) =>
    a === null ? null : `${a.toFixed(3)} / ${b === null ? "-" : b.toFixed(3)}`;
  return {
    title: full
      ? "Issue 15 summary (the 19 x 256 model; fp32 unless the row says f16)"
      : "Issue 15 summary (smoke run: small and tiny models, not the issue's sizes; use quick=1 or --full)",
    columns: ["measure", "Kibitz", "target"],
    rows: [
      ["inference, batch 256, positions/s", get(`${model}:gpu-fused:256`), ">= 3150"],
      [
        "inference, batch 256, positions/s, 2 calls in flight (as the AlphaZero evaluator)",
        get(`${model}:gpu-fused:256:2`),
        ">= 3150",
      ],
      [
        "inference, batch 256, positions/s, 8 calls in flight, grouped map requests (f32 / f16)",
        whole(get(`${model}:gpu-fused:256:8`), get(`${model}:gpu-fused-f16:256:8`)),
        ">= 3150",
      ],
      [
        "inference, batch 256, positions/s, 8 calls in flight, inputs uploaded ahead (f32 / f16)",
        whole(get(`${model}:gpu-fused:256:8a`), get(`${model}:gpu-fused-f16:256:8a`)),
        ">= 3150",
      ],
      [
        "inference, batch 256, positions/s, 8 calls in flight, map requests in groups of 4 (f32 / f16)",
        whole(get(`${model}:gpu-fused:256:8g4`), get(`${model}:gpu-fused-f16:256:8g4`)),
        ">= 3150",
      ],
      [
        "inference f16 storage, batch 256, positions/s, 2 calls in flight (f16 planes where the adapter has shader-f16)",
        get(`${model}:gpu-fused-f16:256:2`),
        ">= 3150 (f16 storage is the default on hardware)",
      ],
      [
        "inference, batch 256, positions/s, 2 calls in flight, planes uploaded dense (A/B where they go up sparse; f32 / f16)",
        whole(get(`${model}:gpu-fused:256:2dense`), get(`${model}:gpu-fused-f16:256:2dense`)),
        "-",
      ],
      [
        "inference, batch 256, positions/s, 2 calls in flight, planes uploaded sparse (A/B where they go up dense: hardware; f32 / f16)",
        whole(get(`${model}:gpu-fused:256:2sparse`), get(`${model}:gpu-fused-f16:256:2sparse`)),
        "-",
      ],
      [
        "inference f16 storage, batch 256, positions/s, 2 calls in flight, planes uploaded dense as f32 (A/B)",
        get(`${model}:gpu-fused-f16:256:2f32`),
        "-",
      ],
      [
        "inference, batch 256, positions/s, 2 calls in flight, every move's probability read back (A/B; f32 / f16)",
        whole(get(`${model}:gpu-fused:256:2full`), get(`${model}:gpu-fused-f16:256:2full`)),
        "-",
      ],
      [
        "inference, batch 256, positions/s by the plan's GPU time alone (f32 / f16): the ceiling",
        whole(get(`${model}:gpu-fused:256:gpu`), get(`${model}:gpu-fused-f16:256:gpu`)),
        "-",
      ],
      [
        "inference, batch 256, positions/s by the plan's GPU time alone under sustained load (the last quarter of 32 replays in one submit; f32 / f16)",
        whole(
          get(`${model}:gpu-fused:256:gpuSustained`),
          get(`${model}:gpu-fused-f16:256:gpuSustained`),
        ),
        "-",
      ],
      [
        "inference, batch 256, positions/s by the plan's GPU time alone, without Winograd bridges (A/B)",
        get(`${model}:gpu-fused-nobridge:256:gpu`),
        "-",
      ],
      [
        "inference, batch 256, positions/s by the plan's GPU time alone, F(4x4) only (A/B)",
        get(`${model}:gpu-fused-f4:256:gpu`),
        "-",
      ],
      [
        "inference, batch 256, GPU ms a call by the plan alone, mixed F(7x7)/F(6x6) tiles on / off (one of them the A/B): f32",
        pair(get(`${model}:gpu-fused:256:gpuMixedOn`), get(`${model}:gpu-fused:256:gpuMixedOff`)),
        "-",
      ],
      [
        "inference f16 storage, batch 256, GPU ms a call by the plan alone, mixed F(7x7)/F(6x6) tiles on / off (one of them the A/B)",
        pair(
          get(`${model}:gpu-fused-f16:256:gpuMixedOn`),
          get(`${model}:gpu-fused-f16:256:gpuMixedOff`),
        ),
        "-",
      ],
      ...(["gpu-fused", "gpu-fused-f16"] as const).map((im) => [
        `inference${
          im === "gpu-fused" ? "" : " f16 storage"
        }, batch 256, GPU ms from one run of the plan to the next: one command buffer / two submits / a map request between`,
        get(`${model}:${im}:256:gapOne`) === null ? null : [
          get(`${model}:${im}:256:gapOne`),
          get(`${model}:${im}:256:gapTwo`),
          get(`${model}:${im}:256:gapMap`),
        ].map((x) => x === null ? "-" : x.toFixed(3)).join(" / "),
        "-",
      ]),
      [
        "inference, batch 256, positions/s, Winograd with the built-in (untuned) GEMM",
        get(`${model}:gpu-fused-legacy:256`),
        "-",
      ],
      ["inference, batch 64, positions/s", get(`${model}:gpu-fused:64`), "-"],
      ["inference, batch 8, positions/s", get(`${model}:gpu-fused:8`), "-"],
      ["inference, batch 1, ms per call", get("call:1"), "-"],
      ["readback floor, ms (Deno)", get("floor"), "-"],
      ["readback floor, ms (Chromium, browser=1)", get("browser:floor"), "< 1 (the issue's note)"],
      ["inference, batch 1, ms per call (Chromium, browser=1)", get("browser:call:1"), "-"],
      [
        "batch 1: GPU + encoding ms per call beyond the floor, the plan's GPU time from calls alone (the GPU idles through each floor and its clocks drop)",
        Number.isNaN(beyond) ? null : beyond,
        "<= 3",
      ],
      [
        "batch 1: GPU + encoding ms per call beyond the floor, the plan's GPU time warm (back to back)",
        Number.isNaN(beyondWarm) ? null : beyondWarm,
        "<= 3",
      ],
      ["batch 1: calls per floor interval, 16 in flight", get("pipe:1:16"), ">= 8"],
      [
        "batch 1: calls per floor interval, 16 in flight, eager map requests (before session 17)",
        get("pipeEager:1:16"),
        "-",
      ],
      [
        "batch 1: calls per floor interval, 16 in flight, deferred map requests (sessions 17-29)",
        get("pipeDeferred:1:16"),
        "-",
      ],
      [
        "batch 1 / 8: plan GPU ms, warm, back to back",
        pair(get("gpuWarm:1"), get("gpuWarm:8")),
        "-",
      ],
      [
        "batch 1 / 8: host ms per call, 16 in flight (upload, encode, submit, map requests)",
        pair(get("host:1:16"), get("host:8:16")),
        "-",
      ],
      ["training step, batch 256, ms", get(`train:${model}:gpu:256`), "<= 300"],
      [
        "training step, batch 256, ms, 2 steps in flight (the training loops), steady state",
        get(`trainPipe:${model}:gpu:256`),
        "<= 300",
      ],
      ["training step, batch 256, GPU ms (one pass)", get(`trainGpu:${model}:256`), "-"],
      [
        "training step, batch 256, ms, f16 V/M (trainPrecision f16), 2 in flight",
        get(`trainF16:${model}:256`),
        "<= 300",
      ],
      [
        "training step, batch 256, f16 V/M, GPU ms (one pass)",
        get(`trainF16Gpu:${model}:256`),
        "-",
      ],
      [
        "training step, batch 256, ms, F(4x4) only, 2 in flight / GPU ms (one pass)",
        pair(get(`trainF4:${model}:256`), get(`trainF4Gpu:${model}:256`)),
        "-",
      ],
      [
        "training step, batch 256, ms, V kept for the weight gradient, 2 in flight / GPU ms (one pass)",
        pair(get(`trainKeepV:${model}:256`), get(`trainKeepVGpu:${model}:256`)),
        "<= 300",
      ],
      ["3x3 conv forward, batch 256, 256 filters, ms (direct GEMM)", conv("forward"), "-"],
      [
        "3x3 conv forward, batch 256, 256 filters, ms (Winograd F(4x4), tuned GEMM)",
        conv("forward Winograd F(4x4)"),
        "1.78 (cuDNN fp32)",
      ],
      [
        "3x3 conv backward-input / backward-weight, batch 256, 256 filters, ms (Winograd F(4x4))",
        conv("backward-input Winograd F(4x4)") === null
          ? null
          : `${Number(conv("backward-input Winograd F(4x4)")).toFixed(2)} / ${
            Number(conv("backward-weight Winograd F(4x4)")).toFixed(2)
          }`,
        "-",
      ],
      ["Winograd GEMM variant picked, f32, batch 256", winners.get("f32:256") ?? null, "-"],
      ["Winograd GEMM variant picked, f16, batch 256", winners.get("f16:256") ?? null, "-"],
      ["inference f16 storage, batch 256, positions/s", get(`${model}:gpu-fused-f16:256`), "-"],
      ["inference f16 storage, batch 64, positions/s", get(`${model}:gpu-fused-f16:64`), "-"],
      ["inference f16 storage, batch 8, positions/s", get(`${model}:gpu-fused-f16:8`), "-"],
      ["inference f16 storage, batch 1, positions/s", get(`${model}:gpu-fused-f16:1`), "-"],
      [
        "3x3 conv forward, batch 256, 256 filters, ms (f16 storage, fused epilogue)",
        conv("forward fused f16"),
        "-",
      ],
      [
        "3x3 conv forward, batch 256, 256 filters, ms (f16 storage, Winograd F(4x4))",
        conv("forward Winograd F(4x4) f16"),
        "-",
      ],
    ],
  };
}
