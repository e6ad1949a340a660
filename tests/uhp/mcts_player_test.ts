import { equal, ok } from "node:assert/strict";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { HiveGame } from "../../src/hive/game.ts";
import { encodeHiveModel } from "../../src/nn/model_file.ts";
import { evaluate as staticScore, searchBestMove } from "../../src/uhp/alphabeta.ts";
import { UhpEngine } from "../../src/uhp/engine.ts";
import {
  HYBRID_SEARCH,
  loadUhpModel,
  MCTS_PLAYER_DEFAULTS,
  MctsPlayer,
  PLAYOUTS_PER_DEPTH,
  PolicyPlayer,
  proveNode,
  ReferenceHiveNet,
  surroundGains,
  SyncHiveNet,
  uniformHiveEvaluator,
} from "../../src/uhp/mcts_player.ts";
import { winningMove } from "../../src/uhp/forced_win.ts";
import { initWeights } from "../../src/nn/params.ts";
import { mulberry32 } from "../../src/mcts/random.ts";
import { WON_ENGINE_GAME } from "../helpers/hive_games.ts";
import { assertSameEvaluation } from "../helpers/hive_eval.ts";

const BEFORE_WIN = WON_ENGINE_GAME.slice(0, -1);

function position(moves: string[]): HiveGame {
  const g = new HiveGame("Base+MLP");
  for (const m of moves) g.playString(m);
  return g;
}

Deno.test("mcts player: exact results from the position find the winning move", () => {
  const g = position(BEFORE_WIN);
  const p = new MctsPlayer(uniformHiveEvaluator);
  const r = p.search(g, 3000);
  g.play(r.move);
  equal(g.state, 3, `${g.moveString(r.move)} wins for White`);
  g.undo();
  ok(r.value > 0.5, `root value ${r.value}`);
  equal(g.turn, BEFORE_WIN.length); // the caller's game is untouched
});

Deno.test("mcts player: depth N runs N x 100 playouts; a time limit stops the search", () => {
  const g = position(BEFORE_WIN.slice(0, 6));
  const p = new MctsPlayer(uniformHiveEvaluator);
  p.bestMove(g, { depth: 2 });
  equal(p.last!.playouts, 2 * PLAYOUTS_PER_DEPTH);
  p.bestMove(g, { timeMs: 200 });
  // Playouts with the uniform stand-in take well under a millisecond: the limit is what stopped it.
  ok(p.last!.playouts >= 2 && p.last!.ms < 200, `${p.last!.playouts} in ${p.last!.ms} ms`);
  ok(g.isValid(p.last!.move));
});

