// The cells head's move table on every legal move of real-game positions and random playouts,
// checked against the input planes (not against the mapping it is built from).
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { movePiece, moveTo, PASS } from "../../src/hive/move.ts";
import { PIECE_BUG, PIECE_COLOR } from "../../src/hive/pieces.ts";
import {
  encodeHivePosition,
  HIVE_BOARD,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveCellPositions,
  hiveMoveIndex,
  PLANE,
} from "../../src/hive/encoding.ts";
import {
  HIVE_CELLS,
  HIVE_CELLS_PASS_SLOT,
  hiveMoveCellRows,
  hiveMoveCells,
  packMoveCells,
} from "../../src/hive/move_cells.ts";
import { randomGame } from "../../src/hive/playout.ts";
import { HEX_SYMMETRIES, transformGame, transformMove } from "../../src/hive/symmetry.ts";

const DIR = new URL("../fixtures/hive/pgn/", import.meta.url);
const AREA = HIVE_BOARD * HIVE_BOARD;

/** Every position (before each move) of the fixture games, then of a few random playouts. */
function positions(): HiveGame[] {
  const out: HiveGame[] = [];
  for (const e of [...Deno.readDirSync(DIR)].sort((a, b) => a.name.localeCompare(b.name))) {
    const text = Deno.readTextFileSync(new URL(e.name, DIR));
    const g = new HiveGame(/\[GameType "([^"]+)"\]/.exec(text)![1]);
    for (const m of text.matchAll(/^\d+\. (.+)$/gm)) {
      out.push(g.clone());
      g.playString(m[1].trim());
    }
  }
  // Random games reach pillbug throws of enemy pieces and climbs the recorded games rarely show.
  for (let seed = 1; seed <= 6; seed++) {
    for (const plies of [7, 20, 45]) out.push(randomGame("Base+MLP", plies, seed * 977));
  }
  return out;
}

const POSITIONS = positions();

// Plane value of `plane` at plane cell `cell` (row * 26 + col) of an encoding.
const at = (x: Float32Array, plane: number, cell: number) => x[plane * AREA + cell];

Deno.test("cells table: slots, planes, ranges and distinct move indices on every legal move", () => {
  const x = new Float32Array(HIVE_PLANE_SIZE);
  let moves = 0, placements = 0, movements = 0, origins = 0;
  for (const g of POSITIONS) {
    const legal = g.validMoves();
    encodeHivePosition(g, x, 0, legal);
    const cells = hiveMoveCells(g, legal);
    const rows = hiveMoveCellRows(g, legal);
    assert.equal(cells.length, legal.length * 3);
    assert.equal(rows.length, legal.length * 4);
    const seen = new Set<number>();
    legal.forEach((m, i) => {
      const [a, b, slot] = [cells[i * 3], cells[i * 3 + 1], cells[i * 3 + 2]];
      assert.deepEqual([...rows.subarray(i * 4, i * 4 + 4)], [hiveMoveIndex(g, m), a, b, slot]);
      const idx = rows[i * 4];
      assert.ok(idx >= 0 && idx < HIVE_POLICY_SIZE && !seen.has(idx), `index ${idx}`);
      seen.add(idx);
      for (const v of [a, b]) assert.ok(v >= -1 && v < HIVE_CELLS.planes * AREA, `cell ${v}`);
      assert.ok(slot >= 0 && slot < HIVE_CELLS.biases);
      if (m === PASS) {
        assert.deepEqual([a, b, slot], [-1, -1, HIVE_CELLS_PASS_SLOT]);
        return;
      }
      const p = movePiece(m), bug = PIECE_BUG[p];
      assert.ok(a >= 0, "every destination lies inside the window in real positions");
      assert.equal(Math.floor(a / AREA), bug, "destination plane = the moved piece's bug");
      if (g.pieceCell[p] < 0) {
        placements++;
        assert.equal(b, -1);
        assert.equal(slot, bug);
        // A placement goes where the placements plane is marked.
        assert.equal(at(x, PLANE.placements, a % AREA), 1);
      } else {
        movements++;
        assert.equal(slot, 8 + bug);
        assert.equal(Math.floor(b / AREA), 8 + bug, "origin plane = 8 + bug");
        // The origin cell shows the moved piece (mine or theirs: a pillbug may throw either).
        const side = PIECE_COLOR[p] === g.colorToMove ? PLANE.mine : PLANE.theirs;
        assert.equal(at(x, side + bug, b % AREA), 1, "the piece is at its origin cell");
        if (PIECE_COLOR[p] !== g.colorToMove) origins++;
      }
      moves++;
    });
  }
  assert.ok(moves > 10000 && placements > 1000 && movements > 5000, `${moves} moves`);
  assert.ok(origins > 0, "some pillbug throws of enemy pieces are covered");
});

