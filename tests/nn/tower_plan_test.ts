// towerPlan (which cells each tower layer computes) against a cell-by-cell oracle, and the sparse
// residual tower it drives against the dense one: the same bits on inputs that are one value per
// row except at random cells, and on the encodings of real Hive positions.
import assert from "node:assert/strict";
import { towerPlan } from "../../src/nn/cpu/tower_plan.ts";
import {
  convSimdEnabled,
  type ResidualBlockWeights,
  residualTowerSimd,
} from "../../src/nn/cpu/conv_simd.ts";
import { FastInference } from "../../src/nn/cpu/fast_infer.ts";
import { HIVE_NETS } from "../../src/alphazero/hive.ts";
import { initWeights } from "../../src/nn/params.ts";
import { type CpuTensor, cpuTensor, rng } from "../../src/nn/tensor.ts";
import { HiveGame } from "../../src/hive/game.ts";
import {
  encodeHivePosition,
  HIVE_PLANE_SIZE,
  hiveCellPositions,
  hiveMoveIndex,
} from "../../src/hive/encoding.ts";
import { hiveMoveCells } from "../../src/hive/move_cells.ts";

// The cells of layer l (1-based) that can differ from their row's common value: the input's
// marked cells and outermost columns, dilated l times by the 3 x 3 neighbourhood.
function differing(rows: number[], w: number, l: number): boolean[][] {
  let d = rows.map((m) =>
    [...Array(w)].map((_, q) => q === 0 || q === w - 1 || ((m >> q) & 1) === 1)
  );
  for (let k = 0; k < l; k++) {
    d = d.map((row, r) =>
      row.map((_, q) => {
        for (let dr = -1; dr <= 1; dr++) {
          for (let dq = -1; dq <= 1; dq++) if (d[r + dr]?.[q + dq]) return true;
        }
        return false;
      })
    );
  }
  return d;
}

Deno.test("towerPlan: each layer computes the differing cells and one other per row, and copies it over the rest", () => {
  const next = rng(3);
  const rowW = 30;
  for (const [h, w] of [[26, 26], [7, 9], [5, 30], [3, 3]]) {
    for (let trial = 0; trial < 6; trial++) {
      // Empty, sparse and dense marks (trial 0: none, so only the edges differ).
      const density = trial === 0 ? 0 : trial / 12;
      const rows = [...Array(h)].map(() => {
        let m = 0;
        for (let q = 0; q < w; q++) if (next() < density) m |= 1 << q;
        return m;
      });
      const plans = towerPlan(rows, h, w, rowW, 4);
      assert.equal(plans.length, 4);
      for (const [i, p] of plans.entries()) {
        const what = `${h}x${w} trial ${trial} layer ${i + 1}`;
        const d = differing(rows, w, i + 1);
        const computed = new Set(p.cells);
        assert.equal(computed.size, p.cells.length, `${what}: a cell listed twice`);
        for (let k = 1; k < p.cells.length; k++) assert.ok(p.cells[k] > p.cells[k - 1], what);
        const filled = new Map<number, number>();
        for (let k = 0; k < p.fills.length; k += 3) {
          for (let j = 0; j < p.fills[k + 1]; j++) filled.set(p.fills[k] + j, p.fills[k + 2]);
        }
        for (let r = 0; r < h; r++) {
          const others = d[r].map((x, q) => (x ? -1 : q)).filter((q) => q >= 0);
          for (let q = 0; q < w; q++) {
            const at = r * rowW + q;
            if (d[r][q]) {
              assert.ok(computed.has(at), `${what}: differing cell (${r}, ${q}) not computed`);
              continue;
            }
            // Exactly one of: computed (the row's source cell) or copied from a computed
            // cell of the same row that does not differ.
            const src = filled.get(at);
            assert.ok(computed.has(at) !== (src !== undefined), `${what}: cell (${r}, ${q})`);
            if (src !== undefined) {
              assert.ok(computed.has(src), `${what}: (${r}, ${q}) copies an uncomputed cell`);
              assert.equal(Math.floor(src / rowW), r, `${what}: copied across rows`);
              assert.ok(others.includes(src - r * rowW), `${what}: copied from a differing cell`);
            }
          }
        }
        // Nothing outside the image.
        for (const at of [...computed, ...filled.keys()]) {
          assert.ok(at % rowW < w && at < h * rowW, `${what}: cell ${at} outside`);
        }
        // Only the differing cells and at most one more per row are computed.
        const want = d.flat().filter((x) => x).length;
        assert.ok(
          p.cells.length - want <= h,
          `${what}: ${p.cells.length} computed, ${want} differ`,
        );
      }
    }
  }
  assert.throws(() => towerPlan([0], 1, 31, 33, 1), RangeError);
});

