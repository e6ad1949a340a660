// Network encoding of Hive positions and moves, checked on every position of the real games.
import assert from "node:assert/strict";
import { HiveGame } from "../../src/hive/game.ts";
import { NEIGHBOR } from "../../src/hive/grid.ts";
import { PASS } from "../../src/hive/move.ts";
import {
  encodeHivePosition,
  HIVE_BOARD,
  HIVE_PASS_INDEX,
  HIVE_PLANE_SIZE,
  HIVE_POLICY_SIZE,
  hiveCellPositions,
  hiveIndexMove,
  hiveLegalMask,
  hiveMoveIndex,
  PLANE,
} from "../../src/hive/encoding.ts";

const DIR = new URL("../fixtures/hive/pgn/", import.meta.url);
const AREA = HIVE_BOARD * HIVE_BOARD;

function games(): { name: string; gameType: string; moves: string[] }[] {
  return [...Deno.readDirSync(DIR)].map((e) => {
    const text = Deno.readTextFileSync(new URL(e.name, DIR));
    return {
      name: e.name,
      gameType: /\[GameType "([^"]+)"\]/.exec(text)![1],
      moves: [...text.matchAll(/^\d+\. (.+)$/gm)].map((m) => m[1].trim()),
    };
  }).sort((a, b) => a.name.localeCompare(b.name));
}

// Odd-q offset neighbours of (row, col): the column parity decides which diagonal rows touch.
function offsetAdjacent(a: number, b: number): boolean {
  const ra = Math.floor(a / HIVE_BOARD), ca = a % HIVE_BOARD;
  const rb = Math.floor(b / HIVE_BOARD), cb = b % HIVE_BOARD;
  if (ca === cb) return Math.abs(ra - rb) === 1;
  if (Math.abs(ca - cb) !== 1) return false;
  return (ca & 1) === 0 ? rb === ra || rb === ra - 1 : rb === ra || rb === ra + 1;
}

Deno.test("policy size is OpenSpiel's 7 x 28 x 28 + pass", () => {
  assert.equal(HIVE_POLICY_SIZE, 5489);
  assert.equal(HIVE_PASS_INDEX, 5488);
  assert.equal(HIVE_PLANE_SIZE, 24 * 26 * 26);
});

Deno.test("every legal move of every real-game position: move -> index -> move, distinct indices, mask", () => {
  let positions = 0, moves = 0;
  const mask = new Float32Array(HIVE_POLICY_SIZE);
  for (const r of games()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      const legal = g.validMoves();
      const seen = new Set<number>();
      for (const m of legal) {
        const i = hiveMoveIndex(g, m);
        assert.ok(i >= 0 && i < HIVE_POLICY_SIZE, `${r.name}: index ${i}`);
        assert.equal(hiveIndexMove(g, i), m, `${r.name} ply ${g.turn}: ${g.moveString(m)} -> ${i}`);
        assert.ok(!seen.has(i), `${r.name} ply ${g.turn}: two moves share index ${i}`);
        seen.add(i);
      }
      hiveLegalMask(g, mask, 0, legal);
      assert.equal(mask.reduce((a, v) => a + v, 0), legal.length);
      const played = g.parseMove(s);
      assert.equal(
        mask[hiveMoveIndex(g, played)],
        1,
        `${r.name}: the played move ${s} is in the mask`,
      );
      positions++;
      moves += legal.length;
      g.playString(s);
    }
  }
  assert.ok(positions > 300, `only ${positions} positions`);
  assert.ok(moves > 10000, `only ${moves} moves`);
});

Deno.test("pass and out-of-range indices", () => {
  const g = new HiveGame("Base");
  assert.equal(hiveMoveIndex(g, PASS), HIVE_PASS_INDEX);
  assert.equal(hiveIndexMove(g, HIVE_PASS_INDEX), PASS);
  assert.equal(hiveIndexMove(g, -1), -1);
  assert.equal(hiveIndexMove(g, HIVE_POLICY_SIZE), -1);
  g.playString("wS1");
  // The first move referenced itself; once a piece is down, a self-reference names nothing.
  assert.equal(hiveIndexMove(g, (0 * 28 + 14) * 28 + 14), -1);
});

