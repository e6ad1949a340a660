// Hive for the AlphaZero engine: the MCTS game interface over HiveGame, with self-play's draw rules
// (both queens surrounded at once is a draw by the rules; a ply cap and, optionally, threefold
// repetition end endless games as draws) and symmetry augmentation: a game may see the board in
// one of the 12 hex symmetries, applied to the hex coordinates before encoding, so the network is
// trained and queried on rotated and mirrored boards while the search plays the real moves.
import {
  encodeHivePosition,
  HIVE_POLICY_SIZE,
  hiveCellPositions,
  hiveMoveIndex,
} from "../hive/encoding.ts";
import { HiveGame } from "../hive/game.ts";
import { HIVE_CELLS, hiveMoveCells } from "../hive/move_cells.ts";
import { HEX_SYMMETRIES, transformMove } from "../hive/symmetry.ts";
import type { Game, GameSpec, Outcome } from "../mcts/game.ts";
import { KibitzError } from "../errors.ts";
import { loadHiveModel } from "../nn/model_file.ts";
import { saveCheckpoint } from "../nn/checkpoint.ts";
import { NET_PRESETS, type NetConfig, sameCells } from "../nn/config.ts";
import { defaultSearchConfig } from "../mcts/search.ts";
import { defaultArenaConfig } from "./arena.ts";
import { type AzPreset, netFor, registerAzGame, seed003Preset } from "./presets.ts";
import { defaultSelfPlayConfig } from "./selfplay.ts";
import { defaultTrainConfig } from "./train.ts";

/** Draw rules of a Hive game played by the engine. */
export interface HiveRules {
  /** UHP game type (default `Base+MLP`). */
  gameType: string;
  /** Plies after which the game is a draw (0: none). */
  maxPlies: number;
  /** The third occurrence of a position (same hash) is a draw. */
  threefold: boolean;
}

/** Self-play rules: Base+MLP, a draw at 200 plies, threefold repetition on. */
export const HIVE_SELFPLAY_RULES: HiveRules = {
  gameType: "Base+MLP",
  maxPlies: 200,
  threefold: true,
};

/** The result of a Hive position from its side to move, by the rules only (null while going on). */
export function hiveOutcome(g: HiveGame): Outcome | null {
  return g.outcomeForSideToMove();
}

/** One Hive position for the search; moves are HiveGame's packed moves. */
export class HiveAzGame implements Game<number> {
  private readonly seen = new Map<number, number>();
  private readonly hashes: number[] = [];
  /** The game seen through the symmetry (null for the identity). */
  private readonly view: HiveGame | null;
  /** The cell map of the current position once computed (cellMap); play and undo clear it. */
  private cells: Map<number, number> | null = null;

  constructor(
    readonly game: HiveGame,
    readonly rules: HiveRules = HIVE_SELFPLAY_RULES,
    /** Symmetry (0..11) applied before encoding; 0 is the board as it is. */
    readonly symmetry = 0,
  ) {
    this.view = symmetry === 0 ? null : new HiveGame(game.gameType);
    // Replay the history so the repetition counts and the view match the position.
    const moves = game.history();
    const g = new HiveGame(game.gameType);
    this.enter(g.hashKey());
    for (const m of moves) {
      g.play(m);
      this.view?.play(transformMove(m, symmetry));
      this.enter(g.hashKey());
    }
  }

  private enter(h: number): void {
    this.hashes.push(h);
    this.seen.set(h, (this.seen.get(h) ?? 0) + 1);
  }

  /** Side to move. */
  toMove(): 0 | 1 {
    return this.game.colorToMove as 0 | 1;
  }

  /** Plies played. */
  ply(): number {
    return this.game.turn;
  }

  /** Legal moves (a lone pass when nothing else is legal); none once the game is over. */
  legalMoves(): number[] {
    return this.result() !== null ? [] : this.game.validMoves();
  }

  /** Plays a packed move. */
  play(move: number): void {
    this.cells = null;
    this.game.play(move);
    this.view?.play(transformMove(move, this.symmetry));
    this.enter(this.game.hashKey());
  }

  /** Takes back the last move. */
  undo(): void {
    const h = this.hashes.pop()!;
    const n = this.seen.get(h)! - 1;
    if (n === 0) this.seen.delete(h);
    else this.seen.set(h, n);
    this.cells = null;
    this.game.undo();
    this.view?.undo();
  }

  /** The rules' result, else a draw at the ply cap or on a third repetition, else null. */
  result(): Outcome | null {
    const r = hiveOutcome(this.game);
    if (r !== null) return r;
    if (this.rules.maxPlies > 0 && this.game.turn >= this.rules.maxPlies) return 0;
    if (this.rules.threefold && (this.seen.get(this.game.hashKey()) ?? 0) >= 3) return 0;
    return null;
  }

  /** 53 bits of the Zobrist hash. */
  hash(): number {
    return this.game.hashKey();
  }

  /**
   * The encoding's cell map of the current (view of the) position, computed once per position:
   * encode and moveCells are called apart for each evaluated leaf and both need it.
   */
  private cellMap(): Map<number, number> {
    return this.cells ??= hiveCellPositions(this.view ?? this.game);
  }

