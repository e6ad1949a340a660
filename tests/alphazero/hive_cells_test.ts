// The AlphaZero loop with a cells-head Hive network (docs/cells_head.md): the game's moveCells hook in
// the symmetric view, the batched evaluator's move tables (priors equal the fast one-position
// evaluator's, GPU-style padding included), the replay buffer's stored tables, and one iteration of
// the loop end to end on the CPU.
import { deepEqual, equal, ok, rejects, throws } from "node:assert/strict";
import {
  HIVE_NETS,
  HIVE_SELFPLAY_RULES,
  HiveAzGame,
  hiveCellsCpuPreset,
  hiveSpec,
  warmStart,
  withValuePool,
} from "../../src/alphazero/hive.ts";
import { ReplayBuffer } from "../../src/alphazero/buffer.ts";
import { BatchEvaluator, type BatchInfer } from "../../src/alphazero/evaluator.ts";
import { runLoop } from "../../src/alphazero/loop.ts";
import { azPreset } from "../../src/alphazero/presets.ts";
import { encodeHivePosition, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE } from "../../src/hive/encoding.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { HIVE_CELLS, hiveMoveCellRows } from "../../src/hive/move_cells.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { transformGame, transformMove } from "../../src/hive/symmetry.ts";
import type { Game } from "../../src/mcts/game.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { createNet } from "../../src/nn/create.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import type { NetBatch } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { SyncHiveNet } from "../../src/uhp/mcts_player.ts";
import { isKibitzError } from "../../src/errors.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

/** Mid-game positions, each seen through symmetry `i % 12`. */
interface Seen {
  g: HiveGame;
  az: HiveAzGame;
  view: HiveGame;
  s: number;
}

function positions(n: number): Seen[] {
  const out: Seen[] = [];
  for (let seed = 1; out.length < n; seed++) {
    const g = randomGame("Base+MLP", 8 + (seed * 5) % 30, seed);
    if (g.isOver()) continue;
    const s = out.length % 12;
    out.push({
      g,
      az: new HiveAzGame(g.clone(), HIVE_SELFPLAY_RULES, s),
      view: transformGame(g, s),
      s,
    });
  }
  return out;
}

