import assert from "node:assert/strict";
import { TicTacToe } from "../../src/alphazero/games/tictactoe.ts";
import { CachedEvaluator, UniformEvaluator } from "../../src/mcts/evaluator.ts";
import { defaultSearchConfig, Search } from "../../src/mcts/search.ts";
import { dirichlet, mulberry32 } from "../../src/mcts/random.ts";
import { allPositions, moveValues, solveTtt } from "./ttt_solver.ts";

/** Positions where the side to move can win at once, or must block the opponent's line to hold. */
function tacticalPositions(): { g: TicTacToe; kind: "win" | "block" }[] {
  const out: { g: TicTacToe; kind: "win" | "block" }[] = [];
  for (const g of allPositions()) {
    if (g.result() !== null) continue;
    const vals = moveValues(g);
    const best = Math.max(...vals.values());
    const wins = (t: TicTacToe) =>
      t.legalMoves().some((m) => {
        t.play(m);
        const r = t.result();
        t.undo();
        return r === -1;
      });
    // The opponent's threat: a line it would complete if it were to move now.
    const me = g.toMove() + 1;
    const threat = [0, 1, 2, 3, 4, 5, 6, 7, 8].some((c) => {
      if (g.cells[c] !== 0) return false;
      g.cells[c] = 3 - me;
      const lines = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [
        2,
        4,
        6,
      ]];
      const hit = lines.some((l) => l.includes(c) && l.every((x) => g.cells[x] === 3 - me));
      g.cells[c] = 0;
      return hit;
    });
    if (wins(g)) out.push({ g, kind: "win" });
    else if (threat && best === 0) out.push({ g, kind: "block" });
  }
  return out;
}

Deno.test("mcts: uniform prior + exact terminals finds winning and blocking moves in tic-tac-toe", async () => {
  const positions = tacticalPositions();
  const wins = positions.filter((p) => p.kind === "win");
  const blocks = positions.filter((p) => p.kind === "block");
  assert(wins.length > 50 && blocks.length > 20, `${wins.length} wins, ${blocks.length} blocks`);
  // An even sample of each kind keeps the test fast.
  const sample = [...wins.filter((_, i) => i % 10 === 0), ...blocks.filter((_, i) => i % 4 === 0)];
  for (const leaves of [1, 8]) {
    for (const { g, kind } of sample) {
      const s = new Search(
        g,
        new UniformEvaluator(),
        defaultSearchConfig({ leavesPerRound: leaves }),
      );
      await s.run(kind === "win" ? 300 : 1500);
      const move = s.pickMove(0);
      const vals = moveValues(g);
      const best = Math.max(...vals.values());
      assert.equal(
        vals.get(move),
        best,
        `${kind} position ${g.cells.join("")}: picked ${move} worth ${
          vals.get(move)
        }, best ${best}`,
      );
      assert.equal(s.rootVisits(), kind === "win" ? 300 : 1500);
    }
  }
});

Deno.test("mcts: root value converges to the exact value on won and lost positions", async () => {
  const g = new TicTacToe();
  for (const m of [4, 0, 8]) g.play(m); // O must block at 2 or 6... then X still draws
  assert.equal(solveTtt(g), 0);
  const lost = new TicTacToe();
  for (const m of [0, 3, 1, 4]) lost.play(m); // X to move wins at 2
  const s = new Search(lost, new UniformEvaluator(), defaultSearchConfig());
  await s.run(400);
  assert.equal(s.pickMove(0), 2);
  assert(s.rootValue() > 0.8, `root value ${s.rootValue()}`);
});

Deno.test("mcts: a terminal root runs no playouts; pickMove refuses it", async () => {
  const g = new TicTacToe();
  for (const m of [0, 3, 1, 4, 2]) g.play(m);
  assert.equal(g.result(), -1);
  const s = new Search(g, new UniformEvaluator());
  await s.run(50);
  assert.equal(s.rootVisits(), 0);
  assert.equal(s.rootValue(), -1);
  assert.throws(() => s.pickMove(0));
});

Deno.test("mcts: tree reuse keeps the chosen child's visits", async () => {
  const s = new Search(new TicTacToe(), new UniformEvaluator(), defaultSearchConfig());
  await s.run(500);
  const st = s.rootStats();
  const i = st.moves.indexOf(4);
  s.advance(4);
  assert.equal(s.rootVisits(), st.visits[i]);
  await s.run(100);
  assert.equal(s.rootVisits(), st.visits[i] + 100);
  assert.equal(s.position().ply(), 1);
});

Deno.test("mcts: the evaluation cache serves repeated positions and stays bounded", async () => {
  const inner = new UniformEvaluator<number>();
  const cache = new CachedEvaluator(inner, 100);
  const s = new Search(new TicTacToe(), cache, defaultSearchConfig());
  await s.run(2000);
  assert(cache.size <= 100);
  assert.equal(inner.calls, cache.misses);
  const fresh = new CachedEvaluator(new UniformEvaluator<number>(), 10_000);
  const a = new Search(new TicTacToe(), fresh, defaultSearchConfig());
  await a.run(3000);
  // Transpositions: tic-tac-toe has fewer distinct positions than playouts here.
  assert(fresh.hits > 0, "expected cache hits from transpositions");
});

Deno.test("mcts: same seed, same noise and the same sampled moves", async () => {
  const run = async (seed: number) => {
    const s = new Search(
      new TicTacToe(),
      new UniformEvaluator(),
      defaultSearchConfig({ noise: true }),
      seed,
    );
    const moves: number[] = [];
    while (s.position().result() === null) {
      await s.run(64);
      const m = s.pickMove(1);
      moves.push(m);
      s.advance(m);
    }
    return moves.join(",") + "|" + s.rootStats().priors.join(",");
  };
  assert.equal(await run(7), await run(7));
  assert.notEqual(await run(7), await run(8));
});

Deno.test("mcts: Dirichlet samples sum to one with the right mean", () => {
  const next = mulberry32(3);
  const n = 5, mean = new Float64Array(n);
  for (let t = 0; t < 4000; t++) {
    const d = dirichlet(n, 0.15, next);
    assert(Math.abs(d.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    for (let i = 0; i < n; i++) mean[i] += d[i] / 4000;
  }
  for (const m of mean) assert(Math.abs(m - 0.2) < 0.03, `component mean ${m}`);
});

Deno.test("mcts: with virtual loss the visit counts add up and no loss is left behind", async () => {
  for (const leaves of [1, 4, 16]) {
    const s = new Search(
      new TicTacToe(),
      new UniformEvaluator(),
      defaultSearchConfig({ leavesPerRound: leaves }),
    );
    await s.run(777);
    const st = s.rootStats();
    // The root's first visit is its own evaluation; every other playout went through a child.
    assert.equal(st.visits.reduce((a, b) => a + b, 0), s.rootVisits() - 1);
    assert.equal(s.rootVisits(), 777);
    // A child's value is in [-1, 1] only if virtual losses were all taken back.
    for (const q of st.q) assert(Number.isNaN(q) || Math.abs(q) <= 1, `q ${q}`);
    assert(s.counters.evaluations + s.counters.terminals === s.counters.playouts);
  }
});
