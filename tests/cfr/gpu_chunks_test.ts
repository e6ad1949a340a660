import assert from "node:assert/strict";
import { getGpu } from "../../src/gpu/device.ts";
import type { PublicTree } from "../../src/cfr/tree.ts";
import { CFR_CHANCE } from "../../src/cfr/tree.ts";
import type { SolverOptions } from "../../src/cfr/solver.ts";
import type { CfrGame } from "../../src/cfr/game.ts";
import { GpuCfrSolver, gpuSolveShape, planGpuSolve } from "../../src/cfr/gpu/solver.ts";
import { cutOf, planChunks } from "../../src/cfr/gpu/chunks.ts";
import { T1_SPOT } from "../../src/poker/config.ts";
import { spotTree } from "../helpers/spots.ts";

const ctx = await getGpu();
const hasAdapter = ctx !== null;

// A turn spot: the river deal is the cut; its 40-odd outcomes are the chunk roots.
const TURN = `
[ranges]
oop = "AA,KK,T9s"
ip = "QQ,JJ,AQs"
[cards]
flop = "Td9d6d"
turn = "2d"
[tree]
starting_pot = 200
effective_stack = 200
rake_rate = 0.05
rake_cap = 30
[bet_sizes]
turn = "minimal"
river = "minimal"
`;

Deno.test("gpu chunks: a plan covers every node once, with disjoint rows per chunk", () => {
  const { tree } = spotTree(TURN);
  const { cut, roots } = cutOf(tree);
  assert.ok(cut.length > 1 && roots.length > 20, `${cut.length} cut nodes, ${roots.length} roots`);
  for (const c of cut) assert.equal(tree.kind[c], CFR_CHANCE);
  const one = planChunks(tree, { rowBytes: 8, elemBytes: 0 }, {});
  assert.equal(one.segments.length, 1);
  assert.equal(one.rows, tree.size);
  const plan = planChunks(tree, { rowBytes: 8, elemBytes: 8 }, { chunks: 5 });
  const chunks = plan.segments.length - 1;
  assert.ok(chunks >= 4 && chunks <= 6, `${chunks} chunks`);
  const upper = plan.segments[0].rows;
  let seen = 0;
  plan.segments.forEach((seg, s) => {
    const rows = new Set<number>();
    for (const list of seg.down) {
      for (const n of list) {
        assert.equal(plan.nodeSeg[n], s);
        rows.add(plan.slot[n]), seen++;
        assert.ok(plan.slot[n] < plan.rows);
        assert.ok(s === 0 ? plan.slot[n] < upper : plan.slot[n] >= upper);
      }
    }
    assert.equal(rows.size, seg.rows, "rows of a segment are distinct");
  });
  assert.equal(seen, tree.size);
  // Each cut node's children are split into ranges, in order, the first flagged.
  for (const c of cut) {
    const got: number[][] = [];
    for (const seg of plan.segments) {
      for (let i = 0; i < seg.parts.length; i += 5) {
        if (seg.parts[i] === c) got.push(seg.parts.slice(i + 1, i + 4));
      }
    }
    let next = tree.firstChild[c];
    got.forEach(([a, b, f], i) => {
      assert.equal(a, next), assert.equal(f, i === 0 ? 1 : 0);
      next = b;
    });
    assert.equal(next, tree.firstChild[c] + tree.numChildren[c]);
  }
});

Deno.test("gpu chunks: a memory budget picks the fewest chunks that fit it", () => {
  const { tree } = spotTree(T1_SPOT);
  const formats: ["u8", "u4"] = ["u8", "u4"];
  const whole = planGpuSolve(tree, "dcfr+", formats, { chunks: 1 });
  assert.equal(whole.plan.segments.length, 1);
  let last = 1;
  for (const f of [0.7, 0.5, 0.35]) {
    const budget = Math.round(whole.bytes * f);
    const p = planGpuSolve(tree, "dcfr+", formats, { memoryBudget: budget });
    assert.ok(p.bytes <= budget, `${p.bytes} > ${budget}`);
    const chunks = p.plan.segments.length - 1;
    assert.ok(chunks >= last, `${chunks} chunks at ${f}, ${last} before`);
    last = chunks;
  }
  assert.ok(last > 1);
  // A budget below the stores cannot be met: the finest plan is returned, over it (the solver
  // refuses it quoting the parts).
  const stores = whole.parts["regret store"] + whole.parts["strategy store"];
  const tight = planGpuSolve(tree, "dcfr+", formats, { memoryBudget: stores });
  assert.ok(tight.bytes > stores);
});

Deno.test(
  "gpu chunks: under a budget the solver allocates at most the budget (exact dispatch parameters)",
  { ignore: !hasAdapter },
  async () => {
    const { tree, game } = spotTree(T1_SPOT);
    const options: SolverOptions = { algorithm: "dcfr+", regretBits: 8, strategyBits: 4 };
    const whole = gpuSolveShape(tree, game, options, { chunks: 1 }).plan.bytes;
    for (const f of [0.6, 0.4]) {
      const budget = Math.round(whole * f);
      const shape = gpuSolveShape(tree, game, options, { memoryBudget: budget });
      assert.ok(shape.plan.bytes <= budget, `plan ${shape.plan.bytes} > ${budget}`);
      assert.equal(shape.plan.parts["dispatch parameters"], shape.paramSets * 256);
      const gpu = await GpuCfrSolver.create(ctx!, tree, game, options, {
        memoryBudget: budget,
      });
      try {
        assert.ok(gpu.deviceBytes <= budget, `allocated ${gpu.deviceBytes} > budget ${budget}`);
      } finally {
        gpu.destroy();
      }
    }
  },
);

/** Device stores and exploitability after `iterations`, at a given chunk count. */
async function solveWith(
  tree: PublicTree,
  game: CfrGame,
  options: SolverOptions,
  chunks: number,
  iterations: number,
) {
  const gpu = await GpuCfrSolver.create(ctx!, tree, game, options, { chunks });
  try {
    gpu.run(iterations);
    const stores = await gpu.download();
    const ex = await gpu.exploitability();
    return { stores, ex, chunks: gpu.chunks, rows: gpu.plan.plan.rows };
  } finally {
    gpu.destroy();
  }
}

Deno.test({
  name: "gpu chunks: several chunks give the same regrets, strategy and exploitability as one",
  ignore: !hasAdapter,
  async fn() {
    const { tree, game } = spotTree(TURN);
    // f32 stores (updated in place by the up pass) and packed ones (8-bit regrets and predictions,
    // 4-bit strategy: words shared by neighbouring blocks of different chunks).
    const cases: SolverOptions[] = [
      { algorithm: "dcfr" },
      { algorithm: "pdcfr+", regretBits: 8, strategyBits: 4, seed: 5 },
    ];
    for (const options of cases) {
      const a = await solveWith(tree, game, options, 1, 3);
      const b = await solveWith(tree, game, options, 6, 3);
      assert.equal(a.chunks, 1);
      assert.ok(b.chunks >= 5, `${b.chunks} chunks`);
      assert.ok(b.rows < a.rows / 2, `${b.rows} vector rows chunked, ${a.rows} whole`);
      for (const name of ["regrets", "strategy", "predicted"] as const) {
        const x = a.stores[name], y = b.stores[name];
        if (!x || !y) continue;
        assert.deepEqual(y.words, x.words, `${options.algorithm} ${name} words`);
        assert.deepEqual(y.scales, x.scales, `${options.algorithm} ${name} scales`);
      }
      assert.equal(b.ex.nashConv, a.ex.nashConv);
      assert.deepEqual(b.ex.ev, a.ex.ev);
    }
  },
});
