import { KibitzError } from "../errors.ts";
import { type QuantFormat, regretFormat, storeBytes, strategyFormat } from "../quant/format.ts";
import { regretsNonNegative } from "../cfr/schedule.ts";
import type { CfrAlgorithm } from "../cfr/schedule.ts";
import {
  type ActionTree,
  NODE_CHANCE,
  NODE_FOLD,
  NODE_IP,
  NODE_OOP,
  NODE_SHOWDOWN,
} from "./action_tree.ts";
import { RANK_KEYS } from "./hand_eval.ts";

/** Sizes of the expanded game, computed from the betting tree before anything is allocated. */
export interface GameSize {
  /** Decision nodes once turn and river cards are expanded. */
  decisionNodes: number;
  /** Public nodes of every kind once expanded. */
  publicNodes: number;
  /** Storage elements: sum over decision nodes of actions x hands of the acting player. */
  elements: number;
  /** Terminal nodes once expanded (the game keeps a row of tables per terminal). */
  terminals?: number;
  /**
   * Entries of the card-removal lists: per node entered by a dealt card, the hands of both players
   * holding that card (on average 2 x hands / cards left).
   */
  blockedHands?: number;
  /**
   * Outcomes of the first chance nodes once expanded: the tasks of a threaded solve (each with a
   * row of inputs and values per hand in the threaded Wasm walk's memory).
   */
  firstDeals?: number;
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
  let decisionNodes = 0, publicNodes = 0, elements = 0, terminals = 0, dealt = 0, first = 0;
  for (let n = 0; n < tree.size; n++) {
    const mult = m[tree.street[n] - tree.config.startingStreet];
    publicNodes += mult;
    const k = tree.kind[n];
    if (k === NODE_OOP || k === NODE_IP) {
      decisionNodes += mult;
      elements += mult * tree.numChildren[n] * numHands[k];
    } else if (k === NODE_FOLD || k === NODE_SHOWDOWN) terminals += mult;
    if (n > 0 && tree.kind[tree.parent[n]] === NODE_CHANCE) {
      dealt += mult;
      if (tree.street[tree.parent[n]] === tree.config.startingStreet) first += mult;
    }
  }
  const blockedHands = Math.round(dealt * 2 * (numHands[0] + numHands[1]) / left);
  return { decisionNodes, publicNodes, elements, terminals, blockedHands, firstDeals: first };
}

/** Storage formats of a run. */
export interface StorageChoice {
  algorithm: CfrAlgorithm;
  regretBits: number;
  strategyBits: number;
  regretFormat?: QuantFormat | null;
  /** "auto" and "gpu" look for a WebGPU adapter, which loads the graphics driver (GPU_PROBE_BYTES). */
  backend?: "auto" | "cpu" | "gpu";
  /** Regret-based pruning (solver.enable_pruning): the Wasm walk does not run it. */
  enablePruning?: boolean;
}

/** Bytes a solve will need, by part: the peak resident memory of the process that solves it. */
export interface MemoryEstimate {
  regretFormat: QuantFormat;
  strategyFormat: QuantFormat;
  /** Regret + cumulative strategy (+ PDCFR+ prediction) storage. */
  storageBytes: number;
  /**
   * The flat public tree (TREE_BYTES_PER_NODE per node, the storage block table per decision node,
   * the card-removal lists) and the game's per-terminal tables (TERMINAL_BYTES each).
   */
  treeBytes: number;
  /** Showdown tables (per river board): once, in memory all threads share. */
  showdownBytes: number;
  /** The runtime itself (RUNTIME_BASELINE_BYTES): Deno, the solver's modules, V8's working heap. */
  baselineBytes: number;
  /** The WebGPU runtime and driver that looking for an adapter loads (0 with backend "cpu"). */
  gpuProbeBytes: number;
  /**
   * The 7-card hand evaluator's lookup tables, built while the tree is expanded when it has river
   * showdowns, and dropped once it is (releaseEvalTables): part of the expansion's peak only.
   */
  evaluatorBytes: number;
  /**
   * Per thread: its scratch vectors, and for each worker thread its own V8 isolate and game
   * kernels (ThreadShape.kernelBytes).
   */
  threadBytes: number;
  /** Transient while the tree is expanded (JS arrays and game states), freed before the solve. */
  expansionBytes: number;
  /** What the expansion leaves resident after its transients are collected (V8 heap, allocator). */
  retainedBytes: number;
  /**
   * The peak, the larger of the expansion's (RUNTIME_EXPANDING_BYTES + evaluator + showdown
   * tables + tree + transients) and the solve's (baseline + showdown tables with their Wasm copy +
   * tree + storage + threads + retained): the transients are collected and the evaluator dropped
   * before the storage is allocated.
   */
  total: number;
}

