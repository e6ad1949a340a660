import { KibitzError } from "../errors.ts";
import { type QuantFormat, regretFormat, storeBytes, strategyFormat } from "../quant/format.ts";
import { regretsNonNegative } from "../cfr/schedule.ts";
import type { CfrAlgorithm } from "../cfr/schedule.ts";
import { type ActionTree, NODE_IP, NODE_OOP } from "./action_tree.ts";
import { RANK_KEYS } from "./hand_eval.ts";

/** Sizes of the expanded game, computed from the betting tree before anything is allocated. */
export interface GameSize {
  /** Decision nodes once turn and river cards are expanded. */
  decisionNodes: number;
  /** Public nodes of every kind once expanded. */
  publicNodes: number;
  /** Storage elements: sum over decision nodes of actions x hands of the acting player. */
  elements: number;
}

/**
 * Counts the expanded game. Every betting node of a street appears once per board instance of
 * that street: `multipliers` = [1, deals of the next card, deals of the next two cards] relative to
 * the starting street (PostflopGame.streetMultipliers, which merges suit-isomorphic cards). Without
 * multipliers, every remaining card is dealt.
 */
export function gameSize(
  tree: ActionTree,
  boardCards: number,
  numHands: readonly [number, number],
  multipliers?: readonly number[],
): GameSize {
  const left = 52 - boardCards;
  const m = multipliers ?? [1, left, left * (left - 1)];
  let decisionNodes = 0, publicNodes = 0, elements = 0;
  for (let n = 0; n < tree.size; n++) {
    const mult = m[tree.street[n] - tree.config.startingStreet];
    publicNodes += mult;
    const k = tree.kind[n];
    if (k === NODE_OOP || k === NODE_IP) {
      decisionNodes += mult;
      elements += mult * tree.numChildren[n] * numHands[k];
    }
  }
  return { decisionNodes, publicNodes, elements };
}

/** Storage formats of a run. */
export interface StorageChoice {
  algorithm: CfrAlgorithm;
  regretBits: number;
  strategyBits: number;
  regretFormat?: QuantFormat | null;
  /** "auto" and "gpu" look for a WebGPU adapter, which loads the graphics driver (GPU_PROBE_BYTES). */
  backend?: "auto" | "cpu" | "gpu";
}

/** Bytes a solve will need, by part: the peak resident memory of the process that solves it. */
export interface MemoryEstimate {
  regretFormat: QuantFormat;
  strategyFormat: QuantFormat;
  /** Regret + cumulative strategy (+ PDCFR+ prediction) storage. */
  storageBytes: number;
  /** The flat public tree and per-outcome card-removal lists. */
  treeBytes: number;
  /** Showdown tables (per river board): once, in memory all threads share. */
  showdownBytes: number;
  /** The runtime itself (RUNTIME_BASELINE_BYTES): Deno, the solver's modules, V8's working heap. */
  baselineBytes: number;
  /** The WebGPU runtime and driver that looking for an adapter loads (0 with backend "cpu"). */
  gpuProbeBytes: number;
  /** The 7-card hand evaluator's lookup tables, built once when the tree has river showdowns. */
  evaluatorBytes: number;
  /**
   * Per thread: its scratch vectors, and for each worker thread its own V8 isolate and game
   * kernels (ThreadShape.kernelBytes).
   */
  threadBytes: number;
  /** Transient while the tree is expanded (JS arrays and game states), freed before the solve. */
  expansionBytes: number;
  /** JS heap that V8 keeps after the expansion's transients are collected (it shrinks lazily). */
  retainedBytes: number;
  /**
   * The peak: baseline + evaluator + showdown + tree + the larger of expansion and
   * storage + threads + retained heap (the expansion's transients are gone when the storage is
   * allocated).
   */
  total: number;
}

const MB = 1024 * 1024;
/**
 * Resident memory of the runtime while a solve runs, measured on Linux x86-64 with Deno 2.9
 * (`src/poker/rss_probe.ts --baseline` reads about 40 MB with the modules loaded and nothing
 * solved; a running solve adds V8's young generation, compiled code and small heap objects).
 */