Deno.test("uhp: a loaded model answers bestmove with MCTS, info names it, UseModel 0 is alpha-beta", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/m.kbhz`;
    await Deno.writeFile(
      path,
      encodeHiveModel(initWeights(HIVE_NETS.tiny, 3), { name: "testnet" }),
    );
    const model = await loadUhpModel(path);
    const e = new UhpEngine(undefined, model);
    ok(/^id Kibitz .*model testnet 1x4/.test(e.handle("info")));
    ok(/UseModel;int;1;1;0;1/.test(e.handle("options")));
    e.handle("newgame Base+MLP;InProgress;White[2];wS1;bS1 -wS1");
    const reply = e.handle("bestmove time 00:00:01").split("\n");
    equal(reply[1], "ok");
    ok(e.game!.isValid(e.game!.parseMove(reply[0])), reply[0]);
    ok(model.mcts.last!.playouts >= 1);
    // Policy-only play picks one legal move from one evaluation.
    const pol = new PolicyPlayer(model.mcts.net);
    ok(e.game!.isValid(pol.bestMove(e.game!)));
    // Hybrid 1 switches the search's settings to HYBRID_SEARCH, 0 back to the defaults.
    equal(e.handle("options get Hybrid"), "Hybrid;int;0;0;0;1\nok");
    e.handle("options set Hybrid 1");
    ok(e.game!.isValid(e.game!.parseMove(e.handle("bestmove depth 1").split("\n")[0])));
    equal(model.mcts.config.surroundPrior, HYBRID_SEARCH.surroundPrior);
    equal(model.mcts.config.valueMix, HYBRID_SEARCH.valueMix);
    e.handle("options set Hybrid 0");
    e.handle("bestmove depth 1");
    equal(model.mcts.config.surroundPrior, 0);
    equal(model.mcts.config.valueMix, 0);
    // LossCheck N sets the loss check's plies (odd), 0 turns it off.
    equal(e.handle("options get LossCheck"), "LossCheck;int;0;0;0;7\nok");
    e.handle("options set LossCheck 4");
    e.handle("bestmove depth 1");
    equal(model.mcts.config.lossCheck, 5);
    e.handle("options set LossCheck 0");
    e.handle("bestmove depth 1");
    equal(model.mcts.config.lossCheck, 0);
    e.handle("options set UseModel 0");
    const ab = e.handle("bestmove depth 1").split("\n")[0];
    equal(ab, e.game!.moveString(searchBestMove(e.game!, { depth: 1 }).move));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SyncHiveNet (fast path) gives the reference pass's priors and value on Hive positions", () => {
  const w = initWeights(HIVE_NETS.tiny, 9);
  // Non-trivial batch-norm statistics, so that the folding is exercised.
  for (const [name, t] of w.tensors) {
    if (name.endsWith(".mean")) t.data.forEach((_, i) => t.data[i] = 0.1 * ((i % 5) - 2));
    if (name.endsWith(".var")) t.data.forEach((_, i) => t.data[i] = 0.5 + 0.25 * (i % 3));
  }
  const fast = new SyncHiveNet(w), ref = new ReferenceHiveNet(w);
  const g = new HiveGame("Base+MLP");
  for (const m of WON_ENGINE_GAME.slice(0, 12)) {
    const legal = g.validMoves();
    const a = ref.evaluate(g, legal), b = fast.evaluate(g, legal);
    assertSameEvaluation(a, b);
    g.playString(m);
  }
  equal(fast.evaluations, 12);
});

Deno.test("mcts player: the win check plays a win in one at once and sees the reply that loses", () => {
  const g = position(BEFORE_WIN);
  const win = winningMove(g, g.validMoves());
  ok(win !== null);
  g.play(win!);
  equal(g.state, 3, "the move found wins for White");
  g.undo();
  equal(
    winningMove(position(BEFORE_WIN.slice(0, 10)), position(BEFORE_WIN.slice(0, 10)).validMoves()),
    null,
  );
  // One playout is enough with the check (the root is proven when it is expanded).
  const p = new MctsPlayer(uniformHiveEvaluator);
  const r = p.search(g, 1000);
  equal(r.playouts, 1, "a proven root ends the search");
  g.play(r.move);
  equal(g.state, 3);
  g.undo();
  // Black to move one ply earlier: the search must not allow White's win when Black can stop it;
  // every Black move that allows it is proven lost in two plies, so its value is -1.
  const b = position(BEFORE_WIN.slice(0, -1));
  const rb = new MctsPlayer(uniformHiveEvaluator).search(b, 400);
  b.play(rb.move);
  const after = winningMove(b, b.validMoves());
  ok(after === null || rb.value <= -0.99, `Black's ${rb.move} allows a win, value ${rb.value}`);
});