Deno.test("cells table: the destination is where the next position's planes show the piece", () => {
  const x = new Float32Array(HIVE_PLANE_SIZE);
  let checked = 0, shifted = 0;
  for (const g of POSITIONS.filter((_, i) => i % 3 === 0)) {
    const legal = g.validMoves().filter((m) => m !== PASS);
    const before = hiveCellPositions(g);
    const cells = hiveMoveCells(g, legal);
    legal.forEach((m, i) => {
      const p = movePiece(m);
      const g2 = g.clone();
      g2.play(m);
      const after = hiveCellPositions(g2);
      // Only when the frame does not shift: every unmoved piece keeps its plane cell.
      for (const [c, v] of before) {
        if (g.height[c] > 0 && c !== g.pieceCell[p] && after.get(c) !== v) {
          shifted++;
          return;
        }
      }
      encodeHivePosition(g2, x);
      const side = PIECE_COLOR[p] === g2.colorToMove ? PLANE.mine : PLANE.theirs;
      assert.equal(at(x, side + PIECE_BUG[p], cells[i * 3] % AREA), 1, g.moveString(m));
      assert.equal(after.get(moveTo(m)), cells[i * 3] % AREA);
      checked++;
    });
  }
  assert.ok(checked > 2000, `only ${checked} moves checked (${shifted} shifted)`);
});

Deno.test("cells table under the 12 symmetries: the same slots at cells with the same features", () => {
  const x = new Float32Array(HIVE_PLANE_SIZE), y = new Float32Array(HIVE_PLANE_SIZE);
  let compared = 0;
  for (const g of POSITIONS.filter((_, i) => i % 17 === 0)) {
    const legal = g.validMoves();
    encodeHivePosition(g, x, 0, legal);
    const cells = hiveMoveCells(g, legal);
    for (let s = 1; s < HEX_SYMMETRIES; s++) {
      const h = transformGame(g, s);
      const moved = legal.map((m) => transformMove(m, s));
      const hl = h.validMoves();
      assert.deepEqual([...moved].sort(), [...hl].sort());
      encodeHivePosition(h, y, 0, hl);
      const hc = hiveMoveCells(h, moved);
      for (let i = 0; i < legal.length; i++) {
        assert.equal(hc[i * 3 + 2], cells[i * 3 + 2], "same slot");
        for (const k of [0, 1]) {
          const u = cells[i * 3 + k], v = hc[i * 3 + k];
          assert.equal(u < 0, v < 0);
          if (u < 0) continue;
          assert.equal(Math.floor(u / AREA), Math.floor(v / AREA), "same plane");
          // Every per-cell input plane (all but the hand rows) agrees at the two cells.
          for (let pl = 0; pl < PLANE.hand; pl++) {
            assert.equal(at(x, pl, u % AREA), at(y, pl, v % AREA), `plane ${pl}, symmetry ${s}`);
          }
        }
        compared++;
      }
    }
  }
  assert.ok(compared > 3000, `only ${compared} compared`);
});

Deno.test("packMoveCells pads to the widest position with -1 entries", () => {
  const g = new HiveGame("Base");
  const r0 = hiveMoveCellRows(g, g.validMoves());
  g.playString("wS1");
  const r1 = hiveMoveCellRows(g, g.validMoves());
  const { moveCells, moveCellsWidth } = packMoveCells([r0, r1, new Float32Array(0)]);
  const w = Math.max(r0.length, r1.length) / 4;
  assert.equal(moveCellsWidth, w);
  assert.equal(moveCells.length, 3 * w * 4);
  assert.deepEqual([...moveCells.subarray(0, r0.length)], [...r0]);
  assert.ok(moveCells.subarray(r0.length, w * 4).every((v) => v === -1));
  assert.deepEqual([...moveCells.subarray(w * 4, w * 4 + r1.length)], [...r1]);
  assert.ok(moveCells.subarray(2 * w * 4).every((v) => v === -1));
  // Pass: no cell terms, the pass slot.
  assert.deepEqual([...hiveMoveCells(g, [PASS])], [-1, -1, HIVE_CELLS_PASS_SLOT]);
});