export const RUNTIME_BASELINE_BYTES = 66 * MB;
/**
 * Resident memory that requesting a WebGPU adapter adds (Vulkan loader, driver, wgpu instance):
 * measured 64 MB with Mesa's llvmpipe (Deno 2.9.6); `backend = "cpu"` never pays it.
 */
export const GPU_PROBE_BYTES = 64 * MB;
/** Each worker thread beyond the main one: an isolate with the engine's modules compiled. */
export const WORKER_THREAD_BYTES = 20 * MB;
/**
 * Transient bytes per expanded node while buildTree runs (JS number arrays that grow by doubling,
 * a game state per node of the level being expanded, label strings, blocked hands in JS arrays):
 * measured 410 (F1) to 590 (two narrower flop spots) bytes per node above the final tree.
 */
export const EXPANSION_BYTES_PER_NODE = 480;
/** JS heap per expanded node that V8 still holds after the expansion (measured: ~140 B). */
export const RETAINED_BYTES_PER_NODE = 140;

/**
 * The V8 flags a solve runs with (`deno task solve`, the RSS probe of the test and bench):
 * `--expose-gc` for collectGarbage, and a young generation of 1 MB semi-spaces instead of up to
 * 16 MB: the tree expansion fills the default one and V8 keeps its pages (F1: 65 MB less RSS once
 * expanded; T1: 7 MB less; no slower, the solve allocates little on the JS heap).
 */
export const SOLVE_V8_FLAGS = "--expose-gc,--max-semi-space-size=1";

/**
 * Runs a full garbage collection where the runtime exposes one (`--v8-flags=--expose-gc`, as
 * `deno task solve` and the RSS probe run): the tree expansion's transients and the copies the
 * tree and tables leave when they move into shared memory are garbage once the solver exists, but
 * V8 frees them only under pressure, which can come after the storage pages are resident, and then
 * the peak holds both (F1 8/4 at 2 threads: 633 MB without, 540 MB with). Elsewhere a no-op.
 */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Levels (depth + 1) and most actions at a node of the public tree `tree` expands into. */
export function treeShape(tree: ActionTree, threads: number): ThreadShape {
  const depth = new Int32Array(tree.size);
  let levels = 1, maxActions = 0;
  for (let n = 1; n < tree.size; n++) {
    depth[n] = depth[tree.parent[n]] + 1;
    levels = Math.max(levels, depth[n] + 1);
  }
  for (let n = 0; n < tree.size; n++) {
    const k = tree.kind[n];
    if (k === NODE_OOP || k === NODE_IP) maxActions = Math.max(maxActions, tree.numChildren[n]);
  }
  return { threads, levels, maxActions };
}

/** Shape of the expanded tree that sizes each thread's scratch vectors. */
export interface ThreadShape {
  threads: number;
  /**
   * Memory each worker thread's own game kernels add (PostflopGame.estimateKernelBytes: its Wasm
   * copy of the showdown tables and engine); 0 or absent where there are none.
   */
  kernelBytes?: number;
  /** Levels of the public tree (depth + 1). */
  levels: number;
  maxActions: number;
}

/** Scratch of one solver thread: per level 3 action x hand f32 vectors, 2 hand f32, masks. */
export function threadScratchBytes(
  shape: ThreadShape,
  numHands: readonly [number, number],
): number {
  const maxH = Math.max(numHands[0], numHands[1]);
  const wide = Math.max(1, shape.maxActions) * maxH;
  // Solver: vals, sig, reg (f32), pruning mask (u8) per level; reach, own reach (f32), active
  // (u8). Evaluator: values and strategy per level. Plus the f64 sums of both.
  return shape.levels * (wide * (12 + 1 + 8) + maxH * 9) + wide * 4 + 4 * 8 * maxH;
}

