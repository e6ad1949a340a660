// Tensor encoding for the policy/value network (seed 003): a position as 24 planes of 26 x 26, a move
// as an index of OpenSpiel's layout (7 directions x 28 source pieces x 28 reference pieces + pass),
// and the legal-move mask. Plain typed arrays: this module knows nothing about networks.
import type { HiveGame } from "./game.ts";
import { cellQ, cellR, DIR_DQ, DIR_DR, MAX_STACK, NEIGHBOR, NUM_CELLS, ORIGIN } from "./grid.ts";
import { makeMove, movePiece, moveTo, PASS } from "./move.ts";
import { NUM_PIECES, PIECE_BUG, PIECE_COLOR } from "./pieces.ts";

/** Input planes per position. */
export const HIVE_PLANES = 24;
/** Board side of the planes (offset coordinates). */
export const HIVE_BOARD = 26;
/** Values per encoded position. */
export const HIVE_PLANE_SIZE = HIVE_PLANES * HIVE_BOARD * HIVE_BOARD;
/** Directions of the move encoding: the six neighbours of the reference piece, then 6 = on top of it. */
export const HIVE_DIRECTIONS = 7;
/** Policy index of pass. */
export const HIVE_PASS_INDEX = HIVE_DIRECTIONS * NUM_PIECES * NUM_PIECES;
/** Policy size: 7 x 28 x 28 + 1 = 5489. */
export const HIVE_POLICY_SIZE = HIVE_PASS_INDEX + 1;
/** Direction of "on top of the reference piece". */
export const HIVE_DIR_ABOVE = 6;

/** Named planes (0-based), all from the side to move's point of view. */
export const PLANE = {
  /** 0-7: my pieces by bug (Q, S, B, G, A, M, L, P), anywhere in a stack. */
  mine: 0,
  /** 8-15: the opponent's pieces by bug. */
  theirs: 8,
  /** Stack height / 4, capped at 1. */
  height: 16,
  /** Top piece: +1 mine, -1 theirs, 0 empty. */
  topColor: 17,
  /** Cells where I may place a piece now. */
  placements: 18,
  /** Occupied neighbours of my queen / 6 (whole plane). */
  myQueen: 19,
  /** Occupied neighbours of the opponent's queen / 6 (whole plane). */
  theirQueen: 20,
  /** Pinned pieces: single pieces whose removal splits the hive (articulation points). */
  pinned: 21,
  /** Plies played / 100, capped at 1 (whole plane). */
  turn: 22,
  /** Pieces in hand: row b holds my count of bug b over its full count, row 13 + b the opponent's. */
  hand: 23,
} as const;

const BUG_COUNT = [1, 2, 2, 3, 3, 1, 1, 1];
const CENTER = HIVE_BOARD >> 1;

/**
 * Per-cell marks cleared in O(1): a cell is marked in the current generation when its entry equals
 * the number next() returned (the array is zeroed only when the counter wraps).
 */
class CellMarks {
  readonly at = new Int32Array(NUM_CELLS);
  private now = 0;

  /** Starts a new generation, every cell unmarked, and returns its number. */
  next(): number {
    if (++this.now > 0x3fffffff) {
      this.now = 1;
      this.at.fill(0);
    }
    return this.now;
  }
}

// hiveCellPositions' scratch: per board cell, whether the current call has placed it (stamp) and
// its unwrapped axial coordinates; the cells in the order placed; the occupied ones, in the order
// searched.
const placed = new CellMarks();
const atQ = new Int32Array(NUM_CELLS), atR = new Int32Array(NUM_CELLS);
const atOrder = new Int32Array(NUM_CELLS), atTodo = new Int32Array(NUM_CELLS);

/**
 * Axial coordinates of every occupied cell and its neighbours, unwrapped across the torus seam,
 * into atQ/atR; returns how many cells atOrder lists.
 */
