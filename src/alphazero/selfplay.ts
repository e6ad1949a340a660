// Self-play: many games at once, each with its own search, all sharing one batched evaluator.
// Every searched position becomes a training position (input planes, visit distribution, and the
// game's result from that position's side to move).
import type { Evaluator } from "../mcts/evaluator.ts";
import { type GameSpec, inputSize } from "../mcts/game.ts";
import { defaultSearchConfig, Search, type SearchConfig } from "../mcts/search.ts";
import type { Position } from "./buffer.ts";
import { requireMoveCells } from "./evaluator.ts";

/** Self-play settings (seed 003: 800 playouts, temperature 1.0 for 15 moves then 0.1). */
export interface SelfPlayConfig {
  /** Playouts per move. */
  playouts: number;
  /** Games played at the same time (their leaves share the evaluator's batches). */
  concurrency: number;
  /** Moves played with `temperature`; `lateTemperature` after. */
  temperatureMoves: number;
  temperature: number;
  lateTemperature: number;
  /** A game reaching this many plies is scored a draw (0: no limit). */
  maxPlies: number;
  search: SearchConfig;
  /**
   * Store each position's move cells (Game.moveCells) with it: a cells-head network trains on
   * them. Off (absent) for fully connected heads.
   */
  cells?: boolean;
}

/** Seed 003's self-play numbers (root noise on). */
export function defaultSelfPlayConfig(over: Partial<SelfPlayConfig> = {}): SelfPlayConfig {
  return {
    playouts: 800,
    concurrency: 64,
    temperatureMoves: 15,
    temperature: 1,
    lateTemperature: 0.1,
    maxPlies: 0,
    search: defaultSearchConfig({ noise: true }),
    ...over,
  };
}

/** One finished game: its moves as text, the first player's result, and its positions. */
export interface GameRecord {
  index: number;
  seed: number;
  moves: string[];
  /** 1 first player won, -1 second player won, 0 draw. */
  result: number;
  positions: Position[];
  playouts: number;
}

/** Seed of game `index` of a run seeded `seed` (games replay alone, whatever the concurrency). */
export function gameSeed(seed: number, index: number): number {
  return (Math.imul(seed + 1, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;
}

/**
 * Plays one self-play game with its own search tree; `onMove` hears of each move as it is played
 * (its playouts), for progress while games are still running.
 */
export async function playSelfPlayGame<M>(
  spec: GameSpec<M>,
  evaluator: Evaluator<M>,
  cfg: SelfPlayConfig,
  index: number,
  seed: number,
  onMove?: (playouts: number) => void,
): Promise<GameRecord> {
  const s = gameSeed(seed, index);
  const search = new Search(spec.create(), evaluator, cfg.search, s);
  const per = inputSize(spec);
  const rows: {
    planes: Float32Array;
    legal: Int32Array;
    policy: Float32Array;
    cells?: Int32Array;
    side: number;
  }[] = [];
  const moves: string[] = [];
  let result: number | null = null;
  for (;;) {
    const g = search.position();
    const r = g.result();
    if (r !== null) {
      // r is from the side to move's view; the first player's result follows.
      result = g.toMove() === 0 ? r : -r;
      break;
    }
    if (cfg.maxPlies > 0 && g.ply() >= cfg.maxPlies) {
      result = 0;
      break;
    }
    const before = search.counters.playouts;
    await search.run(cfg.playouts);
    onMove?.(search.counters.playouts - before);
    const st = search.rootStats();
    const total = st.visits.reduce((a, b) => a + b, 0);
    const planes = new Float32Array(per);
    g.encode(planes, 0);
    rows.push({
      planes,
      legal: Int32Array.from(st.moves.map((m) => g.moveIndex(m))),
      policy: Float32Array.from(st.visits.map((v) => v / Math.max(1, total))),
      ...(cfg.cells ? { cells: requireMoveCells(g, spec.name)(st.moves) } : {}),
      side: g.toMove(),
    });
    const t = g.ply() < cfg.temperatureMoves ? cfg.temperature : cfg.lateTemperature;
    const move = search.pickMove(t);
    moves.push(g.moveText(move));
    search.advance(move);
  }
  const positions: Position[] = rows.map((r) => ({
    planes: r.planes,
    legal: r.legal,
    policy: r.policy,
    ...(r.cells ? { cells: r.cells } : {}),
    z: r.side === 0 ? result! : -result!,
  }));
  return { index, seed: s, moves, result, positions, playouts: search.counters.playouts };
}

/**
 * Plays games `first`, ..., `first + count - 1` with `cfg.concurrency` in flight, calling `onGame`
 * as each finishes (in completion order; each game's content depends only on its index and seed).
 * `stop` returning true ends the run once the games in flight finish; `onMove` hears of every
 * move of every game (its playouts) as it is played.
 */
export async function selfPlay<M>(
  spec: GameSpec<M>,
  evaluator: Evaluator<M>,
  cfg: SelfPlayConfig,
  first: number,
  count: number,
  seed: number,
  onGame: (g: GameRecord) => Promise<void> | void,
  stop: () => boolean = () => false,
  onMove?: (playouts: number) => void,
): Promise<void> {
  let next = first;
  const end = first + count;
  const worker = async () => {
    while (next < end && !stop()) {
      const index = next++;
      const rec = await playSelfPlayGame(spec, evaluator, cfg, index, seed, onMove);
      await onGame(rec);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(cfg.concurrency, count)) }, worker));
}
