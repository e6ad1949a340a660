// The AlphaZero loop (self-play -> train -> arena -> promote) over a state folder, and the stages
// alone. Every stage's progress is durable, so the loop resumes after Ctrl-C or a crash:
//   best.kbnn, candidate.kbnn   checkpoints (candidate with SGD momentum and its step)
//   buffer/                      replay buffer chunks (each records its iteration and game count)
//   selfplay/iter-NNNN.jsonl     every self-play game (moves, result)
//   arena/iter-NNNN.jsonl        every arena game (colours, moves, result)
//   log.jsonl                    one line per finished iteration (losses, arena, speeds)
//   state.json                   the iteration in progress and the best network's generation
import { writeFileAtomic } from "../cli/atomic.ts";
import { isKibitzError, KibitzError } from "../errors.ts";
import { CachedEvaluator, type Evaluator } from "../mcts/evaluator.ts";
import { type GameSpec, inputSize } from "../mcts/game.ts";
import { loadCheckpoint, saveCheckpoint } from "../nn/checkpoint.ts";
import { LOST_DEVICE_RETRIES, lostDeviceSummary } from "../gpu/device.ts";
import { createNet } from "../nn/create.ts";
import { RecoveringNet } from "../nn/recovering_net.ts";
import type { PolicyValueNet } from "../nn/net.ts";
import { initWeights, type NetWeights } from "../nn/params.ts";
import { type ArenaGame, type ArenaResult, arenaTotals, runArena } from "./arena.ts";
import { type Position, ReplayBuffer } from "./buffer.ts";
import { BatchEvaluator, paddedSizes } from "./evaluator.ts";
import type { AzPreset } from "./presets.ts";
import { type GameRecord, selfPlay } from "./selfplay.ts";
import { checkAgainstPerfect, type PerfectCheck } from "./solver.ts";
import { trainFromBuffer, type TrainSummary } from "./train.ts";

/** How often self-play reports its live rates between finished games. */
const LIVE_PROGRESS_MS = 5000;

/** How a run reports and stops. */
export interface RunHooks {
  /** Progress text (throttled by the caller). */
  progress?: (text: string, force?: boolean) => void;
  /** Polled between games and steps: true stops the run at the next durable point. */
  stopped?: () => boolean;
}

/** Speeds and batch sizes of a self-play run. */
export interface SelfPlayStats {
  games: number;
  positions: number;
  seconds: number;
  gamesPerHour: number;
  positionsPerSecond: number;
  playoutsPerSecond: number;
  averageBatch: number;
  /** Share of wall time inside network calls. */
  networkShare: number;
  cacheHitRate: number;
  /**
   * Seconds spent readying the network's batch sizes before the games began (GPU: recording the
   * plans, and on hardware tuning and compiling their kernels); not part of `seconds`.
   */
  prepareSeconds?: number;
}

/** A network and the evaluator stack in front of it (cache, then batches). */
export interface NetPlayer {
  net: PolicyValueNet;
  batcher: BatchEvaluator<unknown>;
  evaluator: Evaluator<unknown>;
  cache: CachedEvaluator<unknown> | null;
  /** Seconds it took to ready the network's batch sizes (0 on the CPU). */
  prepareSeconds: number;
  close(): void;
}

/**
 * Builds a network on `backend` with its batched, cached evaluator. On the GPU two batches may be
 * in flight (the readback of one overlaps the work of the next), every padded batch size is
 * readied before play (see BatchEvaluator.prepare), and a lost device is replaced by a new one
 * (RecoveringNet; `onRecover` hears of it); the CPU runs one batch at a time.
 */
export async function netPlayer(
  weights: NetWeights,
  game: GameSpec<unknown>,
  backend: string,
  maxBatch: number,
  cacheSize: number,
  onRecover: (message: string) => void = (m) => console.error(`warning: ${m}`),
): Promise<NetPlayer> {
  const built = await createNet(weights, backend);
  const net = built.backend === "gpu"
    ? new RecoveringNet(built, () => createNet(weights, backend), onRecover)
    : built;
  const batcher = new BatchEvaluator(net, game, maxBatch, net.backend === "gpu" ? 2 : 1);
  const cache = cacheSize > 0 ? new CachedEvaluator(batcher, cacheSize) : null;
  let prepareSeconds: number;
  try {
    prepareSeconds = await batcher.prepare();
  } catch (e) {
    batcher.close();
    net.dispose();
    throw e;
  }
  return {
    net,
    batcher,
    evaluator: cache ?? batcher,
    cache,
    prepareSeconds,
    close() {
      batcher.close();
      net.dispose();
    },
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** Reads a JSON-lines file, dropping a torn last line (a crash mid-append) and rewriting the file. */
export async function readJsonLines<T>(path: string): Promise<T[]> {
  if (!await exists(path)) return [];
  const text = await Deno.readTextFile(path);
  const out: T[] = [];
  let good = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) {
      good += line.length + 1;
      continue;
    }
    try {
      out.push(JSON.parse(line));
      good += line.length + 1;
    } catch {
      break;
    }
  }
  if (good < text.length) await writeFileAtomic(path, text.slice(0, good));
  return out;
}

