import { parse as parseToml } from "smol-toml";
import { CFR_ALGORITHMS, type CfrAlgorithm, regretsNonNegative } from "../cfr/schedule.ts";
import { sharedMemoryAvailable } from "../cfr/threads.ts";
import { KibitzError } from "../errors.ts";
import { QUANT_FORMATS, type QuantFormat } from "../quant/format.ts";
import type { Street, TreeConfig } from "./action_tree.ts";
import {
  BET_SIZE_PRESETS,
  type BetSize,
  type BetSizeOptions,
  parseBetSizeList,
} from "./bet_size.ts";
import { cardName, COMBO_CARDS, parseExactCards } from "./cards.ts";
import { parseRange, type RangeWeights } from "./range.ts";
import {
  parseWarmStartSettings,
  WARMSTART_CONFIG_KEYS,
  type WarmStartSettings,
} from "./warmstart_config.ts";

// TOML solve configs, in the shape of the Rust solver fork the source documents describe:
// [ranges] [cards] [tree] [bet_sizes.flop|turn|river] [solver] [output].

/** Solver settings of a config. */
export interface SolverSettings {
  algorithm: CfrAlgorithm;
  regretBits: number;
  strategyBits: number;
  /** Explicit regret format, when `regret_format` is given. */
  regretFormat: QuantFormat | null;
  maxIterations: number;
  targetExploitabilityPct: number;
  enablePruning: boolean;
  /** Merge suit-isomorphic turn/river cards (default true). */
  suitIsomorphism: boolean;
  seed: number;
  threads: number;
  backend: "auto" | "cpu" | "gpu";
  /** GPU backend: device memory budget in MB (1e6 bytes; 0: the default memory plan). */
  gpuMemoryMb: number;
  /** Warm start from a small bet-size tree (seed 002); absent or disabled: a plain solve. */
  warmStart?: WarmStartSettings;
}

/** A validated solve config. */
export interface SolveConfig {
  ranges: { oop: string; ip: string };
  rangeWeights: [RangeWeights, RangeWeights];
  /** Board cards (3 to 5) of the starting street. */
  board: number[];
  tree: TreeConfig;
  solver: SolverSettings;
  outputDirectory: string;
}

const SECTIONS: Record<string, readonly string[]> = {
  ranges: ["oop", "ip"],
  cards: ["flop", "turn", "river"],
  tree: [
    "starting_pot",
    "effective_stack",
    "rake_rate",
    "rake_cap",
    "add_allin_threshold",
    "force_allin_threshold",
    "merging_threshold",
  ],
  bet_sizes: ["flop", "turn", "river"],
  solver: [
    "algorithm",
    "regret_bits",
    "strategy_bits",
    "regret_format",
    "quantization",
    "max_iterations",
    "target_exploitability_pct",
    "enable_pruning",
    "suit_isomorphism",
    "seed",
    "threads",
    "backend",
    "gpu_memory_mb",
    ...WARMSTART_CONFIG_KEYS,
  ],
  output: ["directory"],
};
const STREET_KEYS = ["preset", "oop_bet", "oop_raise", "ip_bet", "ip_raise", "oop_donk"];

type Table = Record<string, unknown>;

function fail(message: string): never {
  throw new KibitzError("bad_config", message);
}

function typeName(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v instanceof Date) return "date";
  if (v === null) return "null";
  if (typeof v === "number" && Number.isInteger(v)) return "integer";
  if (typeof v === "number") return "float";
  if (typeof v === "object") return "table";
  return typeof v;
}

function checkKeys(t: Table, valid: readonly string[], path: string): void {
  for (const k of Object.keys(t)) {
    if (!valid.includes(k)) {
      fail(
        `unknown key "${path ? path + "." : ""}${k}"; valid keys${path ? ` in [${path}]` : ""}: ${
          valid.join(", ")
        }`,
      );
    }
  }
}

function table(root: Table, key: string, path: string): Table {
  const v = root[key];
  if (v === undefined) return {};
  if (typeName(v) !== "table") fail(`${path} must be a table, got ${typeName(v)}`);
  return v as Table;
}

function str(t: Table, key: string, path: string, fallback?: string): string {
  const v = t[key];
  if (v === undefined) {
    if (fallback === undefined) fail(`missing ${path}.${key} (a string)`);
    return fallback;
  }
  if (typeof v !== "string") fail(`${path}.${key} must be a string, got ${typeName(v)} ${show(v)}`);
  return v;
}

