// Move generation for every bug, following the rules as Mzinga implements them. Works on the
// game's flat arrays; scratch arrays live at module level (generation is not re-entrant).
import type { HiveGame } from "./game.ts";
import { MAX_STACK, NEIGHBOR as NB, NUM_CELLS, ORIGIN } from "./grid.ts";
import {
  ANT,
  BEETLE,
  GRASSHOPPER,
  LADYBUG,
  MOSQUITO,
  NUM_PIECES,
  PIECE_BUG,
  PIECE_COLOR,
  PIECE_PREV,
  PIECES_PER_COLOR,
  PILLBUG,
  QUEEN,
  SPIDER,
} from "./pieces.ts";
import { PASS } from "./move.ts";

const LEFT = [5, 0, 1, 2, 3, 4];
const RIGHT = [1, 2, 3, 4, 5, 0];

/** For a 6-bit mask of occupied neighbours: the directions a ground piece can slide to. */
const SLIDE_DIRS = new Uint8Array(64);
/** For a 6-bit mask of occupied neighbours: 1 when they form one contiguous arc (never pinned). */
const ONE_ARC = new Uint8Array(64);
for (let m = 0; m < 64; m++) {
  let dirs = 0, changes = 0;
  for (let d = 0; d < 6; d++) {
    const l = (m >> LEFT[d]) & 1, r = (m >> RIGHT[d]) & 1;
    if (((m >> d) & 1) === 0 && l !== r) dirs |= 1 << d;
    if (((m >> d) & 1) !== ((m >> RIGHT[d]) & 1)) changes++;
  }
  SLIDE_DIRS[m] = dirs;
  ONE_ARC[m] = changes <= 2 ? 1 : 0;
}

const moveMark = new Uint32Array(NUM_PIECES * NUM_CELLS);
let moveStamp = 0;
const cellMark = new Uint32Array(NUM_CELLS);
let cellStamp = 0;
const queue = new Int16Array(NUM_CELLS);
const placeCells = new Int16Array(NUM_CELLS);
const apMark = new Uint32Array(NUM_CELLS);
const seen = new Uint32Array(NUM_CELLS);
const disc = new Int32Array(NUM_CELLS);
const low = new Int32Array(NUM_CELLS);
let apStamp = 0;
let apReady = false;
let dfsTime = 0;

let OUT: Int32Array = new Int32Array(0);
let N = 0;
let H: Uint8Array = new Uint8Array(0);
let S: Int8Array = new Int8Array(0);

function add(piece: number, to: number): void {
  const k = piece * NUM_CELLS + to;
  if (moveMark[k] !== moveStamp) {
    moveMark[k] = moveStamp;
    OUT[N++] = (piece << 10) | to;
  }
}

function nextCellStamp(): number {
  if (++cellStamp === 0xffffffff) {
    cellMark.fill(0);
    cellStamp = 1;
  }
  return cellStamp;
}

function top(cell: number): number {
  return S[cell * MAX_STACK + H[cell] - 1];
}

/** Tarjan's articulation points over occupied cells (recursion depth is at most 28). */
function dfs(u: number, parent: number): void {
  seen[u] = apStamp;
  disc[u] = low[u] = ++dfsTime;
  let children = 0;
  const b = u * 6;
  for (let d = 0; d < 6; d++) {
    const v = NB[b + d];
    if (H[v] === 0) continue;
    if (seen[v] !== apStamp) {
      children++;
      dfs(v, u);
      if (low[v] < low[u]) low[u] = low[v];
      if (parent !== -1 && low[v] >= disc[u]) apMark[u] = apStamp;
    } else if (v !== parent && disc[v] < low[u]) {
      low[u] = disc[v];
    }
  }
  if (parent === -1 && children > 1) apMark[u] = apStamp;
}

function computeArticulation(g: HiveGame): void {
  apReady = true;
  if (++apStamp === 0xffffffff) {
    apMark.fill(0);
    seen.fill(0);
    apStamp = 1;
  }
  dfsTime = 0;
  for (let p = 0; p < NUM_PIECES; p++) {
    const c = g.pieceCell[p];
    if (c >= 0) {
      dfs(c, -1);
      return;
    }
  }
}

function ringMask(c: number): number {
  const b = c * 6;
  return (H[NB[b]] !== 0 ? 1 : 0) | (H[NB[b + 1]] !== 0 ? 2 : 0) | (H[NB[b + 2]] !== 0 ? 4 : 0) |
    (H[NB[b + 3]] !== 0 ? 8 : 0) | (H[NB[b + 4]] !== 0 ? 16 : 0) | (H[NB[b + 5]] !== 0 ? 32 : 0);
}