Deno.test("hive cells: the buffer's move tables equal hiveMoveCellRows of each position", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ps = positions(12);
    const stored = ps.map(({ az }) => {
      const legal = az.legalMoves().reverse(); // not in index order: the table keeps this order
      const planes = new Float32Array(HIVE_PLANE_SIZE);
      az.encode(planes, 0);
      return {
        legal,
        pos: {
          planes,
          legal: Int32Array.from(legal.map((m) => az.moveIndex(m))),
          policy: new Float32Array(legal.length).fill(1 / legal.length),
          cells: az.moveCells(legal),
          z: 0,
        },
      };
    });
    const b = await ReplayBuffer.open(dir, 100, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE, true);
    await b.append(stored.slice(0, 5).map((x) => x.pos), 1, 1);
    await b.append(stored.slice(5).map((x) => x.pos), 1, 1);
    const ks = [7, 0, 11, 3, 3, 9, 1, 5, 2, 10, 4, 6, 8];
    const batch = b.batchAt(ks);
    const w = batch.moveCellsWidth!;
    equal(w, Math.max(...stored.map((x) => x.legal.length)));
    ks.forEach((k, r) => {
      const { view, s } = ps[k];
      const want = hiveMoveCellRows(view, stored[k].legal.map((m) => transformMove(m, s)));
      const row = batch.moveCells!.subarray(r * w * 4, (r + 1) * w * 4);
      equal(row.subarray(0, want.length).join(), want.join(), `position ${k} (symmetry ${s})`);
      ok(row.subarray(want.length).every((v) => v === -1), `position ${k}: padding`);
      const planes = new Float32Array(HIVE_PLANE_SIZE);
      encodeHivePosition(view, planes, 0);
      equal(
        batch.planes.subarray(r * HIVE_PLANE_SIZE, (r + 1) * HIVE_PLANE_SIZE).join(),
        planes.join(),
      );
    });
    // A second reader sees the same tables; a fully connected head's buffer refuses the chunks.
    const again = await ReplayBuffer.open(dir, 100, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE, true);
    equal(again.batchAt(ks).moveCells!.join(), batch.moveCells!.join());
    await rejects(
      ReplayBuffer.open(dir, 100, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE, false),
      (e) => isKibitzError(e, "bad_buffer") && /with move cells/.test(String(e)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const TINY_CELLS: NetConfig = { ...HIVE_NETS.tiny, cells: { ...HIVE_CELLS, hidden: 4 } };

function engineLine(): HiveGame[] {
  const g = new HiveGame("Base+MLP"), out: HiveGame[] = [];
  for (const m of WON_ENGINE_GAME.slice(0, 9)) {
    out.push(g.clone());
    g.playString(m);
  }
  return out;
}

Deno.test("BatchEvaluator, cells net: the fast evaluator's priors, in every symmetric view, padded or not", async () => {
  const w = initWeights(TINY_CELLS, 5);
  const net = await createNet(w, "cpu");
  const seen: NetBatch[] = [];
  // The same CPU net posing as a GPU one, so that batches are padded to 8.
  const padded: BatchInfer = {
    backend: "gpu",
    config: net.config,
    infer: (b) => (seen.push(b), net.infer(b)),
  };
  const fast = new SyncHiveNet(w);
  const spec = hiveSpec(HIVE_SELFPLAY_RULES, false);
  for (const infer of [net, padded]) {
    const ev = new BatchEvaluator(infer, spec, 64);
    const games = engineLine().map((g, i) => new HiveAzGame(g, HIVE_SELFPLAY_RULES, i % 12));
    const legal = games.map((g) => g.legalMoves());
    const got = await Promise.all(games.map((g, i) => ev.evaluate(g, legal[i])));
    ev.close();
    games.forEach((g, i) => {
      // The oracle: the fast evaluator on the game seen through the same symmetry.
      const view = transformGame(g.game, g.symmetry);
      const want = fast.evaluate(view, legal[i].map((m) => transformMove(m, g.symmetry)));
      ok(Math.abs(got[i].value - want.value) < 1e-4, `value ${got[i].value} vs ${want.value}`);
      want.priors.forEach((p, j) => ok(Math.abs(got[i].priors[j] - p) < 1e-4, `prior ${j}`));
    });
  }
  equal(seen.length, 1);
  equal(seen[0].size, 16, "9 positions padded to a power of two");
  ok(seen[0].moveCells && seen[0].moveCellsWidth);
  net.dispose();
});

Deno.test("BatchEvaluator: an FC net gets no move table; a cells net needs Game.moveCells", async () => {
  const seen: NetBatch[] = [];
  const fc = await createNet(initWeights({ ...HIVE_NETS.tiny }, 5), "cpu");
  const spy: BatchInfer = {
    backend: "cpu",
    config: fc.config,
    infer: (b) => (seen.push(b), fc.infer(b)),
  };
  const spec = hiveSpec(HIVE_SELFPLAY_RULES, false);
  const ev = new BatchEvaluator(spy, spec, 8);
  const g = new HiveAzGame(engineLine()[4]);
  await ev.evaluate(g, g.legalMoves());
  ev.close();
  deepEqual(Object.keys(seen[0]).sort(), ["mask", "planes", "size"]);
  fc.dispose();
  const cells = await createNet(initWeights(TINY_CELLS, 5), "cpu");
  const ev2 = new BatchEvaluator(cells, spec, 8);
  const bare = Object.assign(Object.create(Object.getPrototypeOf(g)), g) as Game<number>;
  Object.defineProperty(bare, "moveCells", { value: undefined });
  throws(() => ev2.evaluate(bare, g.legalMoves()), /moveCells/);
  ev2.close();
  cells.dispose();
});

Deno.test("hive cells: one AlphaZero iteration with a cells net, warm-started from a cells model", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const preset = azPreset("hive-cells-tiny");
    ok(preset.net.cells);
    ok(hiveCellsCpuPreset().net.cells, "the hive-cells-cpu preset has the cells head");
    // A fully connected head's model is refused with a hint; the cells model is taken.
    const fc = `${dir}/fc.kbhz`, init = `${dir}/init.kbhz`;
    const { cells: _, ...fcNet } = preset.net;
    await Deno.writeFile(fc, encodeHiveModel(initWeights(fcNet, 9), { name: "fc" }));
    await rejects(
      warmStart(`${dir}/run`, fc, preset.net),
      (e) =>
        isKibitzError(e, "shape_mismatch") && /fully connected/.test(String(e)) &&
        /cells head/.test(String(e)),
    );
    await Deno.writeFile(init, encodeHiveModel(initWeights(preset.net, 9), { name: "warm" }));
    equal(await warmStart(`${dir}/run`, init, preset.net), true);
    const lines = await runLoop(`${dir}/run`, preset, "cpu");
    equal(lines.length, 1);
    const l = lines[0];
    equal(l.train!.steps, preset.train.steps);
    ok(Number.isFinite(l.train!.loss));
    equal(l.arena.games, preset.arena.games);
    ok(l.bufferPositions > 0);
    // The buffer holds version 2 chunks (with move cells), and its batches name every legal move.
    const buf = await ReplayBuffer.open(
      `${dir}/run/buffer`,
      100,
      HIVE_PLANE_SIZE,
      HIVE_POLICY_SIZE,
      true,
    );
    equal(buf.size, l.bufferPositions);
    const batch = buf.batchAt([...Array(buf.size).keys()]);
    const w = batch.moveCellsWidth!;
    for (let r = 0; r < batch.size; r++) {
      const named = new Set<number>();
      for (let j = 0; j < w; j++) {
        const m = batch.moveCells![(r * w + j) * 4];
        if (m >= 0) named.add(m);
      }
      for (let m = 0; m < HIVE_POLICY_SIZE; m++) {
        equal(batch.mask[r * HIVE_POLICY_SIZE + m] === 1, named.has(m));
      }
    }
    // Training moved the candidate away from the warm start.
    const cand = await loadCheckpoint(`${dir}/run/candidate.kbnn`, preset.net);
    const a = cand.weights.tensors.get("policy.cells.b")!.data;
    const b = initWeights(preset.net, 9).tensors.get("policy.cells.b")!.data;
    ok(a.some((x, i) => x !== b[i]), "policy.cells.b trained");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hive cells: one AlphaZero iteration with a cells net and the pooled value head", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const preset = withValuePool(azPreset("hive-cells-tiny"), 4);
    const init = `${dir}/init.kbhz`;
    await Deno.writeFile(init, encodeHiveModel(initWeights(preset.net, 9), { name: "warm" }));
    equal(await warmStart(`${dir}/run`, init, preset.net), true);
    const [l] = await runLoop(`${dir}/run`, preset, "cpu");
    equal(l.train!.steps, preset.train.steps);
    ok(Number.isFinite(l.train!.loss));
    equal(l.arena.games, preset.arena.games);
    // The candidate is a pooled net (loaded as one) and its value head trained.
    const cand = await loadCheckpoint(`${dir}/run/candidate.kbnn`, preset.net);
    equal(cand.weights.config.valuePool, 4);
    const a = cand.weights.tensors.get("value.fc1.w")!;
    deepEqual(a.shape, [preset.net.valueHidden, 4]);
    const b = initWeights(preset.net, 9).tensors.get("value.fc1.w")!.data;
    ok(a.data.some((x, i) => x !== b[i]), "value.fc1.w trained");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
