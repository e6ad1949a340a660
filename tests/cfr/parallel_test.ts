import assert from "node:assert/strict";
import { buildTree, type PublicTree } from "../../src/cfr/tree.ts";
import { CfrSolver, type SolverOptions } from "../../src/cfr/solver.ts";
import type { CfrGame } from "../../src/cfr/game.ts";
import { buildActionTree } from "../../src/poker/action_tree.ts";
import { parseSolveConfig } from "../../src/poker/config.ts";
import { leducGame } from "../../src/games/leduc.ts";
import {
  MisnamedWorkerGame,
  ThreadedLimitGame,
  ThreadedPostflopGame,
} from "../fixtures/cfr/threaded_games.ts";
import { isKibitzError } from "../../src/errors.ts";
import { WorkerPool } from "../../src/cfr/parallel.ts";
import { TASK_TRAIN, type TaskSolver } from "../../src/cfr/tasks.ts";
import { SMALL_TURN_SPOT } from "../helpers/spots.ts";

const LEDUC = {
  name: "leduc",
  ranks: 3,
  suits: 2,
  ante: 1,
  betSizes: [2, 4],
  maxRaises: 2,
  rankNames: "JQK",
  suitNames: "sh",
};

/** Solves `iterations` and returns the exploitability sequence and the raw stores. */
function solve(tree: PublicTree, game: CfrGame, options: SolverOptions, iterations: number) {
  const s = new CfrSolver(tree, game, options);
  try {
    const seq: number[] = [];
    for (let i = 0; i < iterations; i += 5) {
      s.run(5);
      seq.push(s.exploitability().chips);
    }
    return {
      threads: s.threads,
      seq,
      visits: s.nodeHandVisits,
      regrets: [Array.from(s.regrets.words), Array.from(s.regrets.scales)],
      strategy: [Array.from(s.strategy.words), Array.from(s.strategy.scales)],
    };
  } finally {
    s.close();
  }
}

function assertSame(a: ReturnType<typeof solve>, b: ReturnType<typeof solve>, what: string) {
  assert.deepEqual(b.seq, a.seq, `${what}: exploitability`);
  assert.equal(b.visits, a.visits, `${what}: node-hand visits`);
  assert.ok(a.regrets[0].length > 0);
  assert.deepEqual(b.regrets, a.regrets, `${what}: regret bits`);
  assert.deepEqual(b.strategy, a.strategy, `${what}: strategy bits`);
}

Deno.test({
  name:
    "threads: Leduc gives bit-identical regrets, strategies and exploitability on 1, 2 and 3 threads",
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    for (const isomorphic of [false, true]) {
      const game = new ThreadedLimitGame({ ...LEDUC, isomorphic }), tree = buildTree(game);
      const cases: [string, SolverOptions][] = [
        ["dcfr f32", { seed: 3 }],
        ["dcfr i8/u4 pruned", { seed: 3, regretBits: 8, strategyBits: 4, pruning: 0.5 }],
        ["pdcfr+ u4/u8", { seed: 5, algorithm: "pdcfr+", regretBits: 4, strategyBits: 8 }],
      ];
      for (const [what, options] of cases) {
        const one = solve(tree, game, options, 20);
        assert.equal(one.threads, 1);
        for (const threads of [2, 3]) {
          const many = solve(tree, game, { ...options, threads }, 20);
          assert.equal(many.threads, threads);
          assertSame(one, many, `${what}, iso ${isomorphic}, ${threads} threads`);
        }
      }
    }
  },
});

Deno.test({
  name: "threads: a Hold'em turn spot solves bit-identically on 1 and 2 threads (f32 and 8/4 bits)",
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    const config = parseSolveConfig(`
[ranges]
oop = "AA,KK,QQ,JTs,98s,AKs"
ip = "AK,QJs,T9s,66,KQo"
[cards]
flop = "Td9d6h"
turn = "Qc"
[tree]
starting_pot = 200
effective_stack = 900
[bet_sizes.turn]
oop_bet = "50%"
oop_raise = ""
ip_bet = "50%"
ip_raise = ""
[bet_sizes.river]
oop_bet = "75%"
oop_raise = ""
ip_bet = "75%"
ip_raise = ""
`);
    const game = new ThreadedPostflopGame(
      buildActionTree(config.tree),
      config.board,
      config.rangeWeights,
    );
    const tree = buildTree(game);
    for (const [r, s] of [[32, 32], [8, 4]]) {
      const options: SolverOptions = { seed: 7, regretBits: r, strategyBits: s };
      const one = solve(tree, game, options, 10);
      const two = solve(tree, game, { ...options, threads: 2 }, 10);
      assert.equal(two.threads, 2);
      assertSame(one, two, `${r}/${s} bits`);
    }
  },
});

