import { KibitzError } from "../errors.ts";
import { type QuantFormat, regretFormat, storeBytes, strategyFormat } from "../quant/format.ts";
import { regretsNonNegative } from "../cfr/schedule.ts";
import type { CfrAlgorithm } from "../cfr/schedule.ts";
import { type ActionTree, NODE_IP, NODE_OOP } from "./action_tree.ts";

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
}

/** Bytes a solve will need, by part. */
export interface MemoryEstimate {
  regretFormat: QuantFormat;
  strategyFormat: QuantFormat;
  /** Regret + cumulative strategy (+ PDCFR+ prediction) storage. */
  storageBytes: number;
  /** The flat public tree and per-outcome card-removal lists. */
  treeBytes: number;
  /** Showdown tables (per river board), counted once per thread: each worker holds a copy. */
  showdownBytes: number;
  total: number;
}

/** Estimates memory for `size` in the given storage formats (quantized payload + block scales). */
export function estimateMemory(
  size: GameSize,
  choice: StorageChoice,
  numHands: readonly [number, number],
  showdownBytes = 0,
): MemoryEstimate {
  const signed = !regretsNonNegative(choice.algorithm);
  const rf = choice.regretFormat ?? regretFormat(choice.regretBits, signed);
  const sf = strategyFormat(choice.strategyBits);
  const blocks = size.decisionNodes;
  let storage = storeBytes(rf, size.elements, blocks) + storeBytes(sf, size.elements, blocks);
  if (choice.algorithm === "pdcfr+") storage += storeBytes(rf, size.elements, blocks);
  // Per public node: ~40 bytes of typed arrays plus a short label string (~40 bytes in V8), and
  // for chance children the hands holding the dealt card (about 2/50 of each range, 4 bytes each).
  const blockedPerNode = ((numHands[0] + numHands[1]) * 2 / 50) * 4;
  const treeBytes = Math.round(size.publicNodes * (80 + blockedPerNode));
  return {
    regretFormat: rf,
    strategyFormat: sf,
    storageBytes: storage,
    treeBytes,
    showdownBytes,
    total: storage + treeBytes + showdownBytes,
  };
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

/** Throws a KibitzError quoting the estimate when it exceeds `limit` bytes. */
export function checkMemoryLimit(est: MemoryEstimate, limit: number): void {
  if (est.total > limit) {
    throw new KibitzError(
      "over_memory",
      `the solve needs about ${formatBytes(est.total)} (storage ${
        formatBytes(est.storageBytes)
      } in ${est.regretFormat} regrets / ${est.strategyFormat} strategy, tree ${
        formatBytes(est.treeBytes)
      }, showdown tables ${formatBytes(est.showdownBytes)}), above --max-memory ${
        formatBytes(limit)
      }; use fewer bet sizes, narrower ranges or fewer storage bits`,
    );
  }
}