async function appendLines(path: string, rows: unknown[]): Promise<void> {
  if (rows.length === 0) return;
  await Deno.writeTextFile(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n", {
    append: true,
  });
}

const pad = (n: number) => String(n).padStart(4, "0");

/**
 * Plays self-play games `first` .. `first + count - 1` with `player` and appends them to `buffer`
 * (tagged with `iteration`) in index order, a chunk whenever `flushGames` consecutive games are
 * done; `gameLog` (optional) gets one JSON line per game.
 */
export async function selfPlayStage(
  preset: AzPreset,
  player: NetPlayer,
  buffer: ReplayBuffer,
  iteration: number,
  first: number,
  count: number,
  gameLog: string | null,
  hooks: RunHooks = {},
): Promise<SelfPlayStats> {
  const t0 = performance.now();
  const statsBefore = { ...player.batcher.stats };
  const done = new Map<number, GameRecord>();
  let flushed = first, positions = 0, playouts = 0, finished = 0;
  const flushEvery = Math.max(1, Math.min(preset.selfplay.concurrency, 64));
  // Workers finish games concurrently: flushes run one after another, so chunks and game-log lines
  // go out in game order however long a write takes.
  let flushing: Promise<void> = Promise.resolve();
  const flush = (all: boolean) => flushing = flushing.then(() => flushNow(all));
  const flushNow = async (all: boolean) => {
    const recs: GameRecord[] = [];
    while (done.has(flushed)) {
      recs.push(done.get(flushed)!);
      done.delete(flushed);
      flushed++;
    }
    if (recs.length === 0) return;
    if (!all && recs.length < flushEvery) {
      // Not enough yet: put them back.
      flushed -= recs.length;
      recs.forEach((r) => done.set(r.index, r));
      return;
    }
    const pos: Position[] = recs.flatMap((r) => r.positions);
    await buffer.append(pos, iteration, recs.length);
    if (gameLog) {
      await appendLines(
        gameLog,
        recs.map((r) => ({
          iteration,
          game: r.index,
          seed: r.seed,
          result: r.result,
          plies: r.moves.length,
          moves: r.moves.join(" "),
        })),
      );
    }
  };
  // Live rates count every move of every game, finished or not: with many games in flight the
  // first one may finish only after a long while.
  let moves = 0, movePlayouts = 0, lastLive = t0;
  const report = () => {
    lastLive = performance.now();
    const sec = Math.max(1e-9, (lastLive - t0) / 1000);
    const evals = player.batcher.stats.positions - statsBefore.positions;
    hooks.progress?.(
      `iteration ${iteration} self-play ${flushed - first + done.size}/${count} games, ` +
        `${moves} moves (${(moves / sec).toFixed(1)}/s, ${(movePlayouts / sec).toFixed(0)} ` +
        `playouts/s, ${(evals / sec).toFixed(0)} evaluations/s), batch ${
          player.batcher.averageBatch().toFixed(1)
        }`,
    );
  };
  if (player.prepareSeconds > 0) {
    hooks.progress?.(
      `iteration ${iteration} self-play: network ready for batch sizes ${
        paddedSizes(preset.maxBatch).join(", ")
      } in ${player.prepareSeconds.toFixed(2)} s${memoryNote(player.net)}`,
      true,
    );
  }
  const stopFlag = { stop: false };
  const cfg = { ...preset.selfplay };
  // A cells-head network trains on each position's move table: store the cells with it.
  if (preset.net.cells) cfg.cells = true;
  await selfPlay(
    preset.game,
    player.evaluator,
    cfg,
    first,
    count,
    preset.seed * 7919 + iteration,
    async (rec) => {
      done.set(rec.index, rec);
      finished++;
      positions += rec.positions.length;
      playouts += rec.playouts;
      await flush(false);
      report();
      if (hooks.stopped?.()) stopFlag.stop = true;
    },
    () => stopFlag.stop,
    (n) => {
      moves++;
      movePlayouts += n;
      if (performance.now() - lastLive >= LIVE_PROGRESS_MS) report();
    },
  );
  await flush(true);
  const sec = Math.max(1e-9, (performance.now() - t0) / 1000);
  const st = player.batcher.stats;
  const batches = st.batches - statsBefore.batches, evals = st.positions - statsBefore.positions;
  const lookups = player.cache ? player.cache.hits + player.cache.misses : 0;
  return {
    games: finished,
    positions,
    seconds: sec,
    gamesPerHour: finished / sec * 3600,
    positionsPerSecond: positions / sec,
    playoutsPerSecond: playouts / sec,
    averageBatch: batches > 0 ? evals / batches : 0,
    networkShare: (st.netMs - statsBefore.netMs) / 1000 / sec,
    cacheHitRate: lookups > 0 ? player.cache!.hits / lookups : 0,
    ...(player.prepareSeconds > 0 ? { prepareSeconds: player.prepareSeconds } : {}),
  };
}