// Engine game f547cb96f7784203 (hive-default.val-games.jsonl) after 30 plies: White to move has a
// win in three plies (alpha-beta depth 3 scores it WIN - 3) and no win in one.
const MATE_IN_2 = [
  "wA1",
  "bL wA1\\",
  "wL -wA1",
  "bA1 /bL",
  "wS1 /wL",
  "bS1 bA1\\",
  "wQ wA1/",
  "bQ bL-",
  "wS1 /bA1",
  "bS1 -wS1",
  "wA2 \\wL",
  "bB1 \\bS1",
  "wA2 bQ-",
  "bG1 \\bB1",
  "wL bL\\",
  "bG2 /bS1",
  "wA3 wS1\\",
  "bA2 bG1/",
  "wA3 \\bA2",
  "bS2 -bG1",
  "wM wA3/",
  "bS2 -wM",
  "wM \\wA2",
  "bB2 bA2\\",
  "wB1 wA2/",
  "bB2 -wA1",
  "wS1 bQ\\",
  "bA1 \\wM",
  "wQ \\bA1",
  "bG3 bS1-",
];

Deno.test("mcts solver: proves a win in three plies, plays it, and proves the loss on the other side", () => {
  const g = position(MATE_IN_2);
  equal(winningMove(g, g.validMoves()), null, "no win in one");
  const r = new MctsPlayer(uniformHiveEvaluator).search(g, 5000);
  ok(r.proven, "the root is proven");
  equal(r.proven!.result, 1);
  equal(r.proven!.plies, 3);
  equal(r.value, 1);
  ok(r.playouts < 5000, `a proven root stops the search (${r.playouts} playouts)`);
  // Every Black reply leaves White a win in one.
  g.play(r.move);
  for (const reply of g.validMoves()) {
    g.play(reply);
    ok(winningMove(g, g.validMoves()) !== null, `${g.moveString(reply)} leaves no win in one`);
    g.undo();
  }
  const lost = new MctsPlayer(uniformHiveEvaluator).search(g, 5000);
  equal(lost.proven?.result, -1);
  equal(lost.proven?.plies, 2);
  g.undo();
  // Without the solver the same budget only estimates the value.
  const plain = new MctsPlayer(uniformHiveEvaluator, { ...MCTS_PLAYER_DEFAULTS, solver: false });
  const rp = plain.search(g, r.playouts);
  equal(rp.proven, undefined);
  ok(rp.value < 1);
});

Deno.test("mcts solver: a strong prior on a move that loses at once does not get it played", () => {
  const b = position(BEFORE_WIN.slice(0, -1));
  const legal = b.validMoves();
  const losing = legal.filter((m) => {
    b.play(m);
    const w = winningMove(b, b.validMoves());
    b.undo();
    return w !== null;
  });
  ok(losing.length > 0 && losing.length < legal.length);
  const bad = losing[0];
  // Nearly all the prior on `bad` at the root, uniform below; value 0 everywhere.
  const biased = {
    evaluate: (g: HiveGame, moves: number[]) => {
      const priors = new Float32Array(moves.length).fill(0.01 / moves.length);
      const i = g.turn === b.turn ? moves.indexOf(bad) : -1;
      if (i >= 0) priors[i] = 0.99;
      else priors.fill(1 / moves.length);
      return { priors, value: 0 };
    },
  };
  const r = new MctsPlayer(biased).search(b, 200);
  ok(!losing.includes(r.move), `played ${b.moveString(r.move)}, which loses in two`);
  // The plain search (no solver) plays it with this budget: the test measures the solver.
  const plain = new MctsPlayer(biased, { ...MCTS_PLAYER_DEFAULTS, solver: false }).search(b, 200);
  ok(losing.includes(plain.move));
});

Deno.test("proveNode: wins take the shortest way, losses the longest, open children block a loss", () => {
  const kid = (terminal: number | null, dist = 0) => ({ terminal, dist, children: null });
  const node = (children: ReturnType<typeof kid>[]) => ({
    terminal: null as number | null,
    dist: 0,
    children,
  });
  const a = node([kid(null), kid(-1, 4), kid(-1, 2), kid(1, 1)]);
  ok(proveNode(a));
  equal(a.terminal, 1);
  equal(a.dist, 3);
  const b = node([kid(1, 1), kid(null)]);
  ok(!proveNode(b));
  equal(b.terminal, null);
  const c = node([kid(1, 1), kid(1, 5), kid(1, 3)]);
  ok(proveNode(c));
  equal(c.terminal, -1);
  equal(c.dist, 6);
  const d = node([kid(1, 1), kid(0, 0)]);
  ok(proveNode(d));
  equal(d.terminal, 0);
  ok(!proveNode(node([])));
});