function unwrap(g: HiveGame): number {
  const now = placed.next(), atStamp = placed.at;
  let count = 0, todo = 0;
  const place = (c: number, q: number, r: number) => {
    atStamp[c] = now;
    atQ[c] = q;
    atR[c] = r;
    atOrder[count++] = c;
  };
  for (let p = 0; p < NUM_PIECES && todo === 0; p++) {
    const c = g.pieceCell[p];
    if (c < 0) continue;
    place(c, cellQ(c), cellR(c));
    atTodo[todo++] = c;
  }
  if (todo === 0) place(ORIGIN, 0, 0); // empty board: the first piece goes to the origin
  // The occupied cells in the order searched (atTodo is a stack; popped cells are kept after it).
  const occupied: number[] = [];
  while (todo > 0) {
    const c = atTodo[--todo];
    occupied.push(c);
    const q = atQ[c], r = atR[c];
    for (let d = 0; d < 6; d++) {
      const n = NEIGHBOR[c * 6 + d];
      if (g.height[n] === 0 || atStamp[n] === now) continue;
      place(n, q + DIR_DQ[d], r + DIR_DR[d]);
      atTodo[todo++] = n;
    }
  }
  for (const c of occupied) {
    const q = atQ[c], r = atR[c];
    for (let d = 0; d < 6; d++) {
      const n = NEIGHBOR[c * 6 + d];
      if (atStamp[n] !== now) place(n, q + DIR_DQ[d], r + DIR_DR[d]);
    }
  }
  return count;
}

/**
 * Maps cells to plane positions (row * 26 + col, or -1 outside the window): axial coordinates
 * shifted so the hive's centroid is at the centre, then odd-q offset coordinates.
 */
export function hiveCellPositions(g: HiveGame): Map<number, number> {
  const count = unwrap(g);
  let sq = 0, sr = 0, n = 0;
  for (let i = 0; i < count; i++) {
    const c = atOrder[i];
    if (g.height[c] === 0) continue;
    sq += atQ[c];
    sr += atR[c];
    n++;
  }
  const cq = n ? Math.round(sq / n) : 0, cr = n ? Math.round(sr / n) : 0;
  const out = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const c = atOrder[i], q = atQ[c] - cq, r = atR[c] - cr;
    // Odd-q in plane coordinates (odd columns shoved down), the centroid at (CENTER, CENTER).
    const col = q + CENTER, row = r + (col - (col & 1)) / 2 + CENTER - (CENTER - (CENTER & 1)) / 2;
    const inside = col >= 0 && col < HIVE_BOARD && row >= 0 && row < HIVE_BOARD;
    out.set(c, inside ? row * HIVE_BOARD + col : -1);
  }
  return out;
}

// Per board cell, the search (pinnedCells) that last reached it, and that search's stack.
const searched = new CellMarks();
const searchStack = new Int32Array(NUM_CELLS);

// Cells whose single piece is an articulation point of the hive (removing it splits the hive).
function pinnedCells(g: HiveGame, cells: number[]): Set<number> {
  const pinned = new Set<number>();
  for (const cut of cells) {
    if (g.height[cut] !== 1) continue;
    const start = cells.find((c) => c !== cut);
    if (start === undefined) continue;
    const stampNow = searched.next(), seenStamp = searched.at;
    let top = 0, seen = 1;
    searchStack[top++] = start;
    seenStamp[start] = stampNow;
    while (top > 0) {
      const c = searchStack[--top];
      for (let d = 0; d < 6; d++) {
        const nb = NEIGHBOR[c * 6 + d];
        if (nb === cut || g.height[nb] === 0 || seenStamp[nb] === stampNow) continue;
        seenStamp[nb] = stampNow;
        seen++;
        searchStack[top++] = nb;
      }
    }
    if (seen < cells.length - 1) pinned.add(cut);
  }
  return pinned;
}

/**
 * Writes the 24 planes of `g` (side to move's view) into `out` at `offset` (HIVE_PLANE_SIZE values,
 * overwritten; f16 rounds the fractions of planes 19, 20, 22 and 23). Returns the number of occupied cells that fell outside the 26 x 26 window (0 in any
 * real game). `legal` may pass the position's legal moves to avoid generating them again, `pos`
 * its hiveCellPositions (shared with the cells head's move table).
 */
