// Oracle on a solved game: the loop from random weights on the CPU must reach a network + 200
// playouts that never loses to perfect play (the tests' own solver, trying every optimal reply)
// and so draws from the start. CI runs a short loop and asks for fewer losses than random weights;
// KIBITZ_SLOW_TESTS=1 runs the tic-tac-toe preset to the end and asks for zero (a few CPU minutes).
import assert from "node:assert/strict";
import { TicTacToe } from "../../src/alphazero/games/tictactoe.ts";
import { netPlayer, runLoop } from "../../src/alphazero/loop.ts";
import { azPreset, netFor } from "../../src/alphazero/presets.ts";
import type { Evaluator } from "../../src/mcts/evaluator.ts";
import { defaultSearchConfig, Search } from "../../src/mcts/search.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";
import { initWeights, type NetWeights } from "../../src/nn/params.ts";
import { moveValues, solveTtt } from "../mcts/ttt_solver.ts";

/** Losses of network + search against every perfect line, with the network as both colours. */
async function lossesAgainstPerfect(ev: Evaluator<number>, playouts: number) {
  let losses = 0, games = 0, draws = 0;
  const walk = async (g: TicTacToe, netSide: number): Promise<void> => {
    const r = g.result();
    if (r !== null) {
      games++;
      const forNet = g.toMove() === netSide ? r : -r;
      if (forNet < 0) losses++;
      if (forNet === 0) draws++;
      return;
    }
    if (g.toMove() === netSide) {
      const s = new Search(g, ev, defaultSearchConfig(), 1);
      await s.run(playouts);
      g.play(s.pickMove(0));
      await walk(g, netSide);
      g.undo();
      return;
    }
    const vals = moveValues(g);
    const best = Math.max(...vals.values());
    for (const [m, v] of vals) {
      if (v !== best) continue;
      g.play(m);
      await walk(g, netSide);
      g.undo();
    }
  };
  await walk(new TicTacToe(), 0);
  await walk(new TicTacToe(), 1);
  return { losses, games, draws };
}

async function check(weights: NetWeights, p: ReturnType<typeof azPreset>) {
  const player = await netPlayer(weights, p.game, "cpu", 256, 10_000);
  try {
    return await lossesAgainstPerfect(player.evaluator as Evaluator<number>, 200);
  } finally {
    player.close();
  }
}

Deno.test("tictactoe: the start position is a draw for the tests' solver", () => {
  assert.equal(solveTtt(new TicTacToe()), 0);
});

Deno.test("tictactoe: a short loop from random weights loses fewer lines to perfect play", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const p = azPreset("tictactoe");
    p.net = netFor(p.game, { ...NET_PRESETS.tiny, blocks: 1, filters: 16, valueHidden: 16 });
    p.iterations = 1;
    p.gamesPerIteration = 96;
    p.train.steps = 60;
    p.train.batch = 64;
    p.arena.games = 10;
    p.arena.playouts = 24;
    p.perfectCheckPlayouts = 0;
    const before = await check(initWeights(p.net, p.seed), p);
    await runLoop(dir, p, "cpu");
    const after = await check((await loadCheckpoint(`${dir}/candidate.kbnn`, p.net)).weights, p);
    assert(before.losses > 0, `random weights + search already never lose (${before.games} games)`);
    assert(after.losses < before.losses, `losses ${before.losses} -> ${after.losses}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "tictactoe: the full preset reaches perfect play (KIBITZ_SLOW_TESTS=1)",
  ignore: Deno.env.get("KIBITZ_SLOW_TESTS") !== "1",
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const p = azPreset("tictactoe");
      const log = await runLoop(dir, p, "cpu");
      assert(log.some((l) => l.promoted), "no promotion in the log");
      const r = await check((await loadCheckpoint(`${dir}/best.kbnn`, p.net)).weights, p);
      assert.equal(r.losses, 0, `${r.losses} losses in ${r.games} perfect lines`);
      assert.equal(r.draws, r.games);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