function num(t: Table, key: string, path: string, fallback: number, integer = false): number {
  const v = t[key];
  if (v === undefined) return fallback;
  if (typeof v !== "number" || (integer && !Number.isInteger(v)) || !Number.isFinite(v)) {
    fail(
      `${path}.${key} must be ${integer ? "an integer" : "a number"}, got ${typeName(v)} ${
        show(v)
      }`,
    );
  }
  return v;
}

function bool(t: Table, key: string, path: string, fallback: boolean): boolean {
  const v = t[key];
  if (v === undefined) return fallback;
  if (typeof v !== "boolean") {
    fail(`${path}.${key} must be true or false, got ${typeName(v)} ${show(v)}`);
  }
  return v;
}

function show(v: unknown): string {
  return typeof v === "string" ? JSON.stringify(v) : typeName(v) === "table" ? "" : String(v);
}

/** Spot T1 of ../shared/data/poker/REFERENCE.md (turn start) without solver settings: shared by the
 * built-in example and the solve bench. */
export const T1_SPOT = `[ranges]
oop = "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"
ip = "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"

[cards]
flop = "Td9d6h"
turn = "Qc"

[tree]
starting_pot = 200
effective_stack = 900

[bet_sizes.turn]
oop_bet = "60%, e, a"
oop_raise = "2.5x"
ip_bet = "60%, e, a"
ip_raise = "2.5x"

[bet_sizes.river]
oop_bet = "60%, e, a"
oop_raise = "2.5x"
ip_bet = "60%, e, a"
ip_raise = "2.5x"
oop_donk = "50%"
`;

/** The built-in example spot (spot T1 of the reference figures, turn start). */
export const EXAMPLE_CONFIG = `# Spot T1 of ../shared/data/poker/REFERENCE.md
${T1_SPOT}
[solver]
max_iterations = 300
target_exploitability_pct = 0.5

[output]
directory = "out/solve"
`;

/** Parses and validates a TOML solve config; `source` names the file in errors. */
export function parseSolveConfig(text: string, source = "config"): SolveConfig {
  let root: Table;
  try {
    root = parseToml(text) as Table;
  } catch (e) {
    throw new KibitzError("bad_config", `${source}: invalid TOML: ${(e as Error).message}`);
  }
  try {
    return validate(root);
  } catch (e) {
    if (e instanceof KibitzError) throw new KibitzError(e.code, `${source}: ${e.message}`);
    throw e;
  }
}

function validate(root: Table): SolveConfig {
  checkKeys(root, Object.keys(SECTIONS), "");
  for (const [s, keys] of Object.entries(SECTIONS)) {
    if (s !== "bet_sizes") checkKeys(table(root, s, s), keys, s);
  }
  const ranges = table(root, "ranges", "ranges");
  const oop = str(ranges, "oop", "ranges"), ip = str(ranges, "ip", "ranges");
  const rangeWeights: [RangeWeights, RangeWeights] = [
    parseRange(oop, "ranges.oop"),
    parseRange(ip, "ranges.ip"),
  ];

  const cards = table(root, "cards", "cards");
  const board = parseExactCards(str(cards, "flop", "cards"), 3, "cards.flop");
  const addCard = (key: string) => {
    const c = parseExactCards(str(cards, key, "cards"), 1, `cards.${key}`)[0];
    if (board.includes(c)) fail(`cards.${key}: ${cardName(c)} is already on the board`);
    board.push(c);
  };
  if (cards.turn !== undefined) addCard("turn");
  if (cards.river !== undefined) {
    if (cards.turn === undefined) fail("cards.river needs cards.turn (the river is the 5th card)");
    addCard("river");
  }
  const startingStreet = (board.length - 3) as Street;
  for (const [name, w] of [["oop", rangeWeights[0]], ["ip", rangeWeights[1]]] as const) {
    if (!w.some((x, i) => x > 0 && !conflicts(i, board))) {
      fail(`ranges.${name} has no hand left once the board cards are removed`);
    }
  }

  const tt = table(root, "tree", "tree");
  const betSizes = table(root, "bet_sizes", "bet_sizes");
  checkKeys(betSizes, SECTIONS.bet_sizes, "bet_sizes");
  const streets: [BetSizeOptions, BetSizeOptions][] = [];
  const donk: [BetSize[] | null, BetSize[] | null] = [null, null];
  (["flop", "turn", "river"] as const).forEach((name, st) => {
    const s = streetSizes(betSizes[name], name, st);
    streets.push(s.sizes);
    if (st > 0) donk[st - 1] = s.donk;
  });
  const tree: TreeConfig = {
    startingStreet,
    startingPot: num(tt, "starting_pot", "tree", NaN, true),
    effectiveStack: num(tt, "effective_stack", "tree", NaN, true),
    rakeRate: num(tt, "rake_rate", "tree", 0),
    rakeCap: num(tt, "rake_cap", "tree", 0),
    betSizes: streets,
    donkSizes: donk,
    addAllinThreshold: num(tt, "add_allin_threshold", "tree", 1.5),
    forceAllinThreshold: num(tt, "force_allin_threshold", "tree", 0.15),
    mergingThreshold: num(tt, "merging_threshold", "tree", 0.1),
  };
  if (tt.starting_pot === undefined) fail("missing tree.starting_pot (an integer)");
  if (tt.effective_stack === undefined) fail("missing tree.effective_stack (an integer)");
  checkChipBounds(tree.startingPot, tree.effectiveStack);

  const solver = solverSettings(table(root, "solver", "solver"));
  const output = table(root, "output", "output");
  return {
    ranges: { oop, ip },
    rangeWeights,
    board,
    tree,
    solver,
    outputDirectory: str(output, "directory", "output", "out/solve"),
  };
}