Deno.test("policy player: pure by default; the win-check variant plays a win in one first", () => {
  const g = position(BEFORE_WIN);
  const legal = g.validMoves();
  const win = winningMove(g, legal)!;
  // The prior favours the first legal move that does not win.
  const other = legal.find((m) => m !== win)!;
  const biased = {
    evaluate: (_g: HiveGame, moves: number[]) => {
      const priors = new Float32Array(moves.length).fill(0.1 / moves.length);
      priors[moves.indexOf(other)] = 0.9;
      return { priors, value: 0 };
    },
  };
  equal(new PolicyPlayer(biased).bestMove(g), other);
  equal(new PolicyPlayer(biased, true).bestMove(g), win);
  equal(g.turn, BEFORE_WIN.length, "the position is not modified");
});

Deno.test("SyncHiveNet: a staged batch gives the one-at-a-time values, sparse stem = dense stem", () => {
  const w = initWeights(HIVE_NETS.tiny, 11);
  const net = new SyncHiveNet(w), dense = new SyncHiveNet(w, false);
  const g = new HiveGame("Base+MLP");
  const single: { priors: Float32Array; value: number }[] = [];
  const legals: number[][] = [];
  for (const m of WON_ENGINE_GAME.slice(0, 10)) {
    const legal = g.validMoves();
    legals.push(legal);
    const a = net.evaluate(g, legal), d = dense.evaluate(g, legal);
    single.push(a);
    ok(Math.abs(a.value - d.value) < 1e-5, `sparse ${a.value} vs dense ${d.value}`);
    for (let i = 0; i < legal.length; i++) ok(Math.abs(a.priors[i] - d.priors[i]) < 1e-5);
    g.playString(m);
  }
  for (let i = 0; i < 10; i++) g.undo();
  for (const [k, m] of WON_ENGINE_GAME.slice(0, 10).entries()) {
    net.stage(g, legals[k]);
    g.playString(m);
  }
  const calls = net.calls;
  const batch = net.flush();
  equal(net.calls, calls + 1);
  equal(batch.length, 10);
  for (let k = 0; k < 10; k++) {
    ok(Math.abs(batch[k].value - single[k].value) < 1e-5, `value ${k}`);
    for (let i = 0; i < legals[k].length; i++) {
      ok(Math.abs(batch[k].priors[i] - single[k].priors[i]) < 1e-5, `prior ${k}/${i}`);
    }
  }
  equal(net.flush().length, 0);
});

Deno.test("mcts player: batched leaves under virtual loss find the same win; tree reuse keeps the subtree", () => {
  const w = initWeights(HIVE_NETS.tiny, 12);
  const g = position(MATE_IN_2);
  const r = new MctsPlayer(new SyncHiveNet(w), { ...MCTS_PLAYER_DEFAULTS, batch: 8 }).search(
    g,
    3000,
  );
  equal(r.proven?.result, 1);
  equal(r.proven?.plies, 3);
  // Tree reuse: after our move and a reply, the search starts from that grandchild's visits.
  const b = position(BEFORE_WIN.slice(0, 8));
  const p = new MctsPlayer(new SyncHiveNet(w));
  const first = p.search(b, 300);
  equal(first.reused, undefined);
  b.play(first.move);
  const reply = b.validMoves().find((m) => p.keptVisits([first.move, m]) > 1)!;
  ok(reply !== undefined, "some reply was searched");
  const kept = p.keptVisits([first.move, reply]);
  b.play(reply);
  const second = p.search(b, 50);
  equal(second.reused, kept);
  equal(p.keptVisits([]), kept + second.playouts);
  // Without reuse the tree starts empty.
  const fresh = new MctsPlayer(new SyncHiveNet(w), { ...MCTS_PLAYER_DEFAULTS, reuseTree: false });
  fresh.search(b, 50);
  equal(fresh.keptVisits([]), 50);
});