const MB = 1024 * 1024;
/**
 * Resident memory of the runtime while a solve runs, above what the estimate counts by part:
 * measured on Linux x86-64 with Deno 2.9.6 and SOLVE_V8_FLAGS (`src/poker/rss_probe.ts
 * --baseline` reads 37 MB with the modules loaded and nothing solved; a solve adds the code it
 * runs, file-backed pages of the runtime: 31 MB at start, 43 to 46 MB at the end, V8's compiled
 * code and heap, the exploitability walks and the I/O of writing the results). Fitted on the
 * RSS probe's solves of three turn spots in every format at 1 and 2 threads (65 to 70 MB) and F1.
 */
export const RUNTIME_BASELINE_BYTES = 67 * MB;
/**
 * The runtime while the tree is expanded, before the solve has run: less of its code is resident
 * then (measured 50 to 53 MB after the game is built, nothing expanded).
 */
export const RUNTIME_EXPANDING_BYTES = 51 * MB;
/**
 * Resident memory that requesting a WebGPU adapter adds (Vulkan loader, driver, wgpu instance):
 * measured 64 MB with Mesa's llvmpipe (Deno 2.9.6); `backend = "cpu"` never pays it.
 */
export const GPU_PROBE_BYTES = 64 * MB;
/**
 * Each worker thread beyond the main one: an isolate with the engine's modules compiled, its
 * clone of the game's small tables and its V8 heap; above its Wasm kernels and scratch, measured
 * 5 to 12 MB on turn spots (7k and 33k nodes, 417 and about 780 hands) and 15 MB on F1 (512k
 * nodes, 689 hands): 6 MB, WORKER_BYTES_PER_NODE and WORKER_BYTES_PER_HAND.
 */
export const WORKER_THREAD_BYTES = 6 * MB;
/**
 * Each worker thread of the threaded Wasm walk (poker/wasm/walk_worker.ts): an isolate with the
 * task loop's few modules and an instance of the walk module on the memory all threads share,
 * where its scratch lives (threadScratchBytes); no copy of the game, the tree or the tables, and
 * quantized stores live there once too. Measured as the peak RSS (VmHWM) added per thread: 5.2 MB
 * on T2, 6.8 MB on T3 from 2 to 3 threads; on T1 (16/16 and f32, 2 iterations) 8.4 MB from 1 to 2
 * threads, 8.3 from 2 to 4, 8.1 from 4 to 8 and 7.8 from 8 to 16 (6 MB left F1 at 16 threads 5 to
 * 10 % and T1 14 to 19 % above the estimate). The TypeScript path's workers: 12.4 MB on T3 after
 * one iteration, more as they run.
 */
export const WALK_WORKER_BYTES = 8 * MB;
/**
 * Bytes per task and hand of the threaded Wasm walk's task rows (values of both evaluation modes,
 * f32 x 2) with a share of its first chance node's rows (f32 x 3 and a u8 per chance node, whose
 * outcomes number 36 to 48 after isomorphism: under a byte per task).
 */
export const WALK_TASK_BYTES_PER_HAND = 9;
/** A worker's share that grows with the expanded tree (see WORKER_THREAD_BYTES). */
export const WORKER_BYTES_PER_NODE = 14;
/** A worker's share that grows with the hands of both players (see WORKER_THREAD_BYTES). */
export const WORKER_BYTES_PER_HAND = 5 * 1024;
/**
 * Public tree bytes per node: kind and player (1 B each), depth (2), parent, first child, child
 * count, block, terminal id, chance weight, isomorph offset (4 each), card-removal offsets (2 x 4),
 * and the label's slot (4; the label strings are interned).
 */
export const TREE_BYTES_PER_NODE = 44;
/** The game's per-terminal tables: betting node and board order (4 B each). */
export const TERMINAL_BYTES = 8;
/**
 * Transient bytes per expanded node while buildTree runs (a game state per node of the level
 * being expanded, what describe() returns, the terminal tables as JS arrays): measured 190 bytes
 * per node above the final tree at F1, 50 on turn spots.
 */
export const EXPANSION_BYTES_PER_NODE = 200;
/**
 * Resident bytes per expanded node that the expansion leaves once collected (V8 heap, allocator):
 * about 40 at F1 after collectGarbage's memory-reducing collection.
 */
export const RETAINED_BYTES_PER_NODE = 40;

