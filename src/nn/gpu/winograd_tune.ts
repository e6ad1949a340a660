// The Winograd GEMM autotuner: on a hardware adapter, times every candidate tiling (and the built-in
// GEMM, "legacy") on the real layer shape and keeps the fastest, once per adapter, storage and
// shape. Software adapters do not tune (their timings say nothing about a GPU): they run the
// built-in GEMM unless a variant is forced (KIBITZ_NN_WINO_GEMM=<name> or GpuNet's winogradGemm).
import { KibitzError } from "../../errors.ts";
import { describeAdapter, type GpuContext } from "../../gpu/device.ts";
import { timeComputePass } from "../../gpu/timing.ts";
import { winogradGeometry, type WinogradTile } from "../winograd.ts";
import {
  defaultDirectTile,
  directDefaultSplits,
  directShapeKey,
  type DirectTile,
  type GpuRecorder,
  type RecordedOp,
  wgradTileOf,
  winoShapeKey,
} from "./backend.ts";
import { tileSize } from "./conv_gemm.ts";
import { ensureWinogradTile, type HalfKernels } from "./f16.ts";
import type { NnKernels } from "./kernels.ts";
import type { GpuTensor, TensorPool } from "./tensor.ts";
import { withScratch } from "./scratch_scope.ts";
import { withValidation } from "../../gpu/error_scope.ts";
import {
  f16ProductCandidates,
  fusedCandidates,
  fusedTestCandidates,
  gemmBlock,
  hardwareCandidates,
  loadWgradVariant,
  loadWinoKernels,
  narrowCandidates,
  needsF16Plan,
  splitCandidates,
  STAGED_KINDS,
  testCandidates,
  WGRAD_VARIANTS,
  type WgradChoice,
  wgradVariant,
  type WinoCandidate,
  type WinoKernels,
} from "./winograd_gemm.ts";
import { envValue } from "../../env.ts";
import { loadTuned, saveTuned } from "./tune_cache.ts";
import { bridgeFits, bridgeName, bridgeStagedFits, loadWinogradBridge } from "./winograd_bridge.ts";

/** The name of the built-in batched GEMM (convForwardSource, batched) among the candidates. */
export const LEGACY = "legacy";

/** One candidate's time (ms per Winograd conv: input transform, GEMM, output transform). */
export interface WinoTiming {
  name: string;
  ms: number | null;
  /** The GEMM dispatch alone (the rest of `ms` is the two transforms). */
  gemmMs: number | null;
  error?: string;
}

/** What the autotuner measured for one layer shape, and which candidate won. */
export interface WinoTuneResult {
  adapter: string;
  storage: string;
  shape: string;
  dims: WinoShape;
  winner: string;
  timings: WinoTiming[];
  timer: string;
  /** Read from the disk cache (timed by an earlier process), not timed now. */
  cached?: boolean;
}

/** A layer shape of a convolution: batch, channels in and out, board (kernel k, default 3). */
export interface WinoShape {
  n: number;
  ci: number;
  co: number;
  h: number;
  w: number;
  k?: number;
}

const tuned = new Map<string, Promise<WinoTuneResult>>();
let lastTimed = -Infinity;

/** Clock warm-up before timing: none on software adapters or within 3 s of the last tuning. */
function warmMs(ctx: GpuContext, ms: number): number {
  const cold = performance.now() - lastTimed > 3000;
  lastTimed = performance.now();
  return ctx.report.isFallback || !cold ? 0 : ms;
}

/**
 * The shape a plan's layer is tuned at: the batch rounded up to a power of two, so that callers
 * with many batch sizes (an MCTS evaluator) tune a few times, not once per size.
 */
export function bucketed(shape: WinoShape): WinoShape {
  return { ...shape, n: 2 ** Math.ceil(Math.log2(Math.max(1, shape.n))) };
}
const log: WinoTuneResult[] = [];

/**
 * The tuning under `key`, run once per process (later calls share it; a failed one is retried)
 * and kept in the disk cache (tune_cache.ts): a result stored there for the same kernels is used
 * without timing anything.
 */
export function memoTuned(
  key: string,
  run: () => Promise<WinoTuneResult>,
): Promise<WinoTuneResult> {
  let hit = tuned.get(key);
  if (!hit) {
    hit = (async () => {
      const stored = await loadTuned<WinoTuneResult>(key);
      if (stored && typeof stored.winner === "string" && Array.isArray(stored.timings)) {
        return { ...stored, cached: true };
      }
      const r = await run();
      await saveTuned(key, r);
      return r;
    })().then((r) => {
      log.push(r);
      return r;
    });
    hit.catch(() => tuned.delete(key));
    tuned.set(key, hit);
  }
  return hit;
}

/**
 * Forgets this process's tuning results (not the disk cache's), so the next plan reads the cache or
 * tunes again: for tests, and for a long-lived process whose adapter changed.
 */
export function forgetTunings(): void {
  tuned.clear();
  compared.clear();
}

/** Every tuning result of this process so far, in the order they finished (for the bench). */
export function winogradTuneLog(): readonly WinoTuneResult[] {
  return log;
}

/**
 * Whether f16 plans also tune the f16 V/M variants (KIBITZ_NN_WINO_F16VM=1): faster where the
 * transformed domain's traffic dominates, but with F(4x4)'s f16 error (see hardwareCandidates).
 */
export function tuneF16VM(): boolean {
  return envValue("KIBITZ_NN_WINO_F16VM") === "1";
}

/**
 * Whether the tuner also times the fused Winograd kernels: opt-in with KIBITZ_NN_WINO_FUSED=1. On
 * the H200 (2026-11-26) every fused kernel lost 3.6-12.8x to the best unfused tiling (10-37 ms against
 * 2.90 ms at batch 256, 2.7-9.5 ms against 0.76 ms at batch 64), so by default they only cost
 * tuning time; forcing one by name (KIBITZ_NN_WINO_GEMM) still works.
 */
export function fusedTuning(): boolean {
  return envValue("KIBITZ_NN_WINO_FUSED") === "1";
}

/** Whether plans autotune on hardware adapters (KIBITZ_NN_TUNE=0: built-in GEMM, default splits). */
export function tuningOn(): boolean {
  return envValue("KIBITZ_NN_TUNE") !== "0";
}

/**
 * Whether the tower timing tries column-staged bridges (unless KIBITZ_NN_WINO_BRIDGE_STAGED=0:
 * a device run sets it where their parity failed, so the tuner cannot pick them).
 */
export function stagedBridgesTuned(v = envValue("KIBITZ_NN_WINO_BRIDGE_STAGED")): boolean {
  return v !== "0";
}

/** Whether timeBridgedChain times a staged block on an h x w plane at F(m x m). */
function towerTriesStaged(m: WinogradTile, h: number, w: number): boolean {
  return stagedBridgesTuned() && bridgeStagedFits(m, h, w);
}

/** A bridged comparison's cache-key part: its tower rows, without staged bridges where off. */
function towerTag(bridged: boolean): string {
  return bridged ? `|tower${stagedBridgesTuned() ? "" : "|nostaged"}` : "";
}

/** The variant forced by KIBITZ_NN_WINO_GEMM, if any. */
export function forcedWinoGemm(): string | undefined {
  return envValue("KIBITZ_NN_WINO_GEMM") || undefined;
}

function findCandidate(name: string, f16Plan: boolean): WinoCandidate {
  const all: WinoCandidate[] = [
    ...hardwareCandidates(true),
    ...splitCandidates(),
    ...testCandidates(),
    ...fusedCandidates(),
    ...fusedTestCandidates(),
  ];
  const c = all.find((x) => x.name === name);
  if (!c || (needsF16Plan(c) && !f16Plan)) {
    const valid = [LEGACY, ...all.filter((x) => f16Plan || !needsF16Plan(x)).map((x) => x.name)];
    throw new KibitzError(
      "bad_args",
      `Winograd GEMM variant "${name}" is not one of ${valid.join(", ")}${
        c ? " (f16 V/M and f16-product variants need an f16 plan)" : ""
      }`,
    );
  }
  return c;
}

/**
 * The Winograd kernels a layer of `shape` runs: the forced variant when one is given (`force`, else
 * KIBITZ_NN_WINO_GEMM; "legacy" is the built-in GEMM), on software adapters (or with
 * KIBITZ_NN_TUNE=0) the built-in GEMM, on hardware adapters the autotuner's pick at the bucketed
 * shape. null means the built-in GEMM.
 */
