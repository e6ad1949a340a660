import { KibitzError } from "../errors.ts";

/** Shape of the policy/value ResNet. */
export interface NetConfig {
  /** Residual blocks in the tower. */
  blocks: number;
  /** Filters of every 3x3 convolution in the tower. */
  filters: number;
  /** Input planes (seed 003: 24). */
  planes: number;
  height: number;
  width: number;
  /** Policy outputs (Hive: 7 x 28 x 28 + 1 pass = 5489). */
  moves: number;
  /** Width of the value head's hidden layer (seed 003: 256). */
  valueHidden: number;
  /**
   * The cells policy head (absent: the fully connected head): 1x1 conv + BN + ReLU to `hidden`
   * channels, a 1x1 conv to `planes` per-cell score planes, and `biases` learned move-kind biases;
   * each move's logit is gathered from its cells by a per-position move table (see CellsConfig).
   */
  cells?: CellsConfig;
  /**
   * The pooled value head (absent: the fully connected one): 1x1 conv + BN + ReLU to `valuePool`
   * channels, each channel's mean over the board, then the two fully connected layers. Its weights
   * do not depend on where on the board a feature is (the board-wide head maps one plane through
   * H x W x valueHidden weights), so it generalises across positions of the hive.
   */
  valuePool?: number;
}

/**
 * Shape of the cells policy head: a move's logit is q[a] + q[b] + bias[slot], q the head's
 * [planes, H, W] score planes at the move's cells (a, b) and slot its kind (cpu/cell_logits.ts).
 */
export interface CellsConfig {
  hidden: number;
  planes: number;
  biases: number;
}

/** The integer fields of a NetConfig (every one a positive integer; `blocks` may be 0). */
const INT_FIELDS = [
  "blocks",
  "filters",
  "planes",
  "height",
  "width",
  "moves",
  "valueHidden",
] as const;

/** True when two configs name the same cells head (both absent counts as the same). */
export function sameCells(a: CellsConfig | undefined, b: CellsConfig | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.hidden === b.hidden && a.planes === b.planes && a.biases === b.biases;
}

/** Hive's move space: 7 directions x 28 source pieces x 28 reference pieces, plus pass. */
export const HIVE_MOVES = 7 * 28 * 28 + 1;

/** Named model sizes: `default` is seed 003's 19 x 256; `small` is for CPU runs; `tiny` for tests. */
export const NET_PRESETS: Record<string, NetConfig> = {
  default: {
    blocks: 19,
    filters: 256,
    planes: 24,
    height: 26,
    width: 26,
    moves: HIVE_MOVES,
    valueHidden: 256,
  },
  small: {
    blocks: 4,
    filters: 32,
    planes: 24,
    height: 26,
    width: 26,
    moves: HIVE_MOVES,
    valueHidden: 256,
  },
  tiny: { blocks: 1, filters: 8, planes: 4, height: 6, width: 6, moves: 12, valueHidden: 16 },
};

/** Looks up a preset by name, with a clear error listing the valid names. */
export function netPreset(name: string): NetConfig {
  const cfg = NET_PRESETS[name];
  if (!cfg) {
    throw new KibitzError(
      "bad_args",
      `unknown model preset "${name}" (expected ${Object.keys(NET_PRESETS).join(", ")})`,
    );
  }
  return { ...cfg };
}

/** Checks that every field is a positive integer (and, when present, each of the cells head's). */
export function validateConfig(cfg: NetConfig): NetConfig {
  for (const k of INT_FIELDS) {
    const v = cfg[k];
    if (!Number.isInteger(v) || v < (k === "blocks" ? 0 : 1)) {
      throw new KibitzError("bad_config", `model config ${k} must be a positive integer, got ${v}`);
    }
  }
  if (cfg.cells !== undefined) {
    const c = cfg.cells;
    if (typeof c !== "object" || c === null) {
      throw new KibitzError("bad_config", `model config cells must be an object, got ${c}`);
    }
    for (const k of ["hidden", "planes", "biases"] as const) {
      const v = c[k];
      if (!Number.isInteger(v) || v < 1) {
        throw new KibitzError(
          "bad_config",
          `model config cells.${k} must be a positive integer, got ${v}`,
        );
      }
    }
  }
  if (cfg.valuePool !== undefined && (!Number.isInteger(cfg.valuePool) || cfg.valuePool < 1)) {
    throw new KibitzError(
      "bad_config",
      `model config valuePool must be a positive integer, got ${cfg.valuePool}`,
    );
  }
  return cfg;
}

/**
 * Multiply-adds of one position's forward pass (convolutions and fully connected layers; the cells
 * head's two 1x1 convs over the whole board, its gather adds none).
 */
export function forwardMacs(cfg: NetConfig): number {
  const hw = cfg.height * cfg.width, f = cfg.filters;
  const tower = (cfg.planes * f * 9 + cfg.blocks * 2 * f * f * 9) * hw;
  const vp = cfg.valuePool;
  const value = vp
    ? vp * f * hw + vp * cfg.valueHidden + cfg.valueHidden
    : f * hw + hw * cfg.valueHidden + cfg.valueHidden;
  const c = cfg.cells;
  const policy = c ? (c.hidden * f + c.planes * c.hidden) * hw : 2 * f * hw + 2 * hw * cfg.moves;
  return tower + policy + value;
}