/** Plays the arena games not yet in `log` and returns the totals of every game in it. */
export async function arenaStage(
  preset: AzPreset,
  candidate: NetPlayer,
  best: NetPlayer,
  log: string,
  seed: number,
  hooks: RunHooks = {},
): Promise<{ result: ArenaResult; complete: boolean }> {
  const games = await readJsonLines<ArenaGame>(log);
  const have = new Set(games.map((g) => g.index));
  const todo = [...Array(preset.arena.games).keys()].filter((i) => !have.has(i));
  let stop = false;
  await runArena(
    preset.game,
    candidate.evaluator,
    best.evaluator,
    preset.arena,
    todo,
    seed,
    async (g) => {
      games.push(g);
      await appendLines(log, [g]);
      const t = arenaTotals(games);
      hooks.progress?.(
        `arena ${games.length}/${preset.arena.games}: +${t.wins} =${t.draws} -${t.losses} ` +
          `(${(t.score * 100).toFixed(1)} %)`,
      );
      if (hooks.stopped?.()) stop = true;
    },
    () => stop,
  );
  const result = arenaTotals(games);
  return { result, complete: games.length >= preset.arena.games };
}

/** One line of the loop's log. */
export interface IterationLog {
  iteration: number;
  generation: number;
  promoted: boolean;
  arena: ArenaResult;
  train: TrainSummary | null;
  selfplay: SelfPlayStats | null;
  bufferPositions: number;
  perfect?: PerfectCheck;
  time: string;
}

interface LoopState {
  iteration: number;
  generation: number;
  game: string;
}

/**
 * Runs (or resumes) the loop in `dir` until `preset.iterations` iterations are logged or `hooks`
 * says stop. Returns the log lines written by this call.
 */