export async function pickWinoKernels(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  m: WinogradTile,
  shape: WinoShape,
  force = forcedWinoGemm(),
): Promise<WinoKernels | null> {
  const act = half?.storage ?? "f32";
  if (force !== undefined) {
    if (force === LEGACY) return null;
    return await loadWinoKernels(ctx, m, act, findCandidate(force, act !== "f32"));
  }
  if (ctx.report.isFallback || !tuningOn()) return null;
  const r = await tuneWinograd(ctx, kernels, half, m, bucketed(shape));
  if (r.winner === LEGACY) return null;
  return await loadWinoKernels(ctx, m, act, findCandidate(r.winner, act !== "f32"));
}

/** A GEMM candidate's f16 V/M twin (`-h`): the same tiling, V and M stored as f16. */
export function halfTwin(c: WinoCandidate): WinoCandidate {
  if (c.fused) throw new KibitzError("bad_args", `${c.name}: fused kernels keep V and M in f32`);
  return c.half ? c : { ...c, half: true, name: `${c.name}-h` };
}

/** f16 training's Winograd kernels of one shape: forward (plain) and input-gradient (scaled). */
export interface TrainHalfKernels {
  forward: WinoKernels;
  scaled: WinoKernels;
}

/**
 * The `-h` GEMM f16 training runs on a layer shape: the forced variant's twin, else on hardware
 * the fastest of the hardware tilings' twins and the f16-product `-h` variants (tuned like
 * pickWinoKernels, memoized per shape), else (software adapters) the first `-h` twin of the family
 * the kernels' tiles belong to.
 */
export async function pickTrainHalfKernels(
  ctx: GpuContext,
  kernels: NnKernels,
  storage: "f16" | "f16-emulated",
  m: WinogradTile,
  shape: WinoShape,
  force = forcedWinoGemm(),
): Promise<TrainHalfKernels> {
  let c: WinoCandidate;
  if (force !== undefined && force !== LEGACY) c = halfTwin(findCandidate(force, true));
  else if (!ctx.report.isFallback && tuningOn() && storage === "f16") {
    // The f32 tilings' twins, and the f16-product ones (fN: vec4<f16> FMAs in chunks, the scaled
    // gradients keep their products far below f16's range).
    const twins = [
      ...hardwareCandidates(false).map(halfTwin),
      ...f16ProductCandidates(true).filter((c) => c.half),
    ];
    const r = await tuneWinograd(ctx, kernels, null, m, bucketed(shape), twins);
    const ok = r.timings.filter((t) => t.ms !== null && t.name !== LEGACY);
    if (!ok.length) {
      throw new KibitzError("shader_error", `no f16 V/M Winograd GEMM ran on ${r.shape}`);
    }
    const best = ok.reduce((a, b) => (b.ms! < a.ms! ? b : a)).name;
    c = twins.find((t) => t.name === best)!;
  } else {
    const family = kernels.tiles.small.wx < 16 ? testCandidates() : hardwareCandidates(false);
    c = halfTwin(family.find((x) => !x.half && !x.gemm?.f16k)!);
  }
  const o = { halfAs: storage };
  return {
    forward: await loadWinoKernels(ctx, m, "f32", c, o),
    scaled: await loadWinoKernels(ctx, m, "f32", c, { ...o, scaled: true }),
  };
}

/** Software adapters' repetitions a pass: about 20 ms of work, at most 20. */
const SOFTWARE_REPS = (ms: number) =>
  Math.max(1, Math.min(20, Math.floor(20 / Math.max(0.05, ms))));

/**
 * Times each run's whole plan and its GEMM dispatches alone (runs without any skip that pass),
 * best of 3 rounds after warming the clocks; on hardware each pass repeats the plan for at least
 * TUNE_PASS_MS of work, on software adapters `fallbackReps(one pass ms)` times. Per-run ms are per
 * repetition; `timer` says how they were timed.
 */
async function timeWholeAndGemm(
  ctx: GpuContext,
  runs: { name: string; rec: GpuRecorder; gemm: RecordedOp[] }[],
  fallbackReps: (ms: number) => number,
): Promise<{ best: Map<string, number>; bestGemm: Map<string, number>; timer: string }> {
  let timer = "wall";
  const best = new Map<string, number>(), bestGemm = new Map<string, number>();
  const reps = new Map<string, number>();
  // Raise the clocks first (an idle GPU runs its first passes several times slower).
  const warmUntil = performance.now() + warmMs(ctx, 400);
  do {
    await timeComputePass(ctx, (pass) => runs[0]?.rec.encode(pass));
  } while (performance.now() < warmUntil);
  for (let round = 0; round < 3; round++) {
    for (const e of runs) {
      let r = reps.get(e.name);
      if (r === undefined) {
        const once = await timeComputePass(ctx, (pass) => e.rec.encode(pass));
        const ms = once.gpuMs ?? once.wallMs;
        // Hardware: passes of at least TUNE_PASS_MS of work (the clocks stay up; see timeSplits).
        r = ctx.report.isFallback
          ? fallbackReps(ms)
          : Math.max(1, Math.min(400, Math.ceil(TUNE_PASS_MS / Math.max(0.005, ms))));
        reps.set(e.name, r);
      }
      const t = await timeComputePass(ctx, (pass) => {
        for (let i = 0; i < r!; i++) e.rec.encode(pass);
      });
      if (t.gpuMs !== null) timer = "gpu timestamps";
      best.set(e.name, Math.min(best.get(e.name) ?? Infinity, (t.gpuMs ?? t.wallMs) / r));
      if (!e.gemm.length) continue;
      const tg = await timeComputePass(ctx, (pass) => {
        for (let i = 0; i < r!; i++) {
          for (const op of e.gemm) {
            pass.setPipeline(op.pipeline);
            pass.setBindGroup(0, op.bindGroup);
            pass.dispatchWorkgroups(...op.groups);
          }
        }
      });
      bestGemm.set(e.name, Math.min(bestGemm.get(e.name) ?? Infinity, (tg.gpuMs ?? tg.wallMs) / r));
    }
  }
  const passes = ctx.report.isFallback ? "" : ` of ${TUNE_PASS_MS}+ ms`;
  return { best, bestGemm, timer: `${timer}, best of 3 passes${passes}` };
}

/** The input, filter transform and bias a Winograd conv of shape `s` is timed on. */
export function winoTuneInputs(
  pool: TensorPool,
  half: HalfKernels | null,
  m: WinogradTile,
  s: WinoShape,
): { x: GpuTensor; u: GpuTensor; bias: GpuTensor } {
  const hb = half ? (half.storage === "f16" ? 2 : 4) : null;
  return {
    x: pool.acquire([s.n, s.ci, s.h, s.w], "tune.x", hb),
    u: pool.acquire([(m + 2) * (m + 2), s.co, s.ci], "tune.u"),
    bias: pool.acquire([s.co], "tune.bias"),
  };
}

/** Tile columns up to which the tuner also times the split-K candidates (F(4x4): batch 10). */
export const SPLIT_MAX_TILES = 512;

/** Whether a layer of `shape` at F(m) has few enough tile columns for the split-K candidates. */
export function splitTuned(m: WinogradTile, shape: WinoShape): boolean {
  return winogradGeometry(m, shape.n, shape.h, shape.w).p <= SPLIT_MAX_TILES;
}

/**
 * The candidates tuneWinograd times by default: the hardware ones (f16 V/M ones in f16 plans with
 * KIBITZ_NN_WINO_F16VM=1), the fused ones with KIBITZ_NN_WINO_FUSED=1, and the split-K ones
 * where splitTuned.
 */
export function defaultCandidates(
  f16Plan: boolean,
  m: WinogradTile,
  shape: WinoShape,
): WinoCandidate[] {
  return [
    ...hardwareCandidates(f16Plan && tuneF16VM()),
    ...(fusedTuning() ? fusedCandidates() : []),
    ...(splitTuned(m, shape) ? splitCandidates() : []),
  ];
}

/**
 * Times the built-in GEMM and every candidate (default: defaultCandidates) on `shape`, once per
 * adapter, storage and shape (later calls share the result).
 */
export function tuneWinograd(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  m: WinogradTile,
  shape: WinoShape,
  candidates?: WinoCandidate[],
): Promise<WinoTuneResult> {
  const act = half?.storage ?? "f32";
  const cands = candidates ?? defaultCandidates(act !== "f32", m, shape);
  const key = `${describeAdapter(ctx.report)}|${act}|${JSON.stringify(kernels.tiles)}|${
    winoShapeKey(m, shape.n, shape.ci, shape.co, shape.h, shape.w)
  }|${cands.map((c) => c.name).join(",")}`;
  return memoTuned(key, () => timeCandidates(ctx, kernels, half, m, shape, cands));
}