Deno.test("planes of every real-game position: hex adjacency kept, counts match the board", () => {
  const x = new Float32Array(HIVE_PLANE_SIZE);
  for (const r of games()) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      const legal = g.validMoves();
      assert.equal(encodeHivePosition(g, x, 0, legal), 0, `${r.name}: pieces outside the window`);
      const pos = hiveCellPositions(g);
      const occupied = [...pos.keys()].filter((c) => g.height[c] > 0);
      for (const c of occupied) {
        for (let d = 0; d < 6; d++) {
          const n = NEIGHBOR[c * 6 + d];
          if (g.height[n] > 0) {
            assert.ok(offsetAdjacent(pos.get(c)!, pos.get(n)!), `${r.name}: adjacency`);
          }
        }
      }
      let tops = 0, mine = 0, theirs = 0, height = 0;
      for (let i = 0; i < AREA; i++) {
        const t = x[PLANE.topColor * AREA + i];
        if (t !== 0) tops++;
        if (t === 1) mine++;
        if (t === -1) theirs++;
        height += x[PLANE.height * AREA + i];
      }
      assert.equal(tops, occupied.length);
      const me = g.colorToMove;
      assert.equal(mine, occupied.filter((c) => (g.top(c) >= 14 ? 1 : 0) === me).length);
      assert.equal(theirs, occupied.length - mine);
      assert.equal(height * 4, occupied.reduce((a, c) => a + Math.min(4, g.height[c]), 0));
      const placements = new Set(
        legal.filter((m) => m !== PASS && g.pieceCell[m >> 10] < 0).map((m) => m & 1023),
      );
      let marked = 0;
      for (let i = 0; i < AREA; i++) marked += x[PLANE.placements * AREA + i];
      assert.equal(marked, placements.size);
      assert.equal(x[PLANE.myQueen * AREA + 5], Math.fround(g.queenNeighbors(me) / 6));
      assert.equal(x[PLANE.turn * AREA], Math.fround(Math.min(g.turn / 100, 1)));
      g.playString(s);
    }
  }
});

Deno.test("encoding into f16 planes gives the f32 encoding rounded to halves", () => {
  const x = new Float32Array(HIVE_PLANE_SIZE);
  // Filled with garbage first: every value is written.
  const h = new Float16Array(2 * HIVE_PLANE_SIZE).fill(7);
  for (const r of games().slice(0, 3)) {
    const g = new HiveGame(r.gameType);
    for (const s of r.moves) {
      encodeHivePosition(g, x, 0);
      encodeHivePosition(g, h, HIVE_PLANE_SIZE);
      assert.deepEqual(h.subarray(HIVE_PLANE_SIZE), new Float16Array(x), r.name);
      g.playString(s);
    }
  }
  assert.ok(h.subarray(0, HIVE_PLANE_SIZE).every((v) => v === 7), "nothing before the offset");
});

Deno.test("planes are from the side to move: my pieces, pinned pieces, hand counts", () => {
  // A line bS1 - wQ - wS1 ... built from UHP moves: the middle piece is the only articulation point.
  const g = new HiveGame("Base");
  g.playString("wS1");
  g.playString("bS1 wS1-");
  g.playString("wQ -wS1");
  const x = new Float32Array(HIVE_PLANE_SIZE);
  encodeHivePosition(g, x);
  const pos = hiveCellPositions(g);
  const at = (p: number) => pos.get(g.pieceCell[p])!;
  // Black to move: black's pieces are "mine" (bug 1 = spider), white's queen and spider "theirs".
  assert.equal(x[(PLANE.mine + 1) * AREA + at(15)], 1);
  assert.equal(x[(PLANE.theirs + 0) * AREA + at(0)], 1);
  assert.equal(x[(PLANE.theirs + 1) * AREA + at(1)], 1);
  assert.equal(x[PLANE.topColor * AREA + at(15)], 1);
  assert.equal(x[PLANE.topColor * AREA + at(1)], -1);
  const pinned = [...x.subarray(PLANE.pinned * AREA, (PLANE.pinned + 1) * AREA)];
  assert.equal(pinned.reduce((a, v) => a + v, 0), 1);
  assert.equal(pinned[at(1)], 1, "the middle spider holds the hive together");
  // Hand rows: mine (black) has 1 of 2 spiders left and its queen; theirs (white) row 13 + bug.
  const hand = (row: number) => x[PLANE.hand * AREA + row * HIVE_BOARD];
  assert.equal(hand(0), 1);
  assert.equal(hand(1), 0.5);
  assert.equal(hand(13 + 0), 0);
  assert.equal(hand(13 + 1), 0.5);
  assert.equal(hand(13 + 4), 1);
});