Deno.test("mcts player: values back up discounted per ply; a capped game is a draw", () => {
  // Black to move, lost in two: every Black move leaves White a win in one (proven by the win
  // check), so after the root's own evaluation (value 0) each playout backs up a win for White
  // one ply below a proven node: -(1 - d)^2 for Black at the root.
  const g = position(MATE_IN_2);
  const win3 = new MctsPlayer(uniformHiveEvaluator).search(g, 5000).move;
  g.play(win3);
  for (const d of [0, 0.01, 0.05]) {
    const p = new MctsPlayer(uniformHiveEvaluator, {
      ...MCTS_PLAYER_DEFAULTS,
      solver: false,
      discount: d,
    });
    const n = 100, r = p.search(g, n);
    const want = -((n - 1) / n) * (1 - d) ** 2;
    ok(Math.abs(r.value - want) < 1e-9, `discount ${d}: value ${r.value}, want ${want}`);
  }
  g.undo();
  // The same position for White with the ply cap at the next ply: every move that does not win
  // at once ends the game as a draw, so the solver proves the root by the win check (a win in
  // three is no longer there).
  const capped = new MctsPlayer(uniformHiveEvaluator, {
    ...MCTS_PLAYER_DEFAULTS,
    maxPlies: g.turn + 1,
  }).search(g, 5000);
  equal(capped.proven?.result, 0, "every line is capped: a proven draw");
  const far = new MctsPlayer(uniformHiveEvaluator, {
    ...MCTS_PLAYER_DEFAULTS,
    maxPlies: g.turn + 3,
  }).search(g, 5000);
  equal(far.proven?.result, 1, "a win in three plies still fits before the cap");
  equal(far.move, win3);
});

Deno.test("mcts player: the evaluation cache answers positions seen before, same search", () => {
  const w = initWeights(HIVE_NETS.tiny, 13);
  const b = position(BEFORE_WIN.slice(0, 8));
  const net = new SyncHiveNet(w);
  const p = new MctsPlayer(net, { ...MCTS_PLAYER_DEFAULTS, reuseTree: false });
  const first = p.search(b, 120);
  const evals = net.evaluations, hits = p.cacheHits;
  ok(evals <= 120 && evals > 50, `${evals} evaluations`);
  // The same search again without the tree: every position it reaches is cached.
  const again = p.search(b, 120);
  equal(net.evaluations, evals);
  equal(p.cacheHits - hits, evals + hits, "each evaluation and cached answer of the first search");
  equal(again.move, first.move);
  equal(again.value, first.value);
  const off = new MctsPlayer(new SyncHiveNet(w), { ...MCTS_PLAYER_DEFAULTS, cacheSize: 0 });
  equal(off.search(b, 120).move, first.move);
  equal(off.cacheHits, 0);
});

Deno.test("mcts player: hybrid values blend the network's value with tanh(static score / scale)", () => {
  const stub = {
    evaluate: (_g: HiveGame, legal: number[]) => ({
      priors: new Float32Array(legal.length).fill(1 / legal.length),
      value: 0.3,
    }),
  };
  const g = position(BEFORE_WIN.slice(0, 8));
  const score = staticScore(g, new Int32Array(2048), 0);
  ok(score !== 0, "a position the static score does not call level");
  for (const [mix, scale] of [[0, 200], [0.25, 200], [1, 50]]) {
    const p = new MctsPlayer(stub, { ...MCTS_PLAYER_DEFAULTS, valueMix: mix, valueScale: scale });
    // One playout: the root's own evaluation is its value.
    const r = p.search(g, 1);
    const want = (1 - mix) * 0.3 + mix * Math.tanh(score / scale);
    ok(Math.abs(r.value - want) < 1e-6, `mix ${mix}: ${r.value}, want ${want}`);
  }
  equal(g.turn, 8);
});