async function timeCandidates(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  m: WinogradTile,
  s: WinoShape,
  cands: WinoCandidate[],
): Promise<WinoTuneResult> {
  const act = half?.storage ?? "f32";
  await ensureWinogradTile(ctx, kernels, half, m);
  const key = winoShapeKey(m, s.n, s.ci, s.co, s.h, s.w);
  const entries: { name: string; rec: GpuRecorder | null; error?: string }[] = [];
  const { best, bestGemm, timer } = await withScratch(
    ctx,
    kernels,
    async ({ pool, recorder }) => {
      const { x, u, bias } = winoTuneInputs(pool, half, m, s);
      for (const c of [null, ...cands]) {
        const rec = recorder();
        rec.half = half;
        try {
          if (c) rec.winoChoice.set(key, await loadWinoKernels(ctx, m, act, c));
          const { value: y, error } = await withValidation(
            ctx,
            () => rec.convWinogradFused(x, u, m, bias, null, true),
          );
          if (error) throw new Error(error.message);
          pool.release(y);
          entries.push({ name: c?.name ?? LEGACY, rec });
        } catch (e) {
          entries.push({ name: c?.name ?? LEGACY, rec: null, error: (e as Error).message });
        }
      }
      const isGemm = (label: string) => label.endsWith(".gemm") || label.startsWith("winogradGemm");
      const runs = entries.filter((e): e is { name: string; rec: GpuRecorder } => e.rec !== null)
        .map((e) => ({ ...e, gemm: e.rec.ops.filter((o) => isGemm(o.label)) }));
      const timed = await timeWholeAndGemm(ctx, runs, SOFTWARE_REPS);
      lastTimed = performance.now();
      return timed;
    },
  );
  const timings = entries.map((e) => ({
    name: e.name,
    ms: best.get(e.name) ?? null,
    gemmMs: bestGemm.get(e.name) ?? null,
    ...(e.error ? { error: e.error } : {}),
  }));
  const ok = timings.filter((t) => t.ms !== null) as { name: string; ms: number }[];
  if (!ok.length) throw new KibitzError("shader_error", `no Winograd GEMM variant ran on ${key}`);
  const winner = ok.reduce((a, b) => (b.ms < a.ms ? b : a)).name;
  return {
    adapter: describeAdapter(ctx.report),
    storage: act,
    shape: key,
    dims: s,
    winner,
    timings,
    timer,
  };
}

/** A direct conv's tuned configuration: split-K factor and tile family. */
export interface DirectPick {
  splits: number;
  tile: DirectTile;
}

/** One option of the direct-conv tuner. */
interface DirectOption extends DirectPick {
  name: string;
}

/**
 * The tuner's name of a direct-conv option: `splits=N` for the default tile family (as before),
 * `BMxBN splits=N` for the other one.
 */
export function directOptionName(
  tiles: NnKernels["tiles"],
  o: DirectPick,
  def: DirectTile,
): string {
  if (o.tile === def) return `splits=${o.splits}`;
  const { bm, bn } = tileSize(o.tile === "wide" ? tiles.wide : tiles.small);
  return `${bm}x${bn} splits=${o.splits}`;
}

/** Work per timed pass of the direct-conv tuner on hardware adapters, ms (see timeSplits). */
const TUNE_PASS_MS = 25;

/**
 * The split-K factor and tile family a direct (implicit-GEMM) fused conv of `shape` runs with: on
 * hardware adapters (unless KIBITZ_NN_TUNE=0) the fastest option of tuneDirectSplits, timed once
 * per adapter, storage and shape; elsewhere, or where there is nothing to choose, null (defaults).
 */
export async function pickDirectSplits(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
): Promise<DirectPick | null> {
  if (ctx.report.isFallback || !tuningOn()) return null;
  const s = bucketed(shape);
  const r = await tuneDirectSplits(ctx, kernels, half, s);
  if (!r) return null;
  const o = directOptions(kernels.tiles, s).find((x) => x.name === r.winner);
  return o ? { splits: o.splits, tile: o.tile } : null;
}

/**
 * The options of the direct-conv tuner for `shape`: with the default tile family, split-K factors
 * 1, half, the default and twice the default; where the default family is the wide one (128 x 128
 * on hardware: 12 workgroups for 256 channels at batch 1), also the small family (64 x 64: 44) at
 * 1, half, its default and twice its default. Empty where the default split is 1 and the family
 * has no alternative (large batches).
 */
export function directOptions(tiles: NnKernels["tiles"], shape: WinoShape): DirectOption[] {
  const k = shape.k ?? 3;
  const def = defaultDirectTile(shape.co, shape.n * shape.h * shape.w);
  const cap = Math.max(1, Math.floor((shape.ci * k * k) / 64));
  const out: DirectOption[] = [];
  const families: DirectTile[] = def === "wide" ? ["wide", "small"] : ["small"];
  for (const tile of families) {
    const d = directDefaultSplits(tiles, shape.n, shape.ci, shape.co, shape.h, shape.w, k, tile);
    if (tile === def && d <= 1) return [];
    for (const splits of new Set([1, Math.max(1, d >> 1), d, Math.min(2 * d, cap)])) {
      out.push({ splits, tile, name: directOptionName(tiles, { splits, tile }, def) });
    }
  }
  return out;
}

/**
 * Times the direct fused conv of `shape` at every option of directOptions (once per adapter,
 * storage and shape); null where there is nothing to choose.
 */
export async function tuneDirectSplits(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
): Promise<WinoTuneResult | null> {
  const k = shape.k ?? 3;
  const d = directDefaultSplits(kernels.tiles, shape.n, shape.ci, shape.co, shape.h, shape.w, k);
  const options = directOptions(kernels.tiles, shape);
  if (!options.length) return null;
  const key = directTuneKey(ctx, kernels, half, shape, k, "splits");
  return await memoTuned(key, () => timeSplits(ctx, kernels, half, shape, k, options, d));
}

/**
 * Times the direct fused conv of `shape` in its default configuration alone (where directOptions
 * has nothing to choose, e.g. 256 channels at batch 16 on hardware tiles), so that the
 * small-batch comparison still has a direct time to set against F(4x4).
 */
async function timeDirectDefault(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
): Promise<WinoTuneResult> {
  const k = shape.k ?? 3;
  const tile = defaultDirectTile(shape.co, shape.n * shape.h * shape.w);
  const d = directDefaultSplits(kernels.tiles, shape.n, shape.ci, shape.co, shape.h, shape.w, k);
  const only: DirectOption = { splits: d, tile, name: `splits=${d}` };
  const key = directTuneKey(ctx, kernels, half, shape, k, "direct-default");
  return await memoTuned(key, () => timeSplits(ctx, kernels, half, shape, k, [only], d));
}

/** The memo (and disk cache) key of a direct-conv tuning: adapter, storage, tiles, shape, what. */
function directTuneKey(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  k: number,
  what: string,
): string {
  return `${describeAdapter(ctx.report)}|${half?.storage ?? "f32"}|${
    JSON.stringify(kernels.tiles)
  }|${directShapeKey(s.n, s.ci, s.co, s.h, s.w, k)}|${what}`;
}

async function timeSplits(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  k: number,
  options: DirectOption[],
  d: number,
): Promise<WinoTuneResult> {
  const key = directShapeKey(s.n, s.ci, s.co, s.h, s.w, k, half !== null);
  const t = await withScratch(ctx, kernels, ({ pool, recorder }) => {
    const hb = half ? (half.storage === "f16" ? 2 : 4) : null;
    const x = pool.acquire([s.n, s.ci, s.h, s.w], "tune.x", hb);
    const w = pool.acquire([s.co, s.ci, k, k], "tune.w", hb);
    const bias = pool.acquire([s.co], "tune.bias");
    const recs = options.map((o) => {
      const rec = recorder();
      rec.half = half;
      rec.splitChoice.set(key, o.splits);
      rec.tileChoice.set(key, o.tile);
      pool.release(rec.convFused(x, w, bias, null, true));
      return { name: o.name, rec };
    });
    return timeUnderLoad(ctx, recs);
  });
  return {
    adapter: describeAdapter(ctx.report),
    storage: half?.storage ?? "f32",
    shape: `${key} direct, split-K`,
    dims: { ...s, k },
    ...t,
    timer: `${t.timer}; default ${d}`,
  };
}