/** Estimates the peak memory of a solve of `size` in the given storage formats. */
export function estimateMemory(
  size: GameSize,
  choice: StorageChoice,
  numHands: readonly [number, number],
  showdownBytes = 0,
  shape: ThreadShape = { threads: 1, levels: 0, maxActions: 0 },
): MemoryEstimate {
  const signed = !regretsNonNegative(choice.algorithm);
  const rf = choice.regretFormat ?? regretFormat(choice.regretBits, signed);
  const sf = strategyFormat(choice.strategyBits);
  const blocks = size.decisionNodes;
  let storage = storeBytes(rf, size.elements, blocks) + storeBytes(sf, size.elements, blocks);
  if (choice.algorithm === "pdcfr+") storage += storeBytes(rf, size.elements, blocks);
  // Per public node: ~40 bytes of typed arrays plus a short label string (~40 bytes in V8), and
  // for chance children the hands holding the dealt card (about 2/50 of each range, 4 bytes each).
  const blockedPerNode = (numHands[0] + numHands[1]) * 2 / 50;
  const treeBytes = Math.round(size.publicNodes * (80 + 4 * blockedPerNode));
  const expansionBytes = size.publicNodes * EXPANSION_BYTES_PER_NODE;
  const retainedBytes = size.publicNodes * RETAINED_BYTES_PER_NODE;
  const threads = Math.max(1, shape.threads);
  const threadBytes = threads * threadScratchBytes(shape, numHands) +
    (threads - 1) * (WORKER_THREAD_BYTES + (shape.kernelBytes ?? 0));
  const evaluatorBytes = showdownBytes > 0 ? handEvaluatorBytes() : 0;
  const baselineBytes = RUNTIME_BASELINE_BYTES;
  const gpuProbeBytes = (choice.backend ?? "cpu") === "cpu" ? 0 : GPU_PROBE_BYTES;
  return {
    regretFormat: rf,
    strategyFormat: sf,
    storageBytes: storage,
    treeBytes,
    showdownBytes,
    baselineBytes,
    gpuProbeBytes,
    evaluatorBytes,
    threadBytes,
    expansionBytes,
    retainedBytes,
    total: baselineBytes + gpuProbeBytes + evaluatorBytes + showdownBytes + treeBytes +
      Math.max(expansionBytes, storage + threadBytes + retainedBytes),
  };
}

/** Bytes of the hand evaluator's tables (hand_eval.ts: a u16 per 7-card rank key, flushes). */
export function handEvaluatorBytes(): number {
  return 2 * (4 * RANK_KEYS[12] + 3 * RANK_KEYS[11] + 1) + 2 * 8192;
}

/** Parses a memory size such as "512MB", "2GB", "1.5G" or a byte count. */
export function parseMemorySize(text: string, where = "--max-memory"): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$/i.exec(text);
  if (!m) throw new KibitzError("bad_args", `${where}: "${text}" is not a size like 512MB or 2GB`);
  const unit = (m[2] ?? "").toLowerCase().replace(/i?b$/, "");
  const pow = { "": 0, k: 1, m: 2, g: 3, t: 4 }[unit] ?? 0;
  return Math.round(Number(m[1]) * 1024 ** pow);
}

/** Human-readable bytes ("11.5 MB"). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

/** The parts of an estimate in words, for the solve's log line and the over-memory error. */
export function describeEstimate(m: MemoryEstimate): string {
  return `${m.regretFormat} regrets + ${m.strategyFormat} strategy ${
    formatBytes(m.storageBytes)
  }, tree ${formatBytes(m.treeBytes)}, showdown tables ${formatBytes(m.showdownBytes)}, threads ${
    formatBytes(m.threadBytes)
  }, hand evaluator ${formatBytes(m.evaluatorBytes)}, ${
    m.gpuProbeBytes > 0 ? `WebGPU driver ${formatBytes(m.gpuProbeBytes)}, ` : ""
  }runtime ${formatBytes(m.baselineBytes)} + heap ${
    formatBytes(m.retainedBytes)
  }; expanding the tree ${formatBytes(m.expansionBytes)} before the storage`;
}

/** Throws a KibitzError quoting the estimate when it exceeds `limit` bytes. */
export function checkMemoryLimit(est: MemoryEstimate, limit: number): void {
  if (est.total > limit) {
    throw new KibitzError(
      "over_memory",
      `the solve needs about ${formatBytes(est.total)} (${
        describeEstimate(est)
      }), above --max-memory ${
        formatBytes(limit)
      }; use fewer bet sizes, narrower ranges or fewer storage bits`,
    );
  }
}