/** True when the ground piece alone at `cell` cannot leave without splitting the hive. */
function pinnedCell(g: HiveGame, cell: number): boolean {
  if (ONE_ARC[ringMask(cell)]) return false; // neighbours stay connected around it
  if (!apReady) computeArticulation(g);
  return apMark[cell] === apStamp;
}

function gateOk(c: number, d: number, level: number, dh: number): boolean {
  const b = c * 6;
  const lh = H[NB[b + LEFT[d]]], rh = H[NB[b + RIGHT[d]]];
  if (level === 0 && dh === 0 && lh === 0 && rh === 0) return false;
  return !(dh < lh && dh < rh && level < lh && level < rh);
}

function oneStep(p: number, s: number): void {
  const dirs = SLIDE_DIRS[ringMask(s)];
  const b = s * 6;
  for (let d = 0; d < 6; d++) if ((dirs >> d) & 1) add(p, NB[b + d]);
}

function spiderStep(p: number, s: number, last: number, cur: number, rem: number): void {
  if (rem === 0) {
    add(p, cur);
    return;
  }
  const dirs = SLIDE_DIRS[ringMask(cur)];
  const b = cur * 6;
  for (let d = 0; d < 6; d++) {
    if (((dirs >> d) & 1) === 0) continue;
    const n = NB[b + d];
    if (n !== last && n !== s) spiderStep(p, s, cur, n, rem - 1);
  }
}

function antMoves(p: number, s: number): void {
  const st = nextCellStamp();
  cellMark[s] = st;
  queue[0] = s;
  let head = 0, tail = 1;
  while (head < tail) {
    const c = queue[head++];
    const dirs = SLIDE_DIRS[ringMask(c)];
    const b = c * 6;
    for (let d = 0; d < 6; d++) {
      if (((dirs >> d) & 1) === 0) continue;
      const n = NB[b + d];
      if (cellMark[n] === st) continue;
      cellMark[n] = st;
      add(p, n);
      queue[tail++] = n;
    }
  }
}

function grasshopperMoves(p: number, s: number): void {
  for (let d = 0; d < 6; d++) {
    let n = NB[s * 6 + d];
    if (H[n] === 0) continue;
    while (H[n] !== 0) n = NB[n * 6 + d];
    add(p, n);
  }
}

function beetleMoves(p: number, c: number, level: number): void {
  const b = c * 6;
  for (let d = 0; d < 6; d++) {
    const n = NB[b + d];
    if (gateOk(c, d, level, H[n])) add(p, n);
  }
}

function ladybugMoves(p: number, s: number): void {
  const bs = s * 6;
  for (let d1 = 0; d1 < 6; d1++) {
    const x = NB[bs + d1];
    const hx = H[x];
    if (hx === 0 || !gateOk(s, d1, 0, hx)) continue;
    const bx = x * 6;
    for (let d2 = 0; d2 < 6; d2++) {
      const y = NB[bx + d2];
      const hy = H[y];
      if (hy === 0 || !gateOk(x, d2, hx, hy)) continue;
      const by = y * 6;
      for (let d3 = 0; d3 < 6; d3++) {
        const z = NB[by + d3];
        if (H[z] === 0 && z !== s && gateOk(y, d3, hy, 0)) add(p, z);
      }
    }
  }
}

/** Pillbug ability from `pc`: lift an adjacent lone, unpinned piece over itself to an empty cell. */
function pillbugThrows(g: HiveGame, pc: number): void {
  const last = g.lastMoved;
  const bp = pc * 6;
  for (let d = 0; d < 6; d++) {
    const nc = NB[bp + d];
    if (H[nc] !== 1) continue;
    const n = S[nc * MAX_STACK];
    if (n === last || pinnedCell(g, nc)) continue;
    // Climb from nc onto the pillbug (height 1): blocked by a gate of two stacks of 2+.
    const dd = (d + 3) % 6;
    const bn = nc * 6;
    if (H[NB[bn + LEFT[dd]]] > 1 && H[NB[bn + RIGHT[dd]]] > 1) continue;
    H[nc] = 0;
    for (let d2 = 0; d2 < 6; d2++) {
      const z = NB[bp + d2];
      if (H[z] !== 0 || z === nc) continue;
      if (H[NB[bp + LEFT[d2]]] > 1 && H[NB[bp + RIGHT[d2]]] > 1) continue;
      add(n, z);
    }
    H[nc] = 1;
  }
}