/**
 * Times recorded plans against each other under load (the direct-conv and fully connected
 * tuners): small kernels run for microseconds, and between passes (one readback each, 11 ms in
 * Deno) an idle GPU lowers its clocks. So every plan runs in each warm-up pass, and timed passes
 * hold at least TUNE_PASS_MS of work on hardware adapters (20 repetitions at least; 20 on
 * software ones). Returns each plan's best ms of 3 passes (gemmMs null), the fastest plan's name
 * and how it was timed (the recorders stay with their scratch scope).
 */
export async function timeUnderLoad(
  ctx: GpuContext,
  recs: readonly { name: string; rec: GpuRecorder }[],
): Promise<Pick<WinoTuneResult, "winner" | "timings" | "timer">> {
  const best = new Map<string, number>();
  let timer = "wall";
  const warmUntil = performance.now() + warmMs(ctx, 300);
  do {
    await timeComputePass(ctx, (pass) => {
      for (let i = 0; i < 5; i++) for (const e of recs) e.rec.encode(pass);
    });
  } while (performance.now() < warmUntil);
  const repsOf = new Map<string, number>();
  for (const e of recs) {
    const once = await timeComputePass(ctx, (pass) => e.rec.encode(pass));
    const ms = Math.max(0.005, once.gpuMs ?? once.wallMs);
    repsOf.set(
      e.name,
      ctx.report.isFallback ? 20 : Math.max(20, Math.min(400, Math.ceil(TUNE_PASS_MS / ms))),
    );
  }
  for (let round = 0; round < 3; round++) {
    for (const e of recs) {
      const reps = repsOf.get(e.name)!;
      const t = await timeComputePass(ctx, (pass) => {
        for (let i = 0; i < reps; i++) e.rec.encode(pass);
      });
      if (t.gpuMs !== null) timer = "gpu timestamps";
      best.set(e.name, Math.min(best.get(e.name) ?? Infinity, (t.gpuMs ?? t.wallMs) / reps));
    }
  }
  lastTimed = performance.now();
  const reps = [...new Set(repsOf.values())].sort((a, b) => a - b).join("/");
  return {
    winner: recs.reduce((a, b) => (best.get(b.name)! < best.get(a.name)! ? b : a)).name,
    timings: recs.map((e) => ({ name: e.name, ms: best.get(e.name)!, gemmMs: null })),
    timer: `${timer}, best of 3 passes of ${reps} repetitions`,
  };
}

/**
 * Fewest F(4x4) tile columns at which the small-batch tuner also times Winograd against the direct
 * conv (the selection table takes F(4x4) from 1024 up; 26 x 26 boards have 49 tiles an image, so
 * this is every batch of a 26 x 26 board). It was 128 (batch 3 up) until session 23's H200 run
 * found batch 1's plan GPU-bound in pipelined calls, its direct 3x3 convs 82 % of its time, while
 * F(4x4) took batch 8's convs from 0.286 to 0.131 ms; the tuner keeps the faster of the two.
 */
export const SMALL_WINO_MIN_TILES = 49;

/**
 * Fewest input channels at which the small-batch tuner times Winograd against the direct conv. It
 * was 64 until session 32. The stem (24 planes in, 256 filters out) ran direct at every batch: at
 * batch 256 it took 0.91 of the f16 plan's 80.1 GPU ms on the H200 (session 31, 21 TFLOP/s), and
 * its F(7x7) GEMM would do 4.1 GFLOP against the direct conv's 19.1.
 */
export const SMALL_WINO_MIN_CI = 16;

/**
 * Whether the small-batch tuner times Winograd against the direct conv on a 3x3 layer of this
 * (bucketed) shape: SMALL_WINO_MIN_CI+ channels in, 64+ out, SMALL_WINO_MIN_TILES+ tile columns.
 */
export function smallWinoEligible(s: WinoShape): boolean {
  return s.ci >= SMALL_WINO_MIN_CI && s.co >= 64 &&
    winogradGeometry(4, s.n, s.h, s.w).p >= SMALL_WINO_MIN_TILES;
}

const compared = new Map<string, Promise<WinoTuneResult>>();

/**
 * The comparison `kind` (small-wino, large-wino, train-wino) on shape `s` under its key, run once
 * per process (later calls share it; a failed one is retried) and logged.
 */
function memoCompared(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  kind: string,
  candidates: WinoCandidate[] | undefined,
  run: () => Promise<WinoTuneResult>,
): Promise<WinoTuneResult> {
  const names = candidates ? `|${candidates.map((c) => c.name).join(",")}` : "";
  const key = directTuneKey(ctx, kernels, half, s, 3, `${kind}${names}`);
  let hit = compared.get(key);
  if (!hit) {
    hit = run().then((r) => {
      log.push(r);
      return r;
    });
    hit.catch(() => compared.delete(key));
    compared.set(key, hit);
  }
  return hit;
}

/** A tuning's fastest time (Infinity where nothing ran). */
function best(t: WinoTuneResult): number {
  return Math.min(...t.timings.map((x) => x.ms ?? Infinity));
}

/**
 * The tile and kernels of a comparison's winner when it is an F(m x m) row of one of `tiles`
 * ("F<m> <candidate>[ in a bridged chain]"; null kernels: the built-in GEMM), else (or where they
 * fail to load) null.
 */
async function winnerKernels<T extends WinogradTile>(
  ctx: GpuContext,
  half: HalfKernels | null,
  r: WinoTuneResult | null,
  tiles: readonly T[],
): Promise<{ m: T; kernels: WinoKernels | null } | null> {
  const m = tiles.find((t) => r?.winner.startsWith(`F${t} `));
  if (!r || m === undefined) return null;
  const act = half?.storage ?? "f32";
  const name = r.winner.slice(`F${m} `.length).replace(CHAINED, "");
  if (name === LEGACY) return { m, kernels: null };
  try {
    return { m, kernels: await loadWinoKernels(ctx, m, act, findCandidate(name, act !== "f32")) };
  } catch {
    return null;
  }
}

/**
 * Whether a fused 3x3 inference conv of `shape`, which the selection table keeps direct, runs
 * faster as F(4x4): on hardware adapters (unless KIBITZ_NN_TUNE=0, or a Winograd GEMM is forced),
 * for layers with SMALL_WINO_MIN_CI+ channels in, 64+ out and at least SMALL_WINO_MIN_TILES tile
 * columns, the best tuned direct conv (split-K and tile family) is timed against the best tuned
 * Winograd conv (input transform + GEMM + output transform; with `bridged`, where Ci = Co, also
 * the cost a conv adds to a chain of bridged Winograd convs: GEMM + bridge, see
 * timeBridgedChain, with one-thread-a-tile and with column-staged bridges), once per adapter,
 * storage and bucketed shape; the `large` tiles (F(6x6), F(7x7)) too. Returns the winning tile
 * and its kernels (null kernels: the built-in GEMM) when Winograd wins, and whether a chain with
 * column-staged bridges won (`staged`), else null (stay direct).
 */
export async function pickSmallBatchWinograd(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  force = forcedWinoGemm(),
  bridged = false,
  large: readonly LargeTile[] = [],
): Promise<{ m: WinogradTile; kernels: WinoKernels | null; staged: boolean } | null> {
  if (ctx.report.isFallback || !tuningOn() || force !== undefined) return null;
  const s = { ...bucketed(shape), k: 3 };
  if (!smallWinoEligible(s)) return null;
  // A failed comparison leaves the layer direct (what it ran before this option existed).
  const r = await compareSmallBatch(ctx, kernels, half, s, undefined, bridged, large)
    .catch(() => null);
  const won = await winnerKernels<WinogradTile>(ctx, half, r, [4, ...large]);
  return won && { ...won, staged: r!.winner.endsWith(STAGED_CHAINED_NAME) };
}

/** The suffix of a comparison's timing of a conv in a bridged chain. */
const CHAINED_NAME = " in a bridged chain";
/** The same with column-staged bridges. */
const STAGED_CHAINED_NAME = " in a staged-bridged chain";
const CHAINED = / in a (staged-)?bridged chain$/;

/**
 * The runs of timeBridgedChain, by name: a conv alone, with a residual, a bridged block, and the
 * block with column-staged bridges (where they fit the plane).
 */
export const CHAIN_RUNS = {
  one: "one conv",
  residual: "one conv with a residual",
  block: "three convs bridged as in a residual tower",
  staged: "three convs bridged as in a residual tower, column-staged bridges",
} as const;