/** Most chips a hand may put in play (pot plus both stacks): amounts stay exact 32-bit integers. */
export const MAX_TOTAL_CHIPS = 2 ** 31 - 1;

/** Rejects a pot or stack so large that amounts leave the exact integer range (`1e308`). */
function checkChipBounds(pot: number, stack: number): void {
  for (const [key, v] of [["starting_pot", pot], ["effective_stack", stack]] as const) {
    if (v > MAX_TOTAL_CHIPS) {
      fail(`tree.${key} = ${v} is too large: at most ${MAX_TOTAL_CHIPS} chips`);
    }
  }
  if (pot + 2 * stack > MAX_TOTAL_CHIPS) {
    fail(
      `tree.starting_pot + 2 * tree.effective_stack = ${pot + 2 * stack} is too large: ` +
        `the chips in play must stay at most ${MAX_TOTAL_CHIPS}`,
    );
  }
}

function conflicts(combo: number, board: number[]): boolean {
  return board.includes(COMBO_CARDS[2 * combo]) || board.includes(COMBO_CARDS[2 * combo + 1]);
}

function streetSizes(
  v: unknown,
  name: string,
  st: number,
): { sizes: [BetSizeOptions, BetSizeOptions]; donk: BetSize[] | null } {
  const path = `bet_sizes.${name}`;
  const presetOf = (p: unknown, where: string) => {
    if (typeof p !== "string") fail(`${where} must be a preset name string, got ${typeName(p)}`);
    const preset = BET_SIZE_PRESETS[p];
    if (!preset) {
      fail(`${where}: unknown preset "${p}"; valid: ${Object.keys(BET_SIZE_PRESETS).join(", ")}`);
    }
    return preset;
  };
  let t: Table = {};
  let preset = BET_SIZE_PRESETS.standard;
  if (typeof v === "string") preset = presetOf(v, path);
  else if (v !== undefined) {
    if (typeName(v) !== "table") {
      fail(`${path} must be a table or a preset name, got ${typeName(v)}`);
    }
    t = v as Table;
    checkKeys(t, st === 0 ? STREET_KEYS.filter((k) => k !== "oop_donk") : STREET_KEYS, path);
    if (t.preset !== undefined) preset = presetOf(t.preset, `${path}.preset`);
  }
  const list = (key: string, fallback: string, raise: boolean) =>
    parseBetSizeList(str(t, key, path, fallback), raise, `${path}.${key}`);
  const sizes: [BetSizeOptions, BetSizeOptions] = [
    { bet: list("oop_bet", preset.bet, false), raise: list("oop_raise", preset.raise, true) },
    { bet: list("ip_bet", preset.bet, false), raise: list("ip_raise", preset.raise, true) },
  ];
  let donk: BetSize[] | null = null;
  if (st > 0) {
    const text = t.oop_donk !== undefined ? str(t, "oop_donk", path) : preset.donk;
    if (text.trim() !== "") donk = parseBetSizeList(text, false, `${path}.oop_donk`);
  }
  return { sizes, donk };
}

const BITS = [32, 16, 8, 4];