Deno.test("mcts player: lazy network calls score new leaves statically and call it at visited nodes", () => {
  let calls = 0;
  const counting = {
    evaluate: (g: HiveGame, legal: number[]) => {
      calls++;
      return uniformHiveEvaluator.evaluate(g, legal);
    },
  };
  const g = position(BEFORE_WIN.slice(0, 8));
  const lazy = (netVisits: number) =>
    new MctsPlayer(counting, { ...MCTS_PLAYER_DEFAULTS, netVisits, cacheSize: 0 });
  // Never visited enough: the root's evaluation is the only network call.
  calls = 0;
  equal(lazy(1e9).search(g, 300).playouts, 300);
  equal(calls, 1);
  // At one visit, each node the search passes through again gets the network once.
  calls = 0;
  lazy(1).search(g, 300);
  ok(calls > 1 && calls < 300, `${calls} network calls for 300 playouts`);
  // The solver still proves the win in three.
  const r = lazy(4).search(position(MATE_IN_2), 5000);
  equal(r.proven?.result, 1);
  equal(r.proven?.plies, 3);
});

Deno.test("surroundGains: the change of (enemy - own queen neighbours) each move makes, by replay", () => {
  const g = position(BEFORE_WIN);
  const moves = g.validMoves();
  const gains = surroundGains(g, moves);
  const me = g.turn & 1;
  const win = winningMove(g, moves)!;
  ok(gains[moves.indexOf(win)] >= 1, "the winning move closes in on the enemy queen");
  let closing = 0;
  for (let i = 0; i < moves.length; i++) {
    const before = g.queenNeighbors(1 - me) - g.queenNeighbors(me);
    g.play(moves[i]);
    equal(
      gains[i],
      g.queenNeighbors(1 - me) - g.queenNeighbors(me) - before,
      g.moveString(moves[i]),
    );
    g.undo();
    if (gains[i] > 0) closing++;
  }
  ok(closing > 0 && closing < moves.length, `${closing} of ${moves.length} moves close in`);
  // Tilted priors: with equal network priors each root move gets exp(k x gain) (a position one ply
  // earlier, with no win in one, so the root keeps every move).
  g.undo();
  const moves2 = g.validMoves(), gains2 = surroundGains(g, moves2);
  equal(winningMove(g, moves2), null);
  ok(new Set(gains2).size > 1, "moves of different gains");
  const p = new MctsPlayer(uniformHiveEvaluator, { ...MCTS_PLAYER_DEFAULTS, surroundPrior: 1 });
  p.search(g, 1);
  const st = p.rootPriors();
  const z = gains2.reduce((a, x) => a + Math.exp(x), 0);
  for (let i = 0; i < moves2.length; i++) {
    equal(st.moves[i], moves2[i]);
    const want = Math.exp(gains2[i]) / z;
    ok(Math.abs(st.priors[i] - want) < 1e-6, `prior of ${g.moveString(moves2[i])}`);
  }
  // The batched path (leaves replayed after the batch) tilts the same way as one at a time.
  const w = initWeights(HIVE_NETS.tiny, 5);
  const tilted = (batch: number) => {
    const q = new MctsPlayer(new SyncHiveNet(w), {
      ...MCTS_PLAYER_DEFAULTS,
      surroundPrior: 1.5,
      batch,
    });
    q.search(g, 40);
    return q.rootPriors().priors;
  };
  const one = tilted(1), eight = tilted(8);
  const raw = new SyncHiveNet(w).evaluate(g, moves2).priors;
  const z2 = raw.reduce((a, x, i) => a + x * Math.exp(1.5 * gains2[i]), 0);
  for (let i = 0; i < moves2.length; i++) {
    const want = raw[i] * Math.exp(1.5 * gains2[i]) / z2;
    ok(Math.abs(one[i] - want) < 1e-6 && Math.abs(eight[i] - want) < 1e-6, `prior ${i}`);
  }
});