/**
 * Times F(m x m) conv `name` (a candidate or LEGACY; default F(4x4)) on shape `s` (Ci = Co) as a
 * tower runs it: alone (input transform, GEMM, output transform with bias and ReLU), alone with a
 * residual added in its epilogue, and three convs joined by bridges (src/nn/gpu/winograd_bridge.ts)
 * the way a residual block joins them: the first bridge writes no activation, the second adds the
 * block's input and writes y (the next block's residual). Half a tower's convs add a residual, so
 * per conv a bridged tower costs (three - one) / 2 and an unbridged one (alone + with residual) /
 * 2. Session 41 (H200): timing two convs joined by a bridge without residual or y made bridges win
 * the tuner by 0.03 ms a conv, while the plan spent 0.74 ms in each bridge with y against 0.55 ms
 * without, and ran 2 % slower than unbridged (session 31: 86.0 against 84.3 ms). The block runs
 * again with column-staged bridges where towerTriesStaged. Once per adapter, storage, tile and
 * shape (disk-cached as the tuners are).
 */
export function timeBridgedChain(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  name: string,
  m: WinogradTile = 4,
): Promise<WinoTuneResult> {
  const tag = m === 4 ? "" : `|F${m}`;
  const tryStaged = towerTriesStaged(m, s.h, s.w);
  const kind = tryStaged ? "bridged-staged" : "bridged-block";
  const key = `${directTuneKey(ctx, kernels, half, s, 3, `${kind}|${name}${tag}`)}`;
  return memoTuned(key, async () => {
    const act = half?.storage ?? "f32";
    await ensureWinogradTile(ctx, kernels, half, m);
    return withScratch(ctx, kernels, async ({ pool, recorder }) => {
      const { x, u, bias } = winoTuneInputs(pool, half, m, s);
      const wk = name === LEGACY
        ? null
        : await loadWinoKernels(ctx, m, act, findCandidate(name, act !== "f32"));
      const runs: { name: string; rec: GpuRecorder; gemm: RecordedOp[] }[] = [];
      const names: (typeof CHAIN_RUNS)[keyof typeof CHAIN_RUNS][] = [
        CHAIN_RUNS.one,
        CHAIN_RUNS.residual,
        CHAIN_RUNS.block,
      ];
      if (tryStaged) names.push(CHAIN_RUNS.staged);
      const shape = winoShapeKey(m, s.n, s.ci, s.co, s.h, s.w);
      let stagedError: string | null = null;
      for (const run of names) {
        const rec = recorder();
        rec.half = half;
        rec.winograd = m;
        if (wk) rec.winoChoice.set(shape, wk);
        const staged = run === CHAIN_RUNS.staged;
        if (staged) rec.stagedBridges.add(shape);
        try {
          if (run === CHAIN_RUNS.block || staged) {
            const plan = rec.winoPlanOf(s.n, s.ci, s.co, s.h, s.w, (m + 2) * (m + 2));
            for (const keepY of [false, true]) {
              const spec = rec.bridgeSpec(plan, plan, s.h, s.w, keepY, staged);
              if (!spec) throw new KibitzError("bad_state", `no bridge for ${JSON.stringify(s)}`);
              rec.bridges.set(bridgeName(spec), await loadWinogradBridge(ctx, spec));
            }
          }
          const { value: y, error } = await withValidation(
            ctx,
            () => recordTowerRun(rec, run, x, u, m, bias),
          );
          if (error) throw new Error(error.message);
          pool.release(y);
        } catch (e) {
          // A staged block that fails to compile or record loses its row only: the tower's
          // other three runs still decide between bridged and unbridged.
          if (!staged) throw e;
          stagedError = `column-staged bridges failed: ${(e as Error).message}`;
          continue;
        }
        runs.push({ name: run, rec, gemm: [] });
      }
      const { best, timer } = await timeWholeAndGemm(ctx, runs, SOFTWARE_REPS);
      lastTimed = performance.now();
      const timings: WinoTiming[] = runs.map((r) => ({
        name: r.name,
        ms: best.get(r.name) ?? null,
        gemmMs: null,
      }));
      if (stagedError) {
        timings.push({ name: CHAIN_RUNS.staged, ms: null, gemmMs: null, error: stagedError });
      }
      return {
        adapter: describeAdapter(ctx.report),
        storage: act,
        shape: `${winoShapeKey(m, s.n, s.ci, s.co, s.h, s.w)} ${name}, a bridged residual block`,
        dims: s,
        winner: CHAIN_RUNS.block,
        timings,
        timer,
      };
    });
  });
}

/**
 * Records one of timeBridgedChain's runs on `rec` (its bridges loaded for the block): a conv, a
 * conv adding x as its residual, or a residual block's two convs and the next block's first, joined
 * by a bridge that writes no activation and one that adds x and writes y; returns the last output.
 */
export function recordTowerRun(
  rec: GpuRecorder,
  run: (typeof CHAIN_RUNS)[keyof typeof CHAIN_RUNS],
  x: GpuTensor,
  u: GpuTensor,
  m: WinogradTile,
  bias: GpuTensor,
): GpuTensor {
  if (run === CHAIN_RUNS.one) return rec.convWinogradFused(x, u, m, bias, null, true);
  if (run === CHAIN_RUNS.residual) return rec.convWinogradFused(x, u, m, bias, x, true);
  // The block and the staged block record alike: rec.stagedBridges picks the bridges.
  const y1 = rec.convWinogradFused(x, u, m, bias, null, true, { u, keepY: false });
  const y2 = rec.convWinogradFused(y1, u, m, bias, x, true, { u, keepY: true });
  return rec.convWinogradFused(y2, u, m, bias, null, true);
}

/**
 * A conv's cost in a tower from timeBridgedChain's result: bridged ((block - one) / 2), with
 * column-staged bridges (`staged`: the same over the staged block where it was timed, its ms null
 * where noisy) and unbridged ((one + residual) / 2); an error where a timing is missing or noisy
 * (a block of three no slower than one conv), with the reason.
 */
export function towerCosts(
  chain: WinoTuneResult,
):
  | { bridged: number; staged: { ms: number | null; error?: string } | null; unbridged: number }
  | { error: string } {
  const ms = (n: string) => chain.timings.find((t) => t.name === n)?.ms ?? null;
  const one = ms(CHAIN_RUNS.one), res = ms(CHAIN_RUNS.residual), block = ms(CHAIN_RUNS.block);
  if (one === null || res === null || block === null) {
    return { error: `a tower timing is missing (${one}, ${res}, ${block} ms)` };
  }
  if (block <= one) {
    return { error: `three bridged convs timed ${block} ms, not more than one's ${one}` };
  }
  const row = chain.timings.find((t) => t.name === CHAIN_RUNS.staged);
  const staged = row?.ms ?? null;
  const stagedMs = staged !== null && staged > one ? (staged - one) / 2 : null;
  return {
    bridged: (block - one) / 2,
    staged: row ? { ms: stagedMs, ...(row.error ? { error: row.error } : {}) } : null,
    unbridged: (one + res) / 2,
  };
}

/**
 * The direct-against-Winograd comparison of pickSmallBatchWinograd (cached, logged): the best
 * tuned (or the default) direct conv against the best F(4x4) conv on shape `s`.
 */
export function compareSmallBatch(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  candidates?: WinoCandidate[],
  bridged = false,
  large: readonly LargeTile[] = [],
): Promise<WinoTuneResult> {
  const act = half?.storage ?? "f32";
  return memoCompared(
    ctx,
    kernels,
    half,
    s,
    `small-wino${towerTag(bridged)}${large.length ? `|large${large.join("")}` : ""}`,
    candidates,
    async () => {
      // Nothing to tune in the direct conv (no split-K or tile options) still leaves its default
      // to time: at batch 16 on hardware tiles this comparison was skipped, and the tower ran
      // direct at 43 ms a call on the H200 against 19 for batch 8, which F(4x4) had won.
      const direct = await tuneDirectSplits(ctx, kernels, half, s) ??
        await timeDirectDefault(ctx, kernels, half, s);
      const wino = await tuneWinograd(ctx, kernels, half, 4, s, candidates);
      const four = await tileRows(ctx, kernels, half, s, 4, wino, bridged);
      const timings: WinoTiming[] = [
        { name: `direct ${direct.winner}`, ms: best(direct), gemmMs: null },
        four.lone,
      ];
      // In a tower the conv is one of a chain: bridged, it costs its GEMM and a bridge (one thread
      // a tile or column-staged).
      for (const t of [four.chained, four.staged]) if (t) timings.push(t);
      // F(6x6) and F(7x7) (over F(4x4)'s fastest GEMMs): fewer tiles to pad at small batches
      // (batch 1 on 26 x 26: 25 or 16 tiles in 32 columns against 49 in 64).
      for (const m of large) {
        const t = await tuneLarge(ctx, kernels, half, m, s, wino, candidates, true);
        const rows = await tileRows(ctx, kernels, half, s, m, t, bridged);
        timings.push(rows.lone, ...[rows.chained, rows.staged].filter((x) => x !== null));
      }
      const fastest = timings.filter((t) => t.ms !== null)
        .reduce((a, b) => (b.ms! < a.ms! ? b : a));
      const r: WinoTuneResult = {
        adapter: describeAdapter(ctx.report),
        storage: act,
        shape: `${directShapeKey(s.n, s.ci, s.co, s.h, s.w, 3, half !== null)} direct or ${
          tileNames([4, ...large])
        }`,
        dims: s,
        winner: fastest.name,
        timings,
        timer: "the two tuners' best times",
      };
      return r;
    },
  );
}

