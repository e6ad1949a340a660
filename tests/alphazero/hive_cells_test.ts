// The AlphaZero loop with a cells-head Hive network (CELLS_SPEC.md): the game's moveCells hook in
// the symmetric view, the evaluator's move tables, the replay buffer's stored tables, and one
// iteration of the loop end to end on the CPU.
import { equal, ok, rejects, throws } from "node:assert/strict";
import {
  HIVE_NETS,
  HIVE_SELFPLAY_RULES,
  HiveAzGame,
  hiveSpec,
  warmStart,
} from "../../src/alphazero/hive.ts";
import { ReplayBuffer } from "../../src/alphazero/buffer.ts";
import { BatchEvaluator, type BatchInfer } from "../../src/alphazero/evaluator.ts";
import { runLoop } from "../../src/alphazero/loop.ts";
import { azPreset, netFor } from "../../src/alphazero/presets.ts";
import { TICTACTOE } from "../../src/alphazero/games/tictactoe.ts";
import { encodeHivePosition, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE } from "../../src/hive/encoding.ts";
import type { HiveGame } from "../../src/hive/game.ts";
import { hiveMoveCellRows } from "../../src/hive/move_cells.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { transformGame, transformMove } from "../../src/hive/symmetry.ts";
import type { GameSpec } from "../../src/mcts/game.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { CpuNet, type NetBatch } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";
import { isKibitzError } from "../../src/errors.ts";

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
      ReplayBuffer.open(dir, 100, HIVE_PLANE_SIZE, HIVE_POLICY_SIZE),
      (e) => isKibitzError(e, "bad_buffer") && /with move cells/.test(String(e)),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A CPU net that answers as a GPU one would be asked: padded batches (the evaluator pads). */
function asGpu(net: CpuNet, sizes: number[]): BatchInfer {
  return {
    backend: "gpu",
    config: net.config,
    infer: (b: NetBatch) => {
      sizes.push(b.size);
      return net.infer(b);
    },
  };
}

Deno.test("hive cells: the evaluator's priors are the net's on the symmetric view's move table", async () => {
  const spec = hiveSpec();
  const net = new CpuNet(initWeights(netFor(spec, HIVE_NETS["cells-tiny"]), 3));
  const all = positions(8);
  const ps = [all[0], all[4], all[7]];
  const sizes: number[] = [];
  for (const infer of [net, asGpu(net, sizes)]) {
    const ev = new BatchEvaluator(infer, spec as GameSpec<number>, 8);
    const got = await Promise.all(ps.map(({ az }) => ev.evaluate(az, az.legalMoves())));
    ev.close();
    for (let i = 0; i < ps.length; i++) {
      // The oracle: one position, the view encoded, its table from hiveMoveCellRows.
      const { az, view, s } = ps[i];
      const legal = az.legalMoves();
      const planes = new Float32Array(HIVE_PLANE_SIZE);
      encodeHivePosition(view, planes, 0);
      const rows = hiveMoveCellRows(view, legal.map((m) => transformMove(m, s)));
      const mask = new Float32Array(HIVE_POLICY_SIZE);
      for (let j = 0; j < legal.length; j++) mask[rows[j * 4]] = 1;
      const out = await net.infer({
        size: 1,
        planes,
        mask,
        moveCells: rows,
        moveCellsWidth: legal.length,
      });
      let sum = 0;
      legal.forEach((_, j) => {
        const want = out.probs[rows[j * 4]];
        sum += got[i].priors[j];
        ok(Math.abs(got[i].priors[j] - want) < 1e-6, `position ${i} move ${j}`);
      });
      ok(Math.abs(sum - 1) < 1e-5);
      ok(Math.abs(got[i].value - out.value[0]) < 1e-6);
    }
  }
  equal(sizes.join(), "8"); // 3 positions padded to 8, the padding rows valid for a cells net
  // A cells net on a game without the moveCells hook: a clear error, not a bad batch.
  const ttt = netFor(TICTACTOE as GameSpec<unknown>, {
    ...HIVE_NETS["cells-tiny"],
    cells: { hidden: 2, planes: 2, biases: 1 },
  });
  const ev = new BatchEvaluator(new CpuNet(initWeights(ttt, 1)), TICTACTOE, 4);
  const g = TICTACTOE.create();
  throws(() => ev.evaluate(g, g.legalMoves()), (e) => isKibitzError(e, "bad_config"));
  ev.close();
});

Deno.test("hive cells: one AlphaZero iteration with a cells net, warm-started from a cells model", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const preset = azPreset("hive-cells-tiny");
    ok(preset.net.cells);
    // A fully connected head's model is refused with a hint; the cells model is taken.
    const fc = `${dir}/fc.kbhz`, init = `${dir}/init.kbhz`;
    const { cells: _, ...fcNet } = preset.net;
    await Deno.writeFile(fc, encodeHiveModel(initWeights(fcNet, 9), { name: "fc" }));
    await rejects(
      warmStart(`${dir}/run`, fc, preset.net),
      (e) => isKibitzError(e, "shape_mismatch") && /fully connected/.test(String(e)),
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
