// The cells policy head wired into the Hive player: batches carry the move table, a cells net
// trains on them, the fast evaluator matches the reference pass, and --init warm-starts the tower.
import { deepEqual, equal, ok } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { HIVE_CELLS } from "../../src/hive/move_cells.ts";
import { encodeSamples, prepareGames } from "../../src/hiveplayer/pretrain.ts";
import { initFrom } from "../../src/hiveplayer/pretrain_run.ts";
import type { NetConfig } from "../../src/nn/config.ts";
import { createNet } from "../../src/nn/create.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { initWeights } from "../../src/nn/params.ts";
import { Trainer } from "../../src/nn/train.ts";
import { ReferenceHiveNet, SyncHiveNet } from "../../src/uhp/mcts_player.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";
import { assertSameEvaluation } from "../helpers/hive_eval.ts";
import type { StoredGame } from "../../src/sgf/store.ts";
// f32 parity: on a hardware adapter with shader-f16, "auto" inference would store f16.
Deno.env.set("KIBITZ_NN_F16", "0");

const TINY_CELLS: NetConfig = { ...HIVE_NETS.tiny, cells: { ...HIVE_CELLS, hidden: 4 } };

const STORED: StoredGame = {
  id: "won",
  gameType: "Base+MLP",
  moves: WON_ENGINE_GAME,
  result: "WhiteWins",
} as unknown as StoredGame;

Deno.test("cells: SyncHiveNet (fast path) on a cells net gives the reference pass's priors", () => {
  const w = initWeights(TINY_CELLS, 21);
  for (const [name, t] of w.tensors) {
    if (name.endsWith(".mean")) t.data.forEach((_, i) => t.data[i] = 0.1 * ((i % 5) - 2));
    if (name.endsWith(".var")) t.data.forEach((_, i) => t.data[i] = 0.5 + 0.25 * (i % 3));
    if (name === "policy.cells.b") t.data.forEach((_, i) => t.data[i] = 0.05 * (i % 7) - 0.1);
  }
  const fast = new SyncHiveNet(w), ref = new ReferenceHiveNet(w);
  const batched = new SyncHiveNet(w);
  const g = new HiveGame("Base+MLP");
  const expected: { priors: Float32Array; value: number }[] = [];
  let spread = 0;
  for (const m of WON_ENGINE_GAME.slice(0, 14)) {
    const legal = g.validMoves();
    const a = ref.evaluate(g, legal), b = fast.evaluate(g, legal);
    assertSameEvaluation(a, b);
    spread = Math.max(spread, Math.max(...a.priors) - Math.min(...a.priors));
    batched.stage(g, legal);
    expected.push(b);
    g.playString(m);
  }
  ok(spread > 1e-3, "the priors are not uniform (the cells terms count)");
  const got = batched.flush();
  got.forEach((e, i) => {
    ok(Math.abs(e.value - expected[i].value) < 1e-5);
    e.priors.forEach((p, j) => ok(Math.abs(p - expected[i].priors[j]) < 1e-5));
  });
});

Deno.test("cells: a cells net trains on encoded Hive positions and its policy loss falls", async () => {
  const { games } = prepareGames([STORED]);
  const samples = [3, 8, 13, 18, 23, 28].map((ply) => ({ game: 0, ply, symmetry: 0 }));
  const b = encodeSamples(games, samples, false, true);
  ok(b.moveCells && b.moveCellsWidth, "the batch carries the move table");
  equal(b.moveCells!.length, samples.length * b.moveCellsWidth! * 4);
  equal(b.moveCellsWidth, Math.max(...b.legalCounts));
  // An FC batch has none, and is otherwise the same bytes.
  const fc = encodeSamples(games, samples);
  equal(fc.moveCells, undefined);
  deepEqual(fc.planes, b.planes);
  deepEqual(fc.mask, b.mask);
  const net = await createNet(initWeights(TINY_CELLS, 4), "cpu");
  const trainer = new Trainer(net, {
    momentum: 0.9,
    weightDecay: 0,
    lrMax: 0.05,
    lrMin: 0.05,
    totalSteps: 30,
  });
  const losses: number[] = [];
  for (let i = 0; i < 30; i++) losses.push((await trainer.train(b)).policyLoss);
  ok(losses[29] < 0.7 * losses[0], `policy loss ${losses[0]} -> ${losses[29]}`);
  const out = await net.infer(b);
  // The masked softmax puts all mass on legal moves.
  for (let n = 0; n < b.size; n++) {
    let legal = 0;
    for (let k = 0; k < 5489; k++) if (b.mask[n * 5489 + k] > 0) legal += out.probs[n * 5489 + k];
    ok(Math.abs(legal - 1) < 1e-4);
  }
  net.dispose();
});

Deno.test("cells: --init copies the matching tensors (the tower) of an FC file into a cells net", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fcWeights = initWeights({ ...HIVE_NETS.tiny }, 7);
    const path = `${dir}/fc.kbnn`;
    await Deno.writeFile(path, encodeHiveModel(fcWeights, { name: "fc" }));
    const said: string[] = [];
    const w = await initFrom(path, TINY_CELLS, 1, (t) => said.push(t));
    const src = (await import("../../src/nn/model_file.ts")).decodeHiveModel(
      await Deno.readFile(path),
    ).weights;
    let copied = 0;
    for (const s of w.specs) {
      const t = w.tensors.get(s.name)!, f = src.tensors.get(s.name);
      if (
        s.name.startsWith("stem.") || s.name.startsWith("tower.") || s.name.startsWith("value.")
      ) {
        deepEqual(t.data, f!.data, `${s.name} copied`);
        copied++;
      }
    }
    ok(copied > 0);
    ok(w.tensors.has("policy.cells.w") && !w.tensors.has("policy.fc.w"));
    ok(said.some((t) => t.includes("copied")) && said.some((t) => t.includes("policy.cells.w")));
    // Same shape: the file whole; nothing in common: the shape error.
    const same = await initFrom(path, { ...HIVE_NETS.tiny }, 1);
    deepEqual(same.tensors.get("policy.fc.w")!.data, src.tensors.get("policy.fc.w")!.data);
    let threw = false;
    try {
      await initFrom(path, { ...HIVE_NETS.cpu }, 1);
    } catch (e) {
      threw = String(e).includes("shape_mismatch") ||
        String((e as Error).message).includes("--net");
    }
    ok(threw);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