/**
 * Tile m's rows in a comparison from its tuning `t`: its best conv alone ("F<m> <candidate>"), and
 * with `bridged`, where Ci = Co and the plane fits a bridge, what it costs a conv in a residual
 * tower bridged ("F<m> <candidate> in a bridged chain"), bridged column-staged (`staged`, "... in
 * a staged-bridged chain", where timed) and unbridged (`tower`, which replaces the lone row where
 * every tile has it: see compareLargeTiles), from timeBridgedChain. A failed or noisy tower timing
 * is a chained row with its reason and no time: it cannot win.
 */
async function tileRows(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  m: WinogradTile,
  t: WinoTuneResult,
  bridged: boolean,
): Promise<
  {
    lone: WinoTiming;
    chained: WinoTiming | null;
    staged: WinoTiming | null;
    tower: WinoTiming | null;
  }
> {
  const ms = best(t);
  const lone = { name: `F${m} ${t.winner}`, ms: Number.isFinite(ms) ? ms : null, gemmMs: null };
  const chains = bridged && lone.ms !== null && s.ci === s.co && bridgeFits(m, s.h, s.w);
  if (!chains) return { lone, chained: null, staged: null, tower: null };
  const name = `F${m} ${t.winner}${CHAINED_NAME}`;
  const stagedName = `F${m} ${t.winner}${STAGED_CHAINED_NAME}`;
  let costs: ReturnType<typeof towerCosts>;
  try {
    costs = towerCosts(await timeBridgedChain(ctx, kernels, half, s, t.winner, m));
  } catch (e) {
    costs = { error: (e as Error).message };
  }
  if ("error" in costs) {
    const failed = (n: string) => ({ name: n, ms: null, gemmMs: null, error: costs.error });
    const staged = towerTriesStaged(m, s.h, s.w) ? failed(stagedName) : null;
    return { lone, chained: failed(name), staged, tower: null };
  }
  const staged = costs.staged === null ? null : {
    name: stagedName,
    ms: costs.staged.ms,
    gemmMs: null,
    ...(costs.staged.error ? { error: costs.staged.error } : {}),
  };
  return {
    lone,
    chained: { name, ms: costs.bridged, gemmMs: null },
    staged,
    tower: { name: lone.name, ms: costs.unbridged, gemmMs: null },
  };
}

/** The tiles past F(4x4) that the tuners may time against it where the table takes F(4x4). */
export type LargeTile = 6 | 7;

/** "F(4x4) or F(6x6) or F(7x7)": the tiles a comparison times, in its shape label. */
function tileNames(tiles: readonly WinogradTile[]): string {
  return tiles.map((m) => `F(${m}x${m})`).join(" or ");
}

/**
 * Shape `s` tuned at the large tile m once F(4x4) was (`four`): over `candidates` where given,
 * else over F(4x4)'s fastest (largeCandidates), with `narrow` the 16-column blocks too (small
 * batches: batch 1's F(7x7) fills 16 columns), and their split-K twins where splitTuned. F(7x7)
 * leaves out the f16 V/M (`-h`) variants: their error there is 6.0e-2 of the largest output
 * against F(4x4)'s 7.2e-3 (CPU twin, 64 channels on 26 x 26).
 */
function tuneLarge(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  m: LargeTile,
  s: WinoShape,
  four: WinoTuneResult,
  candidates?: WinoCandidate[],
  narrow = false,
): Promise<WinoTuneResult> {
  const narrowSplits = narrow && splitTuned(m, s)
    ? splitCandidates().filter((c) => gemmBlock(c.gemm).bn === 16)
    : [];
  const list = candidates ??
    largeCandidates(four, narrow ? [...narrowCandidates(), ...narrowSplits] : []);
  const usable = m === 7 ? list?.filter((c) => !c.half) : list;
  return tuneWinograd(ctx, kernels, half, m, s, usable);
}

/** How many of F(4x4)'s fastest GEMM candidates a large tile is tuned over on the same shape. */
export const LARGE_CANDIDATES = 4;

/**
 * The candidates a large tile (F(6x6), F(7x7)) is tuned over once F(4x4) was tuned on the same
 * shape (`four`; null: F(4x4) itself, the default list): F(4x4)'s LARGE_CANDIDATES fastest (the
 * built-in GEMM is always timed), and the fastest one's plane-staged and column-staged twins
 * where it has them (where it is a twin itself: its plain base and the base's twins). The tiles
 * run the same batched GEMM on similar shapes (on 26 x 26, 64 or 81 slices of 25 or 16 tiles a
 * board against 36 of 49), and the full list would multiply the tuning time of a plan.
 */
export function largeCandidates(
  four: WinoTuneResult | null,
  extra: readonly WinoCandidate[] = [],
): WinoCandidate[] | undefined {
  if (!four) return undefined;
  const f16Plan = four.storage !== "f32";
  const best = four.timings.filter((t) => t.ms !== null && t.name !== LEGACY)
    .sort((a, b) => a.ms! - b.ms!)
    .slice(0, LARGE_CANDIDATES)
    .map((t) => findCandidate(t.name, f16Plan));
  const out = [...best];
  // The fastest one's plane-staged output twin (session 29): a large tile's output transform stores
  // m floats apart a thread, so it may win there where it did not at F(4x4). And its column-staged
  // twins (session 32): a large tile's thread loads (m + 2)^2 values of M in the plain transform.
  // Where the fastest is itself a twin, its plain base and the base's other twins: in session 41
  // F(4x4)'s four fastest were all column-staged, so F(7x7) never timed the plain tiling that had
  // won it in session 31 (2.041 ms in f16, against 2.088 for the `-ic` twin it took). f16 V/M
  // candidates (`-h`) are passed over: F(7x7) leaves them out (tuneLarge).
  const first = best.find((c) => !c.fused && !c.half);
  const base = first && (first.planeOut || first.stagedOut || first.stagedIn)
    ? stagedTwin(first.name.replace(/-(o|c|i|ic)(\d+)?$/, ""), "", f16Plan)
    : first;
  const twins = base
    ? [base, ...["o", ...STAGED_KINDS].map((x) => stagedTwin(base.name, `-${x}`, f16Plan))]
    : [];
  for (const c of [...twins.filter((t) => t !== null), ...extra]) {
    if (!out.some((b) => b.name === c.name)) out.push(c);
  }
  return out;
}

/** The `-o` (plane-staged), `-c`, `-i` or `-ic` (column-staged) twin of candidate `name`, if any. */
function stagedTwin(name: string, suffix: string, f16Plan: boolean): WinoCandidate | null {
  try {
    return findCandidate(`${name}${suffix}`, f16Plan);
  } catch {
    return null;
  }
}

/**
 * Whether F(6x6) is considered where the selection table takes F(4x4) (GpuNet's `winograd6`,
 * KIBITZ_NN_WINO6): "tuned" times both tiles per layer shape on hardware adapters (software
 * adapters stay at F(4x4)), "on" takes F(6x6) everywhere the table takes F(4x4), "off" never.
 */
export type Winograd6Policy = "tuned" | "on" | "off";

/** Parses a tile policy ("tuned", "on" or "off") read from the variable `name`. */
export function parseTilePolicy(name: string, v: string): Winograd6Policy {
  if (v === "tuned" || v === "on" || v === "off") return v;
  throw new KibitzError("bad_args", `${name} must be tuned, on or off, got "${v}"`);
}

/** Parses a Winograd6Policy (the KIBITZ_NN_WINO6 values). */
export function parseWinograd6(v: string): Winograd6Policy {
  return parseTilePolicy("KIBITZ_NN_WINO6", v);
}