  /** Seed 003's 24 planes of the (symmetric view of the) position. */
  encode(out: Float32Array | Float16Array, offset: number): void {
    encodeHivePosition(this.view ?? this.game, out, offset, undefined, this.cellMap());
  }

  /** Policy index of a move, in the symmetric view. */
  moveIndex(move: number): number {
    if (!this.view) return hiveMoveIndex(this.game, move);
    return hiveMoveIndex(this.view, transformMove(move, this.symmetry));
  }

  /** The cells head's (a, b, slot) per move (hiveMoveCells), in the symmetric view. */
  moveCells(moves: number[]): Int32Array {
    const pos = this.cellMap();
    if (!this.view) return hiveMoveCells(this.game, moves, undefined, pos);
    const view = moves.map((m) => transformMove(m, this.symmetry));
    return hiveMoveCells(this.view, view, undefined, pos);
  }

  /** UHP MoveString. */
  moveText(move: number): string {
    return this.game.moveString(move);
  }

  /** An independent copy (same rules and symmetry). */
  clone(): HiveAzGame {
    return new HiveAzGame(this.game.clone(), this.rules, this.symmetry);
  }
}

/**
 * The Hive game spec: 24 planes of 26 x 26, 5,489 moves. With `augment`, each new game draws the
 * next of the 12 symmetries in turn (deterministic in creation order).
 */
export function hiveSpec(
  rules: HiveRules = HIVE_SELFPLAY_RULES,
  augment = true,
): GameSpec<number> {
  let next = 0;
  return {
    name: "hive",
    planes: 24,
    height: 26,
    width: 26,
    moves: HIVE_POLICY_SIZE,
    create: () =>
      new HiveAzGame(new HiveGame(rules.gameType), rules, augment ? next++ % HEX_SYMMETRIES : 0),
  };
}

/** Network sizes for Hive: seed 003's 19 x 256 for GPUs, `cpu` for this machine, `tiny` for CI. */
export const HIVE_NETS: Record<string, NetConfig> = {
  default: { ...NET_PRESETS.default },
  /** Seed 003's 19 x 256 tower with the cells policy head (the `hive-cells` preset's network). */
  "cells-default": { ...NET_PRESETS.default, cells: { ...HIVE_CELLS } },
  small: { ...NET_PRESETS.small },
  cpu: { ...NET_PRESETS.small, blocks: 2, filters: 16, valueHidden: 64 },
  /** The `cpu` tower with the cells policy head (docs/cells_head.md: scores moves by their cells). */
  "cells-cpu": {
    ...NET_PRESETS.small,
    blocks: 2,
    filters: 16,
    valueHidden: 64,
    cells: { ...HIVE_CELLS },
  },
  /**
   * `cells-cpu` with the pooled value head (docs/value_pool.md): 32 channels, each averaged over
   * the board, instead of one plane through 676 x 64 position-specific weights.
   */
  "cells-pool-cpu": {
    ...NET_PRESETS.small,
    blocks: 2,
    filters: 16,
    valueHidden: 64,
    cells: { ...HIVE_CELLS },
    valuePool: 32,
  },
  tiny: { ...NET_PRESETS.small, blocks: 1, filters: 4, valueHidden: 8 },
  /** The `tiny` tower with a small cells head (CI's test of the loop with a cells net). */
  "cells-tiny": {
    ...NET_PRESETS.small,
    blocks: 1,
    filters: 4,
    valueHidden: 8,
    cells: { ...HIVE_CELLS, hidden: 4 },
  },
};

/** `hive`: seed 003's numbers with the 19 x 256 network and self-play's draw rules. */
export function hivePreset(): AzPreset {
  const spec = hiveSpec() as GameSpec<unknown>;
  const p = seed003Preset(spec);
  p.selfplay.maxPlies = HIVE_SELFPLAY_RULES.maxPlies;
  p.arena.maxPlies = HIVE_SELFPLAY_RULES.maxPlies;
  return p;
}

/** `hive-cpu`: the shipped network's size and numbers that finish an iteration on a laptop CPU. */
export function hiveCpuPreset(): AzPreset {
  const spec = hiveSpec() as GameSpec<unknown>;
  const p = seed003Preset(spec);
  return {
    ...p,
    net: netFor(spec, HIVE_NETS.cpu),
    selfplay: defaultSelfPlayConfig({
      playouts: 32,
      concurrency: 8,
      maxPlies: HIVE_SELFPLAY_RULES.maxPlies,
      search: defaultSearchConfig({ noise: true, leavesPerRound: 4 }),
    }),
    train: defaultTrainConfig({ batch: 32, steps: 100 }),
    arena: defaultArenaConfig({
      games: 8,
      playouts: 32,
      openingMoves: 2,
      concurrency: 8,
      maxPlies: HIVE_SELFPLAY_RULES.maxPlies,
    }),
    gamesPerIteration: 8,
    iterations: 1,
    bufferCapacity: 50_000,
    maxBatch: 32,
    cacheSize: 20_000,
  };
}