export async function runLoop(
  dir: string,
  preset: AzPreset,
  backend: string,
  hooks: RunHooks = {},
): Promise<IterationLog[]> {
  const game = preset.game;
  await Deno.mkdir(`${dir}/selfplay`, { recursive: true });
  await Deno.mkdir(`${dir}/arena`, { recursive: true });
  const statePath = `${dir}/state.json`;
  const state: LoopState = await exists(statePath)
    ? JSON.parse(await Deno.readTextFile(statePath))
    : { iteration: 1, generation: 0, game: game.name };
  if (state.game !== game.name) {
    throw new KibitzError(
      "bad_state",
      `${dir} holds a ${state.game} run, not ${game.name} (use another --dir)`,
    );
  }
  const bestPath = `${dir}/best.kbnn`, candPath = `${dir}/candidate.kbnn`;
  if (!await exists(bestPath)) {
    await saveCheckpoint(bestPath, initWeights(preset.net, preset.seed), { generation: 0 });
  }
  if (!await exists(candPath)) {
    const b = await loadCheckpoint(bestPath, preset.net);
    await saveCheckpoint(candPath, b.weights, { iteration: 0, step: 0 });
  }
  const buffer = await ReplayBuffer.open(
    `${dir}/buffer`,
    preset.bufferCapacity,
    inputSize(game),
    game.moves,
    preset.net.cells !== undefined,
  );
  const logPath = `${dir}/log.jsonl`;
  const written: IterationLog[] = [];
  const say = (t: string, force = false) => hooks.progress?.(t, force);
  let lostDevices = 0;
  while (preset.iterations === 0 || state.iteration <= preset.iterations) {
    const it = state.iteration;
    // 1. Self-play with the best network.
    let sp: SelfPlayStats | null = null;
    const have = buffer.gamesFor(it);
    if (have < preset.gamesPerIteration) {
      const best = await netPlayer(
        (await loadCheckpoint(bestPath, preset.net)).weights,
        game,
        backend,
        preset.maxBatch,
        preset.cacheSize,
      );
      try {
        sp = await selfPlayStage(
          preset,
          best,
          buffer,
          it,
          have,
          preset.gamesPerIteration - have,
          `${dir}/selfplay/iter-${pad(it)}.jsonl`,
          hooks,
        );
      } finally {
        best.close();
      }
      if (hooks.stopped?.()) break;
    }
    // 2. Train the candidate (resuming mid-iteration from its checkpoint's step).
    const cand = await loadCheckpoint(candPath, preset.net);
    const from = Number(cand.meta.iteration) === it ? Number(cand.meta.step) : 0;
    let train: TrainSummary | null = null;
    if (from < preset.train.steps) {
      const net = await createNet(cand.weights, backend);
      if (cand.velocity) net.setVelocity(cand.velocity);
      const save = async (step: number) =>
        await saveCheckpoint(
          candPath,
          await net.weights(),
          { iteration: it, step },
          await net.velocity(),
        );
      const every = Math.max(1, Math.floor(preset.train.steps / 10));
      const checkpointAt = (step: number) => step % every === 0 || step === preset.train.steps;
      try {
        train = await trainFromBuffer(
          net,
          buffer,
          preset.train,
          from,
          preset.seed * 104729 + it,
          async (step, s) => {
            say(
              `iteration ${it} train ${step}/${preset.train.steps} loss ${s.loss.toFixed(4)} ` +
                `(policy ${s.policyLoss.toFixed(4)}, value ${s.valueLoss.toFixed(4)})`,
            );
            if (checkpointAt(step)) await save(step);
            if (hooks.stopped?.()) throw new StopSignal();
          },
          checkpointAt,
        );
      } catch (e) {
        if (isKibitzError(e, "gpu_lost") && lostDevices < LOST_DEVICE_RETRIES) {
          // The candidate's weights since its last checkpoint went with the device: train again
          // from that checkpoint (the same batches: they follow the step) on a new device.
          lostDevices++;
          say(
            `iteration ${it} train: ${lostDeviceSummary(e)}; resuming ` +
              `from the last checkpoint on a new device (${lostDevices} of at most ` +
              `${LOST_DEVICE_RETRIES})`,
            true,
          );
          continue;
        }
        if (!(e instanceof StopSignal)) throw e;
        break;
      } finally {
        net.dispose();
      }
    }
    // 3. Arena: candidate against best.
    const arenaLog = `${dir}/arena/iter-${pad(it)}.jsonl`;
    const bestW = (await loadCheckpoint(bestPath, preset.net)).weights;
    const candW = (await loadCheckpoint(candPath, preset.net)).weights;
    const pc = await netPlayer(candW, game, backend, preset.maxBatch, preset.cacheSize);
    const pb = await netPlayer(bestW, game, backend, preset.maxBatch, preset.cacheSize);
    let arena;
    try {
      arena = await arenaStage(preset, pc, pb, arenaLog, preset.seed * 31337 + it, hooks);
    } finally {
      pb.close();
    }
    if (!arena.complete) {
      pc.close();
      break;
    }
    // 4. Promote, check against perfect play (solved games), log, move on.
    const promoted = arena.result.score >= preset.promoteAt;
    let perfect: PerfectCheck | undefined;
    pc.close();
    if (preset.perfectCheckPlayouts > 0) {
      const p = await netPlayer(
        promoted ? candW : bestW,
        game,
        backend,
        preset.maxBatch,
        preset.cacheSize,
      );
      try {
        perfect = await checkAgainstPerfect(game, p.evaluator, preset.perfectCheckPlayouts);
      } finally {
        p.close();
      }
    }
    const generation = promoted ? state.generation + 1 : state.generation;
    if (promoted) await saveCheckpoint(bestPath, candW, { generation, iteration: it });
    const line: IterationLog = {
      iteration: it,
      generation,
      promoted,
      arena: arena.result,
      train,
      selfplay: sp,
      bufferPositions: buffer.size,
      ...(perfect ? { perfect } : {}),
      time: new Date().toISOString(),
    };
    const logged = await readJsonLines<IterationLog>(logPath);
    if (!logged.some((l) => l.iteration === it)) await appendLines(logPath, [line]);
    written.push(line);
    say(
      `iteration ${it}: arena ${(arena.result.score * 100).toFixed(1)} % ` +
        `(+${arena.result.wins} =${arena.result.draws} -${arena.result.losses}) ` +
        `${promoted ? `promoted to generation ${generation}` : "kept the best"}` +
        (perfect ? `; vs perfect play: ${perfect.losses} losses in ${perfect.games} games` : ""),
      true,
    );
    state.iteration = it + 1;
    state.generation = generation;
    await writeFileAtomic(statePath, JSON.stringify(state));
    if (hooks.stopped?.()) break;
  }
  return written;
}

class StopSignal extends Error {}

/** Tells the user when the device could not hold the largest batch and it runs in parts. */
function memoryNote(net: PolicyValueNet): string {
  const cap = net.memoryCap ?? Infinity;
  return Number.isFinite(cap)
    ? ` (the device's memory holds batches of at most ${cap}: larger ones run in parts)`
    : "";
}
