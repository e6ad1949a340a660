// The hex grid: a 32x32 axial torus. A connected hive of at most 28 pieces spans fewer than 32
// cells along each axis, so wrapping never makes two cells of one position collide.

/** Cells per side of the torus. */
export const GRID_SIZE = 32;
/** Number of cells. */
export const NUM_CELLS = GRID_SIZE * GRID_SIZE;
/** Maximum stack height kept per cell (1 ground piece + 6 climbers fits in 8). */
export const MAX_STACK = 8;

/**
 * Directions in Mzinga's order, named as UHP draws them (pointy-top hexes):
 * 0 NW (`\X`), 1 NE (`X/`), 2 E (`X-`), 3 SE (`X\`), 4 SW (`/X`), 5 W (`-X`).
 * Direction d+3 is opposite d; d+1 and d-1 are the two cells shared by a cell and its d neighbour.
 */
export const DIR_NW = 0, DIR_NE = 1, DIR_E = 2, DIR_SE = 3, DIR_SW = 4, DIR_W = 5;
/** Axial (q, r) offsets of the six directions. */
export const DIR_DQ: readonly number[] = [0, 1, 1, 0, -1, -1];
/** Axial (q, r) offsets of the six directions. */
export const DIR_DR: readonly number[] = [-1, -1, 0, 1, 1, 0];

/** Packs axial coordinates (any integers) into a cell index on the torus. */
export function cellAt(q: number, r: number): number {
  return (q & (GRID_SIZE - 1)) | ((r & (GRID_SIZE - 1)) << 5);
}

/** The q coordinate of a cell, in [-16, 15]. */
export function cellQ(cell: number): number {
  return ((cell & 31) ^ 16) - 16;
}

/** The r coordinate of a cell, in [-16, 15]. */
export function cellR(cell: number): number {
  return (((cell >> 5) & 31) ^ 16) - 16;
}

/** NEIGHBOR[cell * 6 + d]: the cell next to `cell` in direction d (flat table for hot loops). */
export const NEIGHBOR: Int16Array = new Int16Array(NUM_CELLS * 6);
for (let c = 0; c < NUM_CELLS; c++) {
  const q = c & 31, r = c >> 5;
  for (let d = 0; d < 6; d++) NEIGHBOR[c * 6 + d] = cellAt(q + DIR_DQ[d], r + DIR_DR[d]);
}

/** The cell next to `cell` in direction `d` (0..5). */
export function neighbor(cell: number, d: number): number {
  return NEIGHBOR[cell * 6 + d];
}

/** The origin cell, where the first piece is placed. */
export const ORIGIN = 0;
