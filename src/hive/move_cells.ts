// The move table of the "cells" policy head (docs/cells_head.md, Hive convention): each legal move scored
// from the head's per-cell planes at its destination and origin cells plus a per-kind bias, so a
// move is named by where it goes, not by which pieces it involves (translation equivariant). The
// cells are the encoding's own board-cell -> plane-cell mapping (hiveCellPositions), so whatever
// symmetry was applied before encoding, the planes and the table agree.
import type { HiveGame } from "./game.ts";
import { HIVE_BOARD, hiveCellPositions, hiveMoveIndex } from "./encoding.ts";
import { movePiece, moveTo, PASS } from "./move.ts";
import { PIECE_BUG } from "./pieces.ts";

/** The cells head of the Hive player (planes 0-7 destinations, 8-15 origins; 17 biases). */
export const HIVE_CELLS = { hidden: 16, planes: 16, biases: 17 } as const;
/** Bias slot of pass (slots 0-7: placements by bug, 8-15: movements by bug). */
export const HIVE_CELLS_PASS_SLOT = 16;
/** Values per move in a NetBatch move table: (moveIndex, a, b, slot). */
export const HIVE_CELL_ENTRY = 4;

const AREA = HIVE_BOARD * HIVE_BOARD;

/**
 * The (a, b, slot) triple of every legal move, aligned with `legal` (3 ints per move, for
 * FastInference): a = destination plane cell (plane = the moved piece's bug), b = origin plane cell
 * (plane 8 + bug; -1 for a placement), slot = bug (placement), 8 + bug (movement) or 16 (pass); a
 * cell outside the 26 x 26 window is -1. `pos` may pass hiveCellPositions(g) when already computed.
 */
export function hiveMoveCells(
  g: HiveGame,
  legal: number[],
  out: Int32Array = new Int32Array(legal.length * 3),
  pos: Map<number, number> = hiveCellPositions(g),
): Int32Array {
  for (let i = 0; i < legal.length; i++) {
    const m = legal[i];
    if (m === PASS) {
      out[i * 3] = -1;
      out[i * 3 + 1] = -1;
      out[i * 3 + 2] = HIVE_CELLS_PASS_SLOT;
      continue;
    }
    const p = movePiece(m), bug = PIECE_BUG[p], from = g.pieceCell[p];
    const to = pos.get(moveTo(m)) ?? -1;
    out[i * 3] = to < 0 ? -1 : bug * AREA + to;
    if (from < 0) {
      out[i * 3 + 1] = -1;
      out[i * 3 + 2] = bug;
    } else {
      const at = pos.get(from) ?? -1;
      out[i * 3 + 1] = at < 0 ? -1 : (8 + bug) * AREA + at;
      out[i * 3 + 2] = 8 + bug;
    }
  }
  return out;
}

/**
 * One position's NetBatch move-table entries: 4 values per legal move, (hiveMoveIndex, a, b, slot)
 * as f32, in `legal`'s order.
 */
export function hiveMoveCellRows(
  g: HiveGame,
  legal: number[],
  pos: Map<number, number> = hiveCellPositions(g),
): Float32Array {
  const cells = hiveMoveCells(g, legal, undefined, pos);
  const rows = new Float32Array(legal.length * HIVE_CELL_ENTRY);
  for (let i = 0; i < legal.length; i++) {
    rows[i * 4] = hiveMoveIndex(g, legal[i]);
    rows[i * 4 + 1] = cells[i * 3];
    rows[i * 4 + 2] = cells[i * 3 + 1];
    rows[i * 4 + 3] = cells[i * 3 + 2];
  }
  return rows;
}

/**
 * Packs per-position entries (hiveMoveCellRows) into a batch's table: NetBatch.moveCells of shape
 * [positions, width, 4], width = the most moves of any position (at least 1), padded with
 * (-1, -1, -1, -1) entries.
 */
export function packMoveCells(
  rows: ArrayLike<number>[],
): { moveCells: Float32Array; moveCellsWidth: number } {
  let width = 1;
  for (const r of rows) width = Math.max(width, r.length / HIVE_CELL_ENTRY);
  const moveCells = new Float32Array(rows.length * width * HIVE_CELL_ENTRY).fill(-1);
  rows.forEach((r, n) => moveCells.set(r, n * width * HIVE_CELL_ENTRY));
  return { moveCells, moveCellsWidth: width };
}
