/**
 * Hex coordinates for record conversion: axial (q, r) with q growing East and r growing
 * South-East, packed into one integer key so positions can live in Maps and typed arrays.
 */

/** Axial offsets in UHP direction order: E, SE, SW, W, NW, NE. */
export const HEX_DQ = [1, 0, -1, -1, 0, 1] as const;
/** Axial offsets in UHP direction order: E, SE, SW, W, NW, NE. */
export const HEX_DR = [0, 1, 1, 0, -1, -1] as const;

const BIAS = 1 << 14;
const SPAN = 1 << 15;

/** Packs axial (q, r) into a non-negative integer key. */
export function hexKey(q: number, r: number): number {
  return (q + BIAS) * SPAN + (r + BIAS);
}

/** The q coordinate of a packed key. */
export function hexQ(key: number): number {
  return Math.floor(key / SPAN) - BIAS;
}

/** The r coordinate of a packed key. */
export function hexR(key: number): number {
  return (key % SPAN) - BIAS;
}

/** The key of the neighbour of `key` in direction `dir` (0..5, E SE SW W NW NE). */
export function hexNeighbor(key: number, dir: number): number {
  return key + HEX_DQ[dir] * SPAN + HEX_DR[dir];
}

/** The direction (0..5) from `from` to its neighbour `to`, or -1 when they are not adjacent. */
export function hexDirection(from: number, to: number): number {
  for (let d = 0; d < 6; d++) if (hexNeighbor(from, d) === to) return d;
  return -1;
}

/**
 * Converts a boardspace.net coordinate (column letter, row number) to a hex key.
 * Boardspace neighbours are E(+1,0) NE(+1,+1) SE(0,-1) W(-1,0) SW(-1,-1) NW(0,+1) in
 * (column, row), which is axial q = column, r = -row. Returns -1 for a malformed coordinate.
 */
export function boardspaceHex(column: string, row: string): number {
  if (column.length !== 1 || !/^\d{1,4}$/.test(row)) return -1;
  const c = column.toUpperCase().charCodeAt(0) - 65;
  if (c < 0 || c >= 26) return -1;
  return hexKey(c, -Number(row));
}

/** Formats a hex key as a boardspace coordinate such as `N 13` (for messages and tests). */
export function formatBoardspaceHex(key: number): string {
  const q = hexQ(key);
  const col = q >= 0 && q < 26 ? String.fromCharCode(65 + q) : `#${q}`;
  return `${col} ${-hexR(key)}`;
}