// Positions of seeded random games (`games` games of up to `plies` plies), every ply's position.
function randomPositions(seed: number, games: number, plies: number): HiveGame[] {
  const rand = mulberry32(seed), out: HiveGame[] = [];
  for (let k = 0; k < games; k++) {
    const g = new HiveGame("Base+MLP");
    while (!g.isOver() && g.turn < plies) {
      const legal = g.validMoves();
      g.play(legal[Math.floor(rand() * legal.length)]);
      out.push(g.clone());
    }
  }
  return out;
}

Deno.test("SyncHiveNet: the sparse stem's shortcut gives the plain sparse stem's bits", () => {
  const w = initWeights(HIVE_NETS.tiny, 5);
  const net = new SyncHiveNet(w), plain = new SyncHiveNet(w, true, true);
  const positions = randomPositions(3, 6, 50);
  for (const [i, g] of positions.entries()) {
    const legal = g.validMoves();
    const a = net.evaluate(g, legal), b = plain.evaluate(g, legal);
    equal(a.value, b.value, `value at position ${i}`);
    equal([...a.priors].join(), [...b.priors].join(), `priors at position ${i}`);
  }
  // Batches of 4 (the buffers are kept between calls).
  for (let i = 0; i + 4 <= positions.length; i += 4) {
    for (const e of [net, plain]) {
      for (const g of positions.slice(i, i + 4)) e.stage(g, g.validMoves());
    }
    const a = net.flush(), b = plain.flush();
    for (let k = 0; k < 4; k++) {
      equal(a[k].value, b[k].value);
      equal([...a[k].priors].join(), [...b[k].priors].join());
    }
  }
});

Deno.test("winningMove: the same move as playing every legal move and looking", () => {
  const everyMove = (g: HiveGame, legal: number[]) => {
    for (const m of legal) {
      g.play(m);
      const won = g.outcomeForSideToMove() === -1;
      g.undo();
      if (won) return m;
    }
    return null;
  };
  let wins = 0;
  // Long random games: many positions near a surrounded queen.
  for (const g of randomPositions(9, 40, 400)) {
    const legal = g.validMoves();
    const w = winningMove(g, legal);
    equal(w, everyMove(g, legal), g.history().length + " plies");
    if (w !== null) wins++;
  }
  ok(wins >= 5, `only ${wins} positions with a win in one`);
});

Deno.test("MctsPlayer: the same search with the stem's shortcut as with the plain stem", () => {
  // The shipped shape (cells-cpu, 16 filters) also runs the sparse tower (FastInference's cells
  // that can differ); the plain stem runs the whole tower, so this compares the two as well.
  const cfg = { ...MCTS_PLAYER_DEFAULTS, reuseTree: false, cacheSize: 0 };
  for (const w of [initWeights(HIVE_NETS.tiny, 8), initWeights(HIVE_NETS["cells-cpu"], 8)]) {
    for (const g of randomPositions(4, 2, 16).filter((_, i) => i % 5 === 4)) {
      for (const batch of [1, 4]) {
        const a = new MctsPlayer(new SyncHiveNet(w), { ...cfg, batch });
        const b = new MctsPlayer(new SyncHiveNet(w, true, true), { ...cfg, batch });
        const ra = a.search(g, 150), rb = b.search(g, 150);
        equal(ra.move, rb.move);
        equal(ra.value, rb.value);
        equal(ra.playouts, rb.playouts);
        const pa = a.rootPriors(), pb = b.rootPriors();
        equal(pa.priors.join(), pb.priors.join());
        equal(
          pa.moves.map((m) => a.keptVisits([m])).join(),
          pb.moves.map((m) => b.keptVisits([m])).join(),
        );
      }
    }
  }
});