/**
 * Whether F(7x7) is considered where the selection table takes F(4x4) (GpuNet's `winograd7`,
 * KIBITZ_NN_WINO7), as Winograd6Policy: "tuned" times it beside F(4x4) (and F(6x6)) per layer
 * shape on hardware adapters, "on" takes it everywhere the table takes F(4x4) (before F(6x6)'s
 * "on"), "off" never.
 */
export type Winograd7Policy = Winograd6Policy;

/** Parses a Winograd7Policy (the KIBITZ_NN_WINO7 values). */
export function parseWinograd7(v: string): Winograd7Policy {
  return parseTilePolicy("KIBITZ_NN_WINO7", v);
}

/**
 * Whether a bridged comparison's winner is a lone row: its tile runs faster with separate output
 * and input transforms than joined by bridges.
 */
export function unbridgedWinner(r: WinoTuneResult): boolean {
  return r.timer.includes("lone and chained") && !CHAINED.test(r.winner);
}

/** Whether a bridged comparison's winner runs its tower joined by column-staged bridges. */
export function stagedBridgeWinner(r: WinoTuneResult): boolean {
  return r.timer.includes("lone and chained") && r.winner.endsWith(STAGED_CHAINED_NAME);
}

/**
 * How the tower convs of `shape` are joined by pickLargeBatchWinograd's comparison (the same
 * arguments; its cached result), on hardware adapters with bridges: unbridged where a lone row
 * won, by column-staged bridges where a staged chained row won (both false otherwise: the
 * one-thread-a-tile bridges, or no comparison).
 */
export async function pickLargeBatchBridges(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  force = forcedWinoGemm(),
  large: readonly LargeTile[] = [6],
): Promise<{ unbridged: boolean; staged: boolean }> {
  const r = await largeBatchComparison(ctx, kernels, half, shape, force, true, large);
  return {
    unbridged: r !== null && unbridgedWinner(r),
    staged: r !== null && stagedBridgeWinner(r),
  };
}

/**
 * compareLargeTiles on a network layer's bucketed shape where the tuners run (hardware adapters,
 * tuning on, no GEMM forced, some large tile), else null; a failed comparison is null too (the
 * layer stays at F(4x4), what it ran before the large tiles existed).
 */
async function largeBatchComparison(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  force: string | undefined,
  bridged: boolean,
  large: readonly LargeTile[],
): Promise<WinoTuneResult | null> {
  if (ctx.report.isFallback || !tuningOn() || force !== undefined || !large.length) return null;
  const s = { ...bucketed(shape), k: 3 };
  return await compareLargeTiles(ctx, kernels, half, s, undefined, bridged, large)
    .catch(() => null);
}

/**
 * Whether a fused 3x3 inference conv of `shape` that the selection table runs as F(4x4) runs
 * faster at one of the `large` tiles: on hardware adapters (unless KIBITZ_NN_TUNE=0, or a Winograd
 * GEMM is forced), each tile's best tuned conv is timed (compareLargeTiles), once per adapter,
 * storage and bucketed shape. Returns the winning tile and its kernels (null kernels: the built-in
 * GEMM) when a large tile wins, else null (stay F(4x4)).
 */
export async function pickLargeBatchWinograd(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  shape: WinoShape,
  force = forcedWinoGemm(),
  bridged = false,
  large: readonly LargeTile[] = [6],
): Promise<{ m: LargeTile; kernels: WinoKernels | null } | null> {
  const r = await largeBatchComparison(ctx, kernels, half, shape, force, bridged, large);
  return await winnerKernels(ctx, half, r, large);
}

/**
 * F(4x4) against the `large` tiles on shape `s` (cached, logged): each tile's best tuned conv
 * (input transform, GEMM, output transform), and with `bridged`, where Ci = Co and every tile's
 * plane fits a bridge, what each costs a conv of a residual tower bridged (one thread a tile, and
 * column-staged where that fits) and unbridged (timeBridgedChain). Where all of these were
 * timed, they decide together (a tower's convs run bridged by the winning kernel, or unbridged
 * where an unbridged row wins: unbridgedWinner, stagedBridgeWinner), else the lone convs. On a
 * 26 x 26 board F(6x6) does 9 % fewer products than F(4x4) (25 tiles of 64 elements against 49 of
 * 36) and F(7x7) 27 % fewer (16 of 81), with larger transforms.
 */
export function compareLargeTiles(
  ctx: GpuContext,
  kernels: NnKernels,
  half: HalfKernels | null,
  s: WinoShape,
  candidates?: WinoCandidate[],
  bridged = false,
  large: readonly LargeTile[] = [6],
): Promise<WinoTuneResult> {
  const act = half?.storage ?? "f32";
  return memoCompared(
    ctx,
    kernels,
    half,
    s,
    `large-wino${towerTag(bridged)}|large${large.join("")}`,
    candidates,
    async () => {
      const t4 = await tuneWinograd(ctx, kernels, half, 4, s, candidates);
      const rows = [await tileRows(ctx, kernels, half, s, 4, t4, bridged)];
      for (const m of large) {
        const t = await tuneLarge(ctx, kernels, half, m, s, t4, candidates);
        rows.push(await tileRows(ctx, kernels, half, s, m, t, bridged));
      }
      const chained = rows.flatMap((r) => [r.chained, r.staged].filter((t) => t !== null));
      // Where every tile's tower costs were timed, the unbridged ones compete with the bridged
      // ones (sessions 29 and 41): an unbridged row winning means the tower runs that tile
      // without bridges (separate output and input transforms), see unbridgedWinner. Else the
      // lone convs decide.
      const towers = rows.every((r) => r.tower !== null);
      const lone = rows.map((r) => (towers ? r.tower! : r.lone));
      const timings = [...lone, ...chained];
      const decide = towers ? timings : lone;
      const ok = decide.filter((t) => t.ms !== null);
      if (!ok.length) {
        throw new KibitzError("shader_error", `no Winograd conv ran on ${JSON.stringify(s)}`);
      }
      const fastest = ok.reduce((a, b) => (b.ms! < a.ms! ? b : a));
      const r: WinoTuneResult = {
        adapter: describeAdapter(ctx.report),
        storage: act,
        shape: `${directShapeKey(s.n, s.ci, s.co, s.h, s.w, 3, half !== null)} ${
          tileNames([4, ...large])
        }`,
        dims: s,
        winner: fastest.name,
        timings,
        timer: decide === timings
          ? "the tuners' best times; lone and chained figures decide"
          : "the tuners' best times",
      };
      return r;
    },
  );
}

/** The tiles of a training layer's three Winograd passes (each independent of the others). */
export interface TrainTiles {
  forward: WinogradTile;
  inputGrad: WinogradTile;
  wgrad: WinogradTile;
}

/** The passes of compareTrainTiles, by their row names. */
const TRAIN_PASSES = [
  ["forward", "forward"],
  ["inputGrad", "input gradient"],
  ["wgrad", "weight gradient"],
] as const;

/**
 * The tiles a training layer of `shape` (x [n, ci, h, w], dW [co, ci]), which the selection table
 * runs as F(4x4), runs its passes at: on hardware adapters (unless KIBITZ_NN_TUNE=0, or a
 * Winograd or weight-gradient GEMM is forced) each pass takes the fastest of F(4x4) and the
 * `large` tiles in compareTrainTiles, once per adapter and bucketed shape; null (F(4x4)
 * throughout) otherwise or where the comparison failed.
 */
export async function pickTrainTile(
  ctx: GpuContext,
  kernels: NnKernels,
  shape: WinoShape,
  force: string | undefined = forcedWinoGemm() ?? forcedWgrad(),
  large: readonly LargeTile[] = [6],
): Promise<TrainTiles | null> {
  if (ctx.report.isFallback || !tuningOn() || force !== undefined || !large.length) return null;
  const r = await compareTrainTiles(ctx, kernels, { ...bucketed(shape), k: 3 }, undefined, large)
    .catch(() => null);
  return r ? trainTilesOf(r) : null;
}

/**
 * Each pass's fastest tile in a compareTrainTiles result (rows "F<m> <pass> <kernel>"): a large
 * tile only where it was timed and is faster than F(4x4) and the other large tile.
 */
export function trainTilesOf(r: WinoTuneResult): TrainTiles {
  const ms = (m: number, pass: string) =>
    r.timings.find((t) => t.name.startsWith(`F${m} ${pass} `))?.ms ?? null;
  const pick = (pass: string): WinogradTile => {
    let tile: WinogradTile = 4, at = ms(4, pass) ?? Infinity;
    for (const m of [6, 7] as const) {
      const t = ms(m, pass);
      if (t !== null && t < at) [tile, at] = [m, t];
    }
    return tile;
  };
  return {
    forward: pick("forward"),
    inputGrad: pick("input gradient"),
    wgrad: pick("weight gradient"),
  };
}