const next = rng(11);
const rand = (shape: number[], scale = 1): CpuTensor => {
  const t = cpuTensor(shape);
  for (let i = 0; i < t.data.length; i++) t.data[i] = (next() * 2 - 1) * scale;
  return t;
};

Deno.test("residualTowerSimd with rows: the same bits as the whole tower on row-constant inputs", () => {
  assert.ok(convSimdEnabled());
  // [batch, channels, height, width, blocks]
  for (const [n, c, h, w, nb] of [[2, 16, 26, 26, 2], [1, 32, 9, 13, 1], [3, 16, 5, 30, 2]]) {
    const blocks: ResidualBlockWeights[] = [];
    for (let i = 0; i < nb; i++) {
      const s = 1 / Math.sqrt(c * 9);
      blocks.push({
        w1: rand([c, c, 3, 3], s),
        b1: rand([c], 0.2).data,
        w2: rand([c, c, 3, 3], s),
        b2: rand([c], 0.2).data,
      });
    }
    for (const density of [0, 0.03, 0.2, 1]) {
      // Per image, channel and row one value, then random cells (and the outermost columns,
      // which rows never lists) changed; rows marks the changed inner cells.
      const x = cpuTensor([n, c, h, w]);
      const rows = new Int32Array(n * h);
      for (let b = 0; b < n; b++) {
        for (let r = 0; r < h; r++) {
          let m = 0;
          for (let q = 1; q < w - 1; q++) if (next() < density) m |= 1 << q;
          rows[b * h + r] = m;
          for (let ch = 0; ch < c; ch++) {
            const o = ((b * c + ch) * h + r) * w, v = next() * 2 - 1;
            for (let q = 0; q < w; q++) {
              x.data[o + q] = (m >> q) & 1 || q === 0 || q === w - 1 ? next() * 2 - 1 : v;
            }
          }
        }
      }
      const what = `n${n} c${c} ${h}x${w} blocks ${nb} density ${density}`;
      const dense = residualTowerSimd(x, blocks).data.slice();
      const sparse = residualTowerSimd(x, blocks, undefined, rows).data;
      assert.deepEqual(sparse, dense, what);
      let zeros = 0;
      for (const v of dense) if (v === 0) zeros++;
      assert.ok(zeros > 0 && zeros < dense.length, `${what}: ReLU clipped some outputs`);
    }
  }
});

Deno.test("FastInference: the tower on the cells that can differ gives the whole tower's bits on Hive positions", () => {
  // The shipped network's shape (cells-cpu: 2 blocks x 16 filters); trained statistics do not
  // matter for bit equality, random weights exercise every path.
  const wts = initWeights(HIVE_NETS["cells-cpu"], 4);
  const a = new FastInference(wts), b = new FastInference(wts);
  b.denseTower = true;
  const r = rng(9);
  const planes = new Float32Array(HIVE_PLANE_SIZE);
  let positions = 0;
  for (let game = 0; game < 3; game++) {
    const g = new HiveGame("Base+MLP");
    while (!g.isOver() && g.turn < 50) {
      const legal = g.validMoves();
      if (legal.length === 0) break;
      if (g.turn % 3 === 0) {
        const pos = hiveCellPositions(g);
        encodeHivePosition(g, planes, 0, legal, pos);
        const idx = legal.map((m) => hiveMoveIndex(g, m));
        const cells = hiveMoveCells(g, legal, undefined, pos);
        const pa = new Float32Array(legal.length), pb = new Float32Array(legal.length);
        const va = a.evaluate(planes, 0, idx, pa, cells),
          vb = b.evaluate(planes, 0, idx, pb, cells);
        assert.equal(va, vb, `value at ply ${g.turn} of game ${game}`);
        assert.deepEqual(pa, pb, `priors at ply ${g.turn} of game ${game}`);
        positions++;
      }
      g.play(legal[Math.floor(r() * legal.length)]);
    }
  }
  assert.ok(positions >= 30, `${positions} positions`);
});