function solverSettings(t: Table): SolverSettings {
  const p = "solver";
  const algorithm = str(t, "algorithm", p, "dcfr");
  if (!(CFR_ALGORITHMS as readonly string[]).includes(algorithm)) {
    fail(`solver.algorithm: unknown algorithm "${algorithm}"; valid: ${CFR_ALGORITHMS.join(", ")}`);
  }
  const algo = algorithm as CfrAlgorithm;
  let qBits: number | null = null;
  if (t.quantization !== undefined) {
    const q = str(t, "quantization", p);
    const m = /^(32|16|8|4)bit$/.exec(q) ?? (q === "float32" || q === "f32" ? ["", "32"] : null);
    if (!m) fail(`solver.quantization must be "32bit", "16bit", "8bit" or "4bit", got "${q}"`);
    qBits = Number(m[1]);
  }
  const regretBits = num(t, "regret_bits", p, qBits ?? 32, true);
  const strategyBits = num(t, "strategy_bits", p, qBits ?? 32, true);
  if (qBits !== null && t.regret_bits !== undefined && regretBits !== qBits) {
    fail(
      `solver.quantization = "${qBits}bit" already sets regret_bits = ${qBits}, but solver.regret_bits = ${regretBits}; give only one of them`,
    );
  }
  if (!BITS.includes(regretBits)) {
    fail(`solver.regret_bits must be 32, 16, 8 or 4, got ${regretBits}`);
  }
  if (!BITS.includes(strategyBits)) {
    fail(`solver.strategy_bits must be 32, 16, 8 or 4, got ${strategyBits}`);
  }
  let regretFormat: QuantFormat | null = null;
  if (t.regret_format !== undefined) {
    const f = str(t, "regret_format", p);
    if (!(QUANT_FORMATS as readonly string[]).includes(f)) {
      fail(`solver.regret_format: unknown format "${f}"; valid: ${QUANT_FORMATS.join(", ")}`);
    }
    regretFormat = f as QuantFormat;
    const bits = f === "f32" ? 32 : Number(f.slice(1));
    if ((t.regret_bits !== undefined || qBits !== null) && bits !== regretBits) {
      fail(
        `solver.regret_format = "${f}" stores ${bits}-bit regrets, but regret_bits is ${regretBits}; give only one of them`,
      );
    }
  }
  const signedNeeded = !regretsNonNegative(algo);
  if (regretFormat && signedNeeded && regretFormat.startsWith("u")) {
    fail(
      `solver.regret_format = "${regretFormat}" is unsigned, but ${algo} keeps negative regrets (it only discounts them), so they cannot be stored; use a signed format (i16, i8, i4) or an algorithm that floors regrets at 0 (dcfr+, cfr+, pdcfr+)`,
    );
  }
  const enablePruning = bool(t, "enable_pruning", p, false);
  if (enablePruning && !signedNeeded) {
    fail(
      `solver.enable_pruning skips actions whose regret is far below zero, but ${algo} floors regrets at 0, so nothing could be pruned; use algorithm = "dcfr" or disable pruning`,
    );
  }
  const maxIterations = num(t, "max_iterations", p, 1000, true);
  if (maxIterations < 1) fail(`solver.max_iterations must be at least 1, got ${maxIterations}`);
  const target = num(t, "target_exploitability_pct", p, 0.5);
  if (target < 0) fail(`solver.target_exploitability_pct must be >= 0, got ${target}`);
  const seed = num(t, "seed", p, 0, true);
  if (seed < 0 || seed > 0xffffffff) fail(`solver.seed must be in [0, 2^32), got ${seed}`);
  // Default: every core, where threads can share memory (a browser page must be cross-origin isolated).
  const cores = sharedMemoryAvailable() ? navigator.hardwareConcurrency || 1 : 1;
  const threads = num(t, "threads", p, cores, true);
  if (threads < 1) fail(`solver.threads must be at least 1, got ${threads}`);
  const backend = str(t, "backend", p, "auto");
  if (backend !== "auto" && backend !== "cpu" && backend !== "gpu") {
    fail(`solver.backend must be "auto", "cpu" or "gpu", got "${backend}"`);
  }
  const gpuMemoryMb = num(t, "gpu_memory_mb", p, 0);
  if (!(gpuMemoryMb >= 0)) fail(`solver.gpu_memory_mb must be >= 0, got ${gpuMemoryMb}`);
  return {
    algorithm: algo,
    regretBits,
    strategyBits,
    regretFormat,
    maxIterations,
    targetExploitabilityPct: target,
    enablePruning,
    suitIsomorphism: bool(t, "suit_isomorphism", p, true),
    seed,
    threads,
    backend,
    gpuMemoryMb,
    warmStart: parseWarmStartSettings(t),
  };
}