/**
 * A training layer's three Winograd passes at F(4x4) and at each `large` tile (cached, logged): the
 * forward conv and the input-gradient conv (Co and Ci swapped) by each tile's best tuned GEMM, and
 * the weight gradient by its best kernel. The passes are independent computations, so each takes
 * its fastest tile (trainTilesOf; the winner names the three); the rows "F<m> step" are their
 * sums.
 */
export function compareTrainTiles(
  ctx: GpuContext,
  kernels: NnKernels,
  s: WinoShape,
  candidates?: WinoCandidate[],
  large: readonly LargeTile[] = [6],
): Promise<WinoTuneResult> {
  const key = `train-wino|large${large.join("")}`;
  return memoCompared(ctx, kernels, null, s, key, candidates, async () => {
    const timings: WinoTiming[] = [];
    // Each conv shape at every tile: the forward's, and the input gradient's (Ci and Co swapped).
    const allTiles = async (shape: WinoShape) => {
      const four = await tuneWinograd(ctx, kernels, null, 4, shape, candidates);
      const out = new Map<WinogradTile, WinoTuneResult>([[4, four]]);
      for (const m of large) {
        out.set(m, await tuneLarge(ctx, kernels, null, m, shape, four, candidates));
      }
      return out;
    };
    const forward = await allTiles(s);
    const inputGrad = s.ci === s.co ? forward : await allTiles({ ...s, ci: s.co, co: s.ci });
    for (const m of [4, ...large] as WinogradTile[]) {
      const fw = forward.get(m)!, ig = inputGrad.get(m)!;
      const wg = await tuneWgrad(ctx, kernels, m, s);
      const parts = [
        { name: `F${m} forward ${fw.winner}`, ms: best(fw) },
        { name: `F${m} input gradient ${ig.winner}`, ms: best(ig) },
        { name: `F${m} weight gradient ${wg.winner}`, ms: best(wg) },
      ];
      const total = parts.reduce((a, p) => a + p.ms, 0);
      for (const p of parts) {
        timings.push({ ...p, ms: Number.isFinite(p.ms) ? p.ms : null, gemmMs: null });
      }
      timings.push({
        name: `F${m} step`,
        ms: Number.isFinite(total) ? total : null,
        gemmMs: null,
      });
    }
    if (!timings.some((t) => t.ms !== null)) {
      throw new KibitzError(
        "shader_error",
        `no Winograd training pass ran on ${JSON.stringify(s)}`,
      );
    }
    const partial: WinoTuneResult = {
      adapter: describeAdapter(ctx.report),
      storage: "f32",
      shape: `${directShapeKey(s.n, s.ci, s.co, s.h, s.w, 3, false)} training, ${
        tileNames([4, ...large])
      }`,
      dims: s,
      winner: "",
      timings,
      timer: "the tuners' best times; each pass takes its faster tile",
    };
    const tiles = trainTilesOf(partial);
    return {
      ...partial,
      winner: TRAIN_PASSES.map(([k, label]) => `${label} F${tiles[k]}`).join(", "),
    };
  });
}

/** The weight-gradient GEMM forced by KIBITZ_NN_WGRAD (`legacy` or a WGRAD_VARIANTS name). */
export function forcedWgrad(): string | undefined {
  return envValue("KIBITZ_NN_WGRAD") || undefined;
}

/**
 * The weight-gradient GEMM training's Winograd layer of `shape` (x [n, ci, h, w], dW [co, ci])
 * runs: a `vp` variant (src/nn/gpu/winograd_gemm.ts, WGRAD_VARIANTS) or null for the built-in
 * one. Forced by `force` (else KIBITZ_NN_WGRAD: `legacy` or a variant's name); otherwise on
 * hardware adapters (unless KIBITZ_NN_TUNE=0) the fastest on the bucketed shape, timed once per
 * adapter and shape; software adapters run the built-in one.
 */
export async function pickWgradKernel(
  ctx: GpuContext,
  kernels: NnKernels,
  m: WinogradTile,
  shape: WinoShape,
  force = forcedWgrad(),
): Promise<WgradChoice | null> {
  const tile = wgradTileOf(kernels.tiles, shape.co, shape.ci);
  if (force !== undefined) {
    if (force === LEGACY) return null;
    const v = wgradVariant(force);
    if (!v) {
      const names = [LEGACY, ...WGRAD_VARIANTS.map((x) => x.name)].join(", ");
      throw new KibitzError("bad_args", `weight-gradient GEMM "${force}" is not one of ${names}`);
    }
    return await loadWgradVariant(ctx, tile, v);
  }
  if (ctx.report.isFallback || !tuningOn()) return null;
  const r = await tuneWgrad(ctx, kernels, m, bucketed(shape));
  const v = wgradVariant(r.winner);
  return v ? await loadWgradVariant(ctx, tile, v) : null;
}

/**
 * Times training's Winograd weight gradient (input transform, dM transform, GEMM, filter
 * gradient) with the built-in GEMM and each `vp` variant on `shape`, once per adapter and shape
 * (a variant that does not compile, e.g. past the workgroup memory, is a row with its error).
 */
export function tuneWgrad(
  ctx: GpuContext,
  kernels: NnKernels,
  m: WinogradTile,
  shape: WinoShape,
): Promise<WinoTuneResult> {
  const key = `${describeAdapter(ctx.report)}|${JSON.stringify(kernels.tiles)}|${
    winoShapeKey(m, shape.n, shape.ci, shape.co, shape.h, shape.w)
  }|wgrad|${WGRAD_VARIANTS.map((v) => v.name).join(",")}`;
  return memoTuned(key, () => timeWgrad(ctx, kernels, m, shape));
}

async function timeWgrad(
  ctx: GpuContext,
  kernels: NnKernels,
  m: WinogradTile,
  s: WinoShape,
): Promise<WinoTuneResult> {
  await ensureWinogradTile(ctx, kernels, null, m);
  const key = winoShapeKey(m, s.n, s.ci, s.co, s.h, s.w);
  const tile = wgradTileOf(kernels.tiles, s.co, s.ci);
  const entries: { name: string; rec: GpuRecorder | null; error?: string }[] = [];
  const { best, bestGemm, timer } = await withScratch(
    ctx,
    kernels,
    async ({ pool, recorder }) => {
      const x = pool.acquire([s.n, s.ci, s.h, s.w], "tune.x");
      const dy = pool.acquire([s.n, s.co, s.h, s.w], "tune.dy");
      const w = pool.acquire([s.co, s.ci, 3, 3], "tune.w");
      const dw = pool.acquire([s.co, s.ci, 3, 3], "tune.dw");
      for (const v of [null, ...WGRAD_VARIANTS]) {
        const rec = recorder();
        rec.winogradTrain = true;
        rec.winograd = m;
        try {
          if (v) rec.wgradChoice.set(key, await loadWgradVariant(ctx, tile, v));
          const { error } = await withValidation(
            ctx,
            () => rec.conv2dBackward(x, w, dy, dw, false),
          );
          if (error) throw new Error(error.message);
          entries.push({ name: v?.name ?? LEGACY, rec });
        } catch (e) {
          entries.push({ name: v?.name ?? LEGACY, rec: null, error: (e as Error).message });
        }
      }
      const runs = entries.filter((e): e is { name: string; rec: GpuRecorder } => e.rec !== null)
        .map((e) => ({
          ...e,
          gemm: e.rec.ops.filter((o) => o.label.startsWith("winogradWgradGemm")),
        }));
      const timed = await timeWholeAndGemm(ctx, runs, () => 1);
      lastTimed = performance.now();
      return timed;
    },
  );
  const timings = entries.map((e) => ({
    name: e.name,
    ms: best.get(e.name) ?? null,
    gemmMs: bestGemm.get(e.name) ?? null,
    ...(e.error ? { error: e.error } : {}),
  }));
  const ok = timings.filter((t) => t.ms !== null);
  if (!ok.length) throw new KibitzError("shader_error", `no weight-gradient GEMM ran on ${key}`);
  return {
    adapter: describeAdapter(ctx.report),
    storage: "f32",
    shape: `wgrad ${key}`,
    dims: s,
    winner: ok.reduce((a, b) => (b.ms! < a.ms! ? b : a)).name,
    timings,
    timer,
  };
}