Deno.test("threads: a game without workerSource, or a tree without chance nodes, runs on one thread", () => {
  const game = new ThreadedLimitGame({
    ...LEDUC,
    name: "kuhn",
    suits: 1,
    maxRaises: 1,
    betSizes: [1],
  });
  const tree = buildTree(game);
  const s = new CfrSolver(tree, game, { threads: 4 });
  assert.equal(s.threads, 1);
  s.run(2);
  s.close();
  assert.throws(() => new CfrSolver(tree, game, { threads: 0 }), /threads must be at least 1/);
  const leduc = leducGame();
  assert.equal(new CfrSolver(buildTree(leduc), leduc, { threads: 4 }).threads, 1);
});

Deno.test({
  name: "threads: a worker that cannot rebuild the game fails the solve with a clear error",
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    const game = new MisnamedWorkerGame(LEDUC), tree = buildTree(game);
    const s = new CfrSolver(tree, game, { threads: 2 });
    const t0 = performance.now();
    assert.throws(() => s.run(1), (e: unknown) => isKibitzError(e, "worker_failed"));
    assert.ok(performance.now() - t0 < 60_000, "reported without waiting for the start timeout");
    s.close();
  },
});

Deno.test({
  name:
    "threads: a worker entry (a game's own task loop) that its module does not export fails clearly",
  sanitizeResources: false,
  sanitizeOps: false,
  fn() {
    // The pool's workers run `name` of `module` (the threaded Wasm walk's serveWalkTasks).
    const solver = { tasks: { count: 0 } } as unknown as TaskSolver;
    const module = new URL("../../src/errors.ts", import.meta.url).href;
    const entry = { module, name: "noSuchExport", data: {} };
    const pool = new WorkerPool(solver, 2, entry);
    try {
      assert.throws(
        () => pool.runTasks(0, 0, TASK_TRAIN),
        (e: unknown) => isKibitzError(e, "worker_failed"),
      );
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "threads: startThreads() starts the workers ahead (browsers need it); close() and run restart them",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const game = new ThreadedLimitGame(LEDUC), tree = buildTree(game);
    const options: SolverOptions = { seed: 5, regretBits: 16, strategyBits: 16 };
    const one = solve(tree, game, options, 10);
    const s = new CfrSolver(tree, game, { ...options, threads: 3 });
    try {
      await s.startThreads();
      const seq: number[] = [];
      for (let i = 0; i < 10; i += 5) {
        s.run(5);
        seq.push(s.exploitability().chips);
        s.close(); // the next run starts the workers again on demand
      }
      assert.equal(s.threads, 3);
      assert.deepEqual(seq, one.seq);
    } finally {
      s.close();
    }
  },
});

Deno.test("threads: more than one needs SharedArrayBuffer (a page that is not cross-origin isolated)", () => {
  const game = new ThreadedLimitGame(LEDUC), tree = buildTree(game);
  const g = globalThis as { crossOriginIsolated?: boolean };
  g.crossOriginIsolated = false;
  try {
    assert.throws(
      () => new CfrSolver(tree, game, { threads: 2 }),
      (e: unknown) => isKibitzError(e, "bad_option") && /cross-origin isolated/.test(String(e)),
    );
    assert.equal(new CfrSolver(tree, game, { threads: 1 }).threads, 1);
    assert.equal(
      parseSolveConfig(SMALL_TURN_SPOT).solver.threads,
      1,
      "the default drops to one thread",
    );
  } finally {
    delete g.crossOriginIsolated;
  }
  assert.ok(parseSolveConfig(SMALL_TURN_SPOT).solver.threads >= 1);
});