export function encodeHivePosition(
  g: HiveGame,
  out: Float32Array | Float16Array,
  offset = 0,
  legal?: number[],
  pos: Map<number, number> = hiveCellPositions(g),
): number {
  const area = HIVE_BOARD * HIVE_BOARD;
  out.fill(0, offset, offset + HIVE_PLANE_SIZE);
  const me = g.colorToMove;
  const cells = [...pos.keys()].filter((c) => g.height[c] > 0);
  const pinned = pinnedCells(g, cells);
  let clipped = 0;
  for (const c of cells) {
    const at = pos.get(c)!;
    if (at < 0) {
      clipped++;
      continue;
    }
    const h = g.height[c];
    for (let level = 0; level < h; level++) {
      const p = g.stack[c * MAX_STACK + level];
      const plane = (PIECE_COLOR[p] === me ? PLANE.mine : PLANE.theirs) + PIECE_BUG[p];
      out[offset + plane * area + at] = 1;
    }
    out[offset + PLANE.height * area + at] = Math.min(h, 4) / 4;
    out[offset + PLANE.topColor * area + at] = PIECE_COLOR[g.top(c)] === me ? 1 : -1;
    if (pinned.has(c)) out[offset + PLANE.pinned * area + at] = 1;
  }
  for (const m of legal ?? g.validMoves()) {
    if (m === PASS || g.pieceCell[movePiece(m)] >= 0) continue;
    const at = pos.get(moveTo(m)) ?? -1;
    if (at >= 0) out[offset + PLANE.placements * area + at] = 1;
  }
  const fill = (plane: number, v: number) =>
    out.fill(v, offset + plane * area, offset + (plane + 1) * area);
  fill(PLANE.myQueen, g.queenNeighbors(me) / 6);
  fill(PLANE.theirQueen, g.queenNeighbors(1 - me) / 6);
  fill(PLANE.turn, Math.min(g.turn / 100, 1));
  for (const [color, row0] of [[me, 0], [1 - me, 13]]) {
    const counts = new Array(8).fill(0);
    for (const p of g.inHand(color)) counts[PIECE_BUG[p]]++;
    for (let b = 0; b < 8; b++) {
      const start = offset + PLANE.hand * area + (row0 + b) * HIVE_BOARD;
      out.fill(counts[b] / BUG_COUNT[b], start, start + HIVE_BOARD);
    }
  }
  return clipped;
}

// The top piece of `cell` once `moving` has left it, or -1.
function topWithout(g: HiveGame, cell: number, moving: number): number {
  let h = g.height[cell];
  if (h > 0 && g.stack[cell * MAX_STACK + h - 1] === moving) h--;
  return h === 0 ? -1 : g.stack[cell * MAX_STACK + h - 1];
}

/**
 * The policy index of a legal move in `g`: (direction * 28 + piece) * 28 + reference. A climb onto a
 * stack uses direction 6 and the stack's top piece; any other destination uses the lowest-numbered
 * piece on top of a neighbouring stack (the mover excluded) and the direction from it; the first
 * placement of the game references the placed piece itself with direction 0.
 */
export function hiveMoveIndex(g: HiveGame, move: number): number {
  if (move === PASS) return HIVE_PASS_INDEX;
  const p = movePiece(move), to = moveTo(move);
  const onTo = topWithout(g, to, p);
  if (onTo >= 0) return (HIVE_DIR_ABOVE * NUM_PIECES + p) * NUM_PIECES + onTo;
  let ref = -1, dir = 0;
  for (let d = 0; d < 6; d++) {
    const t = topWithout(g, NEIGHBOR[to * 6 + d], p);
    if (t >= 0 && (ref < 0 || t < ref)) {
      ref = t;
      dir = (d + 3) % 6; // `to` lies in direction d+3 of its neighbour in direction d
    }
  }
  if (ref < 0) ref = p;
  return (dir * NUM_PIECES + p) * NUM_PIECES + ref;
}

/** The packed move a policy index names in `g` (check it against the legal moves), or -1 if none. */
export function hiveIndexMove(g: HiveGame, index: number): number {
  if (index === HIVE_PASS_INDEX) return PASS;
  if (!(index >= 0 && index < HIVE_PASS_INDEX)) return -1;
  const ref = index % NUM_PIECES, p = Math.floor(index / NUM_PIECES) % NUM_PIECES;
  const dir = Math.floor(index / (NUM_PIECES * NUM_PIECES));
  const refCell = g.pieceCell[ref];
  if (ref === p && refCell < 0) {
    // Only the first placement references the placed piece itself.
    return dir === 0 && g.pieceCell.every((c) => c < 0) ? makeMove(p, ORIGIN) : -1;
  }
  if (refCell < 0) return -1;
  return makeMove(p, dir === HIVE_DIR_ABOVE ? refCell : NEIGHBOR[refCell * 6 + dir]);
}

/**
 * Writes the legal-move mask of `g` (1 at each legal move's index, 0 elsewhere; HIVE_POLICY_SIZE
 * values) into `out` at `offset`, and returns the legal moves in the order generated.
 */
export function hiveLegalMask(
  g: HiveGame,
  out: Float32Array,
  offset = 0,
  legal?: number[],
): number[] {
  out.fill(0, offset, offset + HIVE_POLICY_SIZE);
  const moves = legal ?? g.validMoves();
  for (const m of moves) out[offset + hiveMoveIndex(g, m)] = 1;
  return moves;
}