/**
 * `hive-cells-cpu`: `hive-cpu` with the cells policy head (docs/cells_head.md; warm start from
 * `hive-pretrain --head cells`).
 */
export function hiveCellsCpuPreset(): AzPreset {
  return withCellsHead(hiveCpuPreset());
}

/**
 * `hive-cells-pool-cpu`: `hive-cells-cpu` with the pooled value head (docs/value_pool.md; warm start
 * from `hive-pretrain --head cells --value-head pool`).
 */
export function hiveCellsPoolCpuPreset(): AzPreset {
  return withValuePool(hiveCellsCpuPreset(), HIVE_NETS["cells-pool-cpu"].valuePool);
}

/** `hive-tiny`: a few positions and one iteration, for the CPU test of the whole loop. */
export function hiveTinyPreset(): AzPreset {
  const rules = { ...HIVE_SELFPLAY_RULES, maxPlies: 6 };
  const spec = hiveSpec(rules) as GameSpec<unknown>;
  const p = seed003Preset(spec);
  return {
    ...p,
    net: netFor(spec, HIVE_NETS.tiny),
    selfplay: defaultSelfPlayConfig({
      playouts: 4,
      concurrency: 2,
      maxPlies: rules.maxPlies,
      search: defaultSearchConfig({ noise: true, leavesPerRound: 2 }),
    }),
    train: defaultTrainConfig({ batch: 4, steps: 2 }),
    arena: defaultArenaConfig({
      games: 2,
      playouts: 2,
      openingMoves: 0,
      concurrency: 2,
      maxPlies: rules.maxPlies,
    }),
    gamesPerIteration: 2,
    iterations: 1,
    bufferCapacity: 1000,
    maxBatch: 8,
    cacheSize: 100,
  };
}

/**
 * A Hive preset with the cells policy head (docs/cells_head.md) on its tower: self-play stores each
 * position's move cells, and batches carry move tables. `cells` defaults to the Hive convention.
 */
export function withCellsHead(
  p: AzPreset,
  cells: NetConfig["cells"] = { ...HIVE_CELLS },
): AzPreset {
  return { ...p, net: { ...p.net, cells } };
}

/**
 * A Hive preset with the pooled value head (docs/value_pool.md): `valuePool` channels, each
 * averaged over the board, feed the value head's fully connected layers.
 */
export function withValuePool(p: AzPreset, valuePool = 32): AzPreset {
  return { ...p, net: { ...p.net, valuePool } };
}

/** "19 x 256 network with the cells head (...) and the board-wide value head", for messages. */
export function describeNet(c: NetConfig): string {
  const head = c.cells
    ? `the cells head (hidden ${c.cells.hidden}, ${c.cells.planes} planes, ${c.cells.biases} biases)`
    : "the fully connected policy head";
  const value = c.valuePool
    ? `the pooled value head (${c.valuePool} channels)`
    : "the board-wide value head";
  return `${c.blocks} x ${c.filters} network with ${head} and ${value}`;
}

/**
 * Writes `init` (a checkpoint or model file whose shape matches `net`) as the loop's first best
 * network in `dir`, unless the run there already has one (so resuming never overwrites).
 */
export async function warmStart(dir: string, init: string, net: NetConfig): Promise<boolean> {
  const best = `${dir}/best.kbnn`;
  try {
    await Deno.stat(best);
    return false;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const m = await loadHiveModel(init);
  const c = m.weights.config;
  const same = (k: keyof NetConfig) =>
    k === "cells" ? sameCells(c.cells, net.cells) : c[k] === net[k];
  const keys = new Set([...Object.keys(net), ...Object.keys(c)] as (keyof NetConfig)[]);
  for (const k of keys) {
    // A config without `cells` and one with `cells: undefined` are the same (FC) network.
    if (!same(k)) {
      const hint = c.cells && !net.cells
        ? "a cells-head model: use a hive-cells preset"
        : !c.cells && net.cells
        ? "a fully connected head's model: use a preset without cells"
        : c.valuePool && !net.valuePool
        ? "a pooled value head's model: use a hive-cells-pool preset"
        : !c.valuePool && net.valuePool
        ? "a board-wide value head's model: use a preset without pool"
        : `${k} differs`;
      const want = describeNet(net);
      throw new KibitzError(
        "shape_mismatch",
        `${init} is a ${describeNet(c)}; this preset needs a ${want} (${hint})`,
      );
    }
  }
  await Deno.mkdir(dir, { recursive: true });
  await saveCheckpoint(best, m.weights, { generation: 0, warmStart: init });
  return true;
}

registerAzGame("hive", hivePreset);
registerAzGame("hive-cpu", hiveCpuPreset);
registerAzGame("hive-tiny", hiveTinyPreset);
registerAzGame("hive-cells", () => withCellsHead(hivePreset()));
registerAzGame("hive-cells-cpu", hiveCellsCpuPreset);
registerAzGame("hive-cells-pool-cpu", hiveCellsPoolCpuPreset);
registerAzGame(
  "hive-cells-tiny",
  () => withCellsHead(hiveTinyPreset(), HIVE_NETS["cells-tiny"].cells),
);