function placementCount(g: HiveGame, color: number): number {
  const st = nextCellStamp();
  let k = 0;
  const base = color * PIECES_PER_COLOR;
  for (let p = base; p < base + PIECES_PER_COLOR; p++) {
    const c = g.pieceCell[p];
    if (c < 0 || top(c) !== p) continue;
    const b = c * 6;
    for (let d = 0; d < 6; d++) {
      const n = NB[b + d];
      if (H[n] !== 0 || cellMark[n] === st) continue;
      cellMark[n] = st;
      const bn = n * 6;
      let ok = true;
      for (let d2 = 0; d2 < 6; d2++) {
        const m = NB[bn + d2];
        if (H[m] !== 0 && PIECE_COLOR[top(m)] !== color) {
          ok = false;
          break;
        }
      }
      if (ok) placeCells[k++] = n;
    }
  }
  return k;
}

function pieceMoves(g: HiveGame, p: number): void {
  const c = g.pieceCell[p];
  const level = g.pieceLevel[p];
  const bug = PIECE_BUG[p];
  const pinned = level === 0 && pinnedCell(g, c);
  if (pinned) {
    if (bug === PILLBUG) pillbugThrows(g, c);
    else if (bug === MOSQUITO) {
      const b = c * 6;
      for (let d = 0; d < 6; d++) {
        const n = NB[b + d];
        if (H[n] !== 0 && PIECE_BUG[top(n)] === PILLBUG) {
          pillbugThrows(g, c);
          break;
        }
      }
    }
    return;
  }
  let types = 1 << bug;
  if (bug === MOSQUITO) {
    if (level > 0) types = 1 << BEETLE;
    else {
      types = 0;
      const b = c * 6;
      for (let d = 0; d < 6; d++) {
        const n = NB[b + d];
        if (H[n] !== 0) types |= 1 << PIECE_BUG[top(n)];
      }
      types &= ~(1 << MOSQUITO);
    }
  }
  H[c]--; // lift the piece while its own moves are searched
  if (types & ((1 << QUEEN) | (1 << PILLBUG))) oneStep(p, c);
  if (types & (1 << SPIDER)) spiderStep(p, c, c, c, 3);
  if (types & (1 << BEETLE)) beetleMoves(p, c, level);
  if (types & (1 << GRASSHOPPER)) grasshopperMoves(p, c);
  if (types & (1 << ANT)) antMoves(p, c);
  if (types & (1 << LADYBUG)) ladybugMoves(p, c);
  H[c]++;
  if (types & (1 << PILLBUG)) pillbugThrows(g, c);
}

/**
 * Writes the legal moves of `g` into `out` from index `start` and returns how many; a lone PASS
 * when nothing else is legal, none when the game is over. Moves are unique by (piece, destination).
 */
export function generateMoves(g: HiveGame, out: Int32Array, start: number): number {
  OUT = out;
  N = start;
  H = g.height;
  S = g.stack;
  apReady = false;
  if (++moveStamp === 0xffffffff) {
    moveMark.fill(0);
    moveStamp = 1;
  }
  if (g.isOver()) return 0;
  const turn = g.turn;
  const color = turn & 1;
  const base = color * PIECES_PER_COLOR;
  const enabled = g.enabled;
  const cellOf = g.pieceCell;
  if (turn < 2) {
    for (let p = base + 1; p < base + PIECES_PER_COLOR; p++) {
      if (!enabled[p] || PIECE_PREV[p] >= 0) continue;
      if (turn === 0) add(p, ORIGIN);
      else for (let d = 0; d < 6; d++) add(p, NB[ORIGIN * 6 + d]);
    }
    return N - start;
  }
  const queenInPlay = cellOf[base] >= 0;
  const mustQueen = !queenInPlay && turn >> 1 === 3;
  let places = -1;
  for (let p = base; p < base + PIECES_PER_COLOR; p++) {
    if (!enabled[p] || cellOf[p] >= 0) continue;
    const prev = PIECE_PREV[p];
    if (prev >= 0 && cellOf[prev] < 0) continue;
    if (mustQueen && p !== base) continue;
    if (places < 0) places = placementCount(g, color);
    for (let i = 0; i < places; i++) add(p, placeCells[i]);
  }
  if (queenInPlay) {
    const last = g.lastMoved;
    for (let p = base; p < base + PIECES_PER_COLOR; p++) {
      const c = cellOf[p];
      if (c < 0 || p === last || top(c) !== p) continue;
      pieceMoves(g, p);
    }
  }
  if (N === start) OUT[N++] = PASS;
  return N - start;
}
