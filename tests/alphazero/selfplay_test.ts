import assert from "node:assert/strict";
import { BatchEvaluator } from "../../src/alphazero/evaluator.ts";
import { TICTACTOE, TicTacToe } from "../../src/alphazero/games/tictactoe.ts";
import { netFor } from "../../src/alphazero/presets.ts";
import { defaultSelfPlayConfig, type GameRecord, selfPlay } from "../../src/alphazero/selfplay.ts";
import { CachedEvaluator } from "../../src/mcts/evaluator.ts";
import { defaultSearchConfig } from "../../src/mcts/search.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { CpuNet } from "../../src/nn/net.ts";
import { initWeights } from "../../src/nn/params.ts";

const config = netFor(TICTACTOE, { ...NET_PRESETS.tiny, blocks: 1, filters: 8, valueHidden: 8 });

async function games(seed: number, concurrency: number, leaves: number): Promise<GameRecord[]> {
  const net = new CpuNet(initWeights(config, 3));
  const batcher = new BatchEvaluator(net, TICTACTOE, 64);
  const cfg = defaultSelfPlayConfig({
    playouts: 24,
    concurrency,
    temperatureMoves: 9,
    search: defaultSearchConfig({ noise: true, dirichletAlpha: 1, leavesPerRound: leaves }),
  });
  const out: GameRecord[] = [];
  await selfPlay(TICTACTOE, new CachedEvaluator(batcher), cfg, 0, 6, seed, (g) => {
    out.push(g);
  });
  batcher.close();
  if (concurrency > 1) assert(batcher.averageBatch() > 1.5, `batch ${batcher.averageBatch()}`);
  return out.sort((a, b) => a.index - b.index);
}

const summary = (gs: GameRecord[]) =>
  gs.map((g) =>
    `${g.moves.join(" ")} ${g.result} ${g.positions.map((p) => [...p.policy].join(",")).join(";")}`
  );

Deno.test("selfplay: same seed gives the same games, whatever the concurrency", async () => {
  const a = await games(5, 6, 4);
  const b = await games(5, 1, 4);
  const c = await games(6, 6, 4);
  assert.deepEqual(summary(a), summary(b));
  assert.notDeepEqual(summary(a), summary(c));
  for (const g of a) {
    // Every position's outcome is the game's result from its side to move.
    g.positions.forEach((p, i) => assert.equal(p.z, i % 2 === 0 ? g.result : -g.result));
    for (const p of g.positions) {
      assert(Math.abs(p.policy.reduce((s, x) => s + x, 0) - 1) < 1e-5);
    }
  }
});

Deno.test("selfplay: the batched evaluator returns what one network call per position returns", async () => {
  const net = new CpuNet(initWeights(config, 9));
  const batcher = new BatchEvaluator(net, TICTACTOE, 256);
  const positions: TicTacToe[] = [];
  for (const line of [[], [4], [4, 0], [0, 1, 2], [8, 4, 0, 2]]) {
    const g = new TicTacToe();
    for (const m of line) g.play(m);
    positions.push(g);
  }
  const batched = await Promise.all(positions.map((g) => batcher.evaluate(g, g.legalMoves())));
  assert.equal(batcher.stats.batches, 1);
  assert.equal(batcher.stats.positions, 5);
  for (let i = 0; i < positions.length; i++) {
    const g = positions[i];
    const planes = new Float32Array(27), mask = new Float32Array(9);
    g.encode(planes, 0);
    for (const m of g.legalMoves()) mask[m] = 1;
    const one = await net.infer({ size: 1, planes, mask });
    const legal = g.legalMoves();
    legal.forEach((m, k) => assert(Math.abs(batched[i].priors[k] - one.probs[m]) < 1e-6));
    assert(Math.abs(batched[i].value - one.value[0]) < 1e-6);
  }
  batcher.close();
});

Deno.test("selfplay: the evaluator keeps one network call in flight and batches what queues behind it", async () => {
  // Each network call waits for the test to release it (no timers: the order holds under any load).
  let running = 0, most = 0;
  const sizes: number[] = [];
  const gates: (() => void)[] = [];
  const slow = {
    backend: "cpu" as const,
    infer: async (b: { size: number }) => {
      running++;
      most = Math.max(most, running);
      sizes.push(b.size);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return { probs: new Float32Array(b.size * 9).fill(1 / 9), value: new Float32Array(b.size) };
    },
  };
  const calls = async (n: number) => {
    while (sizes.length < n) await new Promise((r) => setTimeout(r, 1));
  };
  const ev = new BatchEvaluator(slow, TICTACTOE, 256);
  const g = new TicTacToe();
  const first = Array.from({ length: 10 }, () => ev.evaluate(g, g.legalMoves()));
  await calls(1); // the first batch is on its way
  const second = Array.from({ length: 7 }, () => ev.evaluate(g, g.legalMoves()));
  const third = Array.from({ length: 5 }, () => ev.evaluate(g, g.legalMoves()));
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(sizes.length, 1, "a second call started while the first was in flight");
  gates.shift()!();
  await calls(2);
  gates.shift()!();
  await Promise.all([...first, ...second, ...third]);
  ev.close();
  assert.equal(most, 1);
  assert.deepEqual(sizes, [10, 12]);
  assert.equal(ev.averageBatch(), 11);
});

Deno.test("selfplay: onMove hears every move of every game, with its playouts", async () => {
  const net = new CpuNet(initWeights(config, 3));
  const batcher = new BatchEvaluator(net, TICTACTOE, 64);
  const cfg = defaultSelfPlayConfig({
    playouts: 24,
    concurrency: 3,
    temperatureMoves: 9,
    search: defaultSearchConfig({ noise: true, dirichletAlpha: 1, leavesPerRound: 4 }),
  });
  const out: GameRecord[] = [];
  let moves = 0, playouts = 0, movesAtFirstGame = -1;
  await selfPlay(
    TICTACTOE,
    batcher,
    cfg,
    0,
    5,
    5,
    (g) => {
      if (movesAtFirstGame < 0) movesAtFirstGame = moves;
      out.push(g);
    },
    () => false,
    (n) => {
      moves++;
      playouts += n;
    },
  );
  batcher.close();
  assert.equal(moves, out.reduce((s, g) => s + g.positions.length, 0));
  assert.equal(playouts, out.reduce((s, g) => s + g.playouts, 0));
  // Games in flight report their moves before any game finishes.
  assert(movesAtFirstGame > out[0].positions.length, `${movesAtFirstGame} moves at the first end`);
});