/**
 * The V8 flags a solve runs with (`deno task solve`, the RSS probe of the test and bench):
 * `--expose-gc` for collectGarbage, and a young generation of 1 MB semi-spaces instead of up to
 * 16 MB: the tree expansion fills the default one and V8 keeps its pages (F1: 65 MB less RSS once
 * expanded; T1: 7 MB less; no slower, the solve allocates little on the JS heap); and Wasm compiled
 * by the optimizing tier from the start (`--no-liftoff`: V8's baseline tier runs the Wasm walk slower).
 */
export const SOLVE_V8_FLAGS = "--expose-gc,--no-liftoff,--max-semi-space-size=1";

/**
 * Runs a full garbage collection where the runtime exposes one (`--v8-flags=--expose-gc`, as
 * `deno task solve` and the RSS probe run): the tree expansion's transients and the copies the
 * tree and tables leave when they move into shared memory are garbage once the solver exists, but
 * V8 frees them only under pressure, which can come after the storage pages are resident, and then
 * the peak holds both (F1 8/4 at 2 threads: 633 MB without, 540 MB with). Elsewhere a no-op.
 */
export function collectGarbage(): void {
  // "last-resort" (V8's memory-reducing collection) also returns the heap pages that a regular
  // one keeps pooled: F1 8/4 is resident in 102 MB after it, 146 MB after a regular one.
  (globalThis as { gc?: (o?: unknown) => void }).gc?.({ type: "major", flavor: "last-resort" });
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
  /**
   * Whether the Wasm walk runs here (PostflopGame.taskTrainer): a DCFR solve without pruning (any
   * storage format) on several threads then runs it on walk workers (WALK_WORKER_BYTES each).
   */
  walk?: boolean;
  /** Levels of the public tree (depth + 1). */
  levels: number;
  maxActions: number;
  /**
   * Whether choosing the backend loads the WebGPU driver (GPU_PROBE_BYTES); absent: whenever the
   * backend is not "cpu". `auto` skips it where no hardware GPU can exist (hardwareGpuAbsent).
   */
  gpuProbe?: boolean;
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
  const treeBytes = size.publicNodes * TREE_BYTES_PER_NODE + size.decisionNodes * 8 +
    4 * (size.blockedHands ?? 0) + TERMINAL_BYTES * (size.terminals ?? 0);
  const expansionBytes = size.publicNodes * EXPANSION_BYTES_PER_NODE;
  const retainedBytes = size.publicNodes * RETAINED_BYTES_PER_NODE;
  const threads = Math.max(1, shape.threads);
  const kernelBytes = shape.kernelBytes ?? 0;
  // The threaded Wasm walk runs DCFR without pruning in every storage format (its stores, f32
  // or quantized, once in the memory its threads share).
  const walk = threads > 1 && (shape.walk ?? false) && choice.algorithm === "dcfr" &&
    !choice.enablePruning;
  const threadBytes = threads * threadScratchBytes(shape, numHands) +
    (walk
      ? (threads - 1) * WALK_WORKER_BYTES +
        WALK_TASK_BYTES_PER_HAND * (size.firstDeals ?? 0) * Math.max(numHands[0], numHands[1])
      : (threads - 1) *
        (WORKER_THREAD_BYTES + WORKER_BYTES_PER_NODE * size.publicNodes +
          WORKER_BYTES_PER_HAND * (numHands[0] + numHands[1]) + kernelBytes));
  const evaluatorBytes = showdownBytes > 0 ? handEvaluatorBytes() : 0;
  const baselineBytes = RUNTIME_BASELINE_BYTES;
  const gpuProbeBytes = (shape.gpuProbe ?? (choice.backend ?? "cpu") !== "cpu")
    ? GPU_PROBE_BYTES
    : 0;
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
    total: gpuProbeBytes + treeBytes + Math.max(
      // The expansion, before the solve: the showdown tables without their Wasm copy, and the
      // worker threads, which start meanwhile (runSolve: prestartWorkers).
      RUNTIME_EXPANDING_BYTES + evaluatorBytes + showdownBytes - kernelBytes + expansionBytes +
        (threads - 1) * WALK_WORKER_BYTES,
      baselineBytes + showdownBytes + storage + threadBytes + retainedBytes,
    ),
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
  }, ${m.gpuProbeBytes > 0 ? `WebGPU driver ${formatBytes(m.gpuProbeBytes)}, ` : ""}runtime ${
    formatBytes(m.baselineBytes)
  } + heap ${formatBytes(m.retainedBytes)}; expanding the tree ${
    formatBytes(m.expansionBytes + m.evaluatorBytes)
  } (hand evaluator ${formatBytes(m.evaluatorBytes)}) before the storage`;
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
