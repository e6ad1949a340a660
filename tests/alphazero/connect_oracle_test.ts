// Oracle on a solved game: Connect Three on a 5 x 4 board (gravity, 3 in a row), solved here by
// alpha-beta. The first player wins by the three middle columns and loses by the edge ones; the
// loop, from random weights, must learn a winning first move and a winning value at the start.
import assert from "node:assert/strict";
import { type ConnectFour, connectFourSpec } from "../../src/alphazero/games/connect4.ts";
import { netPlayer, runLoop } from "../../src/alphazero/loop.ts";
import { azPreset, netFor } from "../../src/alphazero/presets.ts";
import { defaultSearchConfig, Search } from "../../src/mcts/search.ts";
import { loadCheckpoint } from "../../src/nn/checkpoint.ts";
import { NET_PRESETS } from "../../src/nn/config.ts";

/** Negamax with alpha-beta on [-1, 1], centre columns first, exact values memoized by hash. */
function alphaBeta(g: ConnectFour, alpha: number, beta: number, memo: Map<number, number>): number {
  const r = g.result();
  if (r !== null) return r;
  const hit = memo.get(g.hash());
  if (hit !== undefined) return hit;
  const a0 = alpha;
  let best = -1;
  const mid = (g.width - 1) / 2;
  const moves = g.legalMoves().sort((x, y) => Math.abs(x - mid) - Math.abs(y - mid));
  for (const m of moves) {
    g.play(m);
    const v = 0 - alphaBeta(g, -beta, -alpha, memo);
    g.undo();
    if (v > best) best = v;
    if (best > alpha) alpha = best;
    if (alpha >= beta) break;
  }
  // Only exact values (not cut-off bounds) are remembered.
  if (best > a0 && best < beta) memo.set(g.hash(), best);
  return best;
}

function solveFirstMoves(): number[] {
  const g = connectFourSpec(5, 4, 3).create() as ConnectFour;
  return g.legalMoves().map((m) => {
    g.play(m);
    const v = 0 - alphaBeta(g, -1, 1, new Map());
    g.undo();
    return v;
  });
}

Deno.test("connect 3 on 5x4: the solver's first-move values", () => {
  assert.deepEqual(solveFirstMoves(), [-1, 1, 1, 1, -1]);
});

Deno.test("connect 3 on 5x4: the trained player's first move wins and its value says so", async () => {
  const solved = solveFirstMoves();
  const dir = await Deno.makeTempDir();
  try {
    const p = azPreset("connect3-5x4");
    p.net = netFor(p.game, { ...NET_PRESETS.tiny, blocks: 1, filters: 8, valueHidden: 16 });
    p.gamesPerIteration = 64;
    p.iterations = 4;
    p.selfplay.playouts = 48;
    p.selfplay.concurrency = 64;
    p.selfplay.search = defaultSearchConfig({ noise: true, dirichletAlpha: 1, leavesPerRound: 4 });
    p.train.steps = 60;
    p.train.batch = 64;
    p.arena.games = 10;
    p.arena.playouts = 24;
    p.arena.concurrency = 10;
    await runLoop(dir, p, "cpu");
    const best = await loadCheckpoint(`${dir}/best.kbnn`, p.net);
    const player = await netPlayer(best.weights, p.game, "cpu", 256, 10_000);
    // The network alone at the start: its preferred move and its value.
    const start = p.game.create();
    const e = await player.evaluator.evaluate(start, start.legalMoves());
    const netMove = start.legalMoves()[e.priors.indexOf(Math.max(...e.priors))] as number;
    // The player: network + search.
    const s = new Search(start, player.evaluator, defaultSearchConfig(), 1);
    await s.run(200);
    const move = s.pickMove(0) as number;
    player.close();
    assert.equal(solved[move], 1, `player opened ${move}, values ${solved}`);
    assert(s.rootValue() > 0.3, `player's value at the start ${s.rootValue()}`);
    assert.equal(solved[netMove], 1, `network prefers ${netMove} (${[...e.priors]})`);
    assert(e.value > 0, `network value at the start ${e.value}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
