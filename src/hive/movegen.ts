// Move generation for every bug, following the rules as Mzinga implements them. Works on the
// game's flat arrays; its scratch arrays belong to a MoveGenerator instance (no module state).
import type { HiveBoard } from "./board.ts";
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

/**
 * Move generation with its scratch state (marks, queues, articulation points) held in the instance,
 * not in the module. `generate` runs to completion and what it leaves behind (stamps) is never read
 * as data by a later call, so games may share one generator; give a game (or a search on another
 * thread of work) its own to keep the scratch memory apart.
 */
export class MoveGenerator {
  private readonly moveMark = new Uint32Array(NUM_PIECES * NUM_CELLS);
  private moveStamp = 0;
  private readonly cellMark = new Uint32Array(NUM_CELLS);
  private cellStamp = 0;
  private readonly queue = new Int16Array(NUM_CELLS);
  private readonly placeCells = new Int16Array(NUM_CELLS);
  private readonly apMark = new Uint32Array(NUM_CELLS);
  private readonly seen = new Uint32Array(NUM_CELLS);
  private readonly disc = new Int32Array(NUM_CELLS);
  private readonly low = new Int32Array(NUM_CELLS);
  private apStamp = 0;
  private apReady = false;
  private dfsTime = 0;
  private out: Int32Array = new Int32Array(0);
  private n = 0;
  private H: Uint8Array = new Uint8Array(0);
  private S: Int8Array = new Int8Array(0);
  private g: HiveBoard | null = null;

  /**
   * Writes the legal moves of `g` into `out` from index `start` and returns how many; a lone PASS
   * when nothing else is legal, none when the game is over. Moves are unique by (piece, destination).
   */
  generate(g: HiveBoard, out: Int32Array, start: number): number {
    this.g = g;
    this.out = out;
    this.n = start;
    const H = this.H = g.height;
    this.S = g.stack;
    this.apReady = false;
    if (++this.moveStamp === 0xffffffff) {
      this.moveMark.fill(0);
      this.moveStamp = 1;
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
        if (turn === 0) this.add(p, ORIGIN);
        else for (let d = 0; d < 6; d++) this.add(p, NB[ORIGIN * 6 + d]);
      }
      return this.n - start;
    }
    const queenInPlay = cellOf[base] >= 0;
    const mustQueen = !queenInPlay && turn >> 1 === 3;
    let places = -1;
    for (let p = base; p < base + PIECES_PER_COLOR; p++) {
      if (!enabled[p] || cellOf[p] >= 0) continue;
      const prev = PIECE_PREV[p];
      if (prev >= 0 && cellOf[prev] < 0) continue;
      if (mustQueen && p !== base) continue;
      if (places < 0) places = this.placementCount(color);
      for (let i = 0; i < places; i++) this.add(p, this.placeCells[i]);
    }
    if (queenInPlay) {
      const last = g.lastMoved;
      const S = this.S;
      for (let p = base; p < base + PIECES_PER_COLOR; p++) {
        const c = cellOf[p];
        if (c < 0 || p === last || S[c * MAX_STACK + H[c] - 1] !== p) continue;
        this.pieceMoves(p);
      }
    }
    if (this.n === start) out[this.n++] = PASS;
    return this.n - start;
  }

  private add(piece: number, to: number): void {
    const k = piece * NUM_CELLS + to;
    if (this.moveMark[k] !== this.moveStamp) {
      this.moveMark[k] = this.moveStamp;
      this.out[this.n++] = (piece << 10) | to;
    }
  }

  private nextCellStamp(): number {
    if (++this.cellStamp === 0xffffffff) {
      this.cellMark.fill(0);
      this.cellStamp = 1;
    }
    return this.cellStamp;
  }

  private top(cell: number): number {
    return this.S[cell * MAX_STACK + this.H[cell] - 1];
  }

  /** Tarjan's articulation points over occupied cells (recursion depth is at most 28). */
  private dfs(u: number, parent: number): void {
    const H = this.H, seen = this.seen, disc = this.disc, low = this.low, stamp = this.apStamp;
    seen[u] = stamp;
    disc[u] = low[u] = ++this.dfsTime;
    let children = 0;
    const b = u * 6;
    for (let d = 0; d < 6; d++) {
      const v = NB[b + d];
      if (H[v] === 0) continue;
      if (seen[v] !== stamp) {
        children++;
        this.dfs(v, u);
        if (low[v] < low[u]) low[u] = low[v];
        if (parent !== -1 && low[v] >= disc[u]) this.apMark[u] = stamp;
      } else if (v !== parent && disc[v] < low[u]) {
        low[u] = disc[v];
      }
    }
    if (parent === -1 && children > 1) this.apMark[u] = stamp;
  }

  private computeArticulation(): void {
    this.apReady = true;
    if (++this.apStamp === 0xffffffff) {
      this.apMark.fill(0);
      this.seen.fill(0);
      this.apStamp = 1;
    }
    this.dfsTime = 0;
    const cellOf = this.g!.pieceCell;
    for (let p = 0; p < NUM_PIECES; p++) {
      const c = cellOf[p];
      if (c >= 0) {
        this.dfs(c, -1);
        return;
      }
    }
  }

  private ringMask(c: number): number {
    const H = this.H, b = c * 6;
    return (H[NB[b]] !== 0 ? 1 : 0) | (H[NB[b + 1]] !== 0 ? 2 : 0) | (H[NB[b + 2]] !== 0 ? 4 : 0) |
      (H[NB[b + 3]] !== 0 ? 8 : 0) | (H[NB[b + 4]] !== 0 ? 16 : 0) | (H[NB[b + 5]] !== 0 ? 32 : 0);
  }

  /** True when the ground piece alone at `cell` cannot leave without splitting the hive. */
  private pinnedCell(cell: number): boolean {
    if (ONE_ARC[this.ringMask(cell)]) return false; // neighbours stay connected around it
    if (!this.apReady) this.computeArticulation();
    return this.apMark[cell] === this.apStamp;
  }

  private gateOk(c: number, d: number, level: number, dh: number): boolean {
    const H = this.H, b = c * 6;
    const lh = H[NB[b + LEFT[d]]], rh = H[NB[b + RIGHT[d]]];
    if (level === 0 && dh === 0 && lh === 0 && rh === 0) return false;
    return !(dh < lh && dh < rh && level < lh && level < rh);
  }

  private oneStep(p: number, s: number): void {
    const dirs = SLIDE_DIRS[this.ringMask(s)];
    const b = s * 6;
    for (let d = 0; d < 6; d++) if ((dirs >> d) & 1) this.add(p, NB[b + d]);
  }

  private spiderStep(p: number, s: number, last: number, cur: number, rem: number): void {
    if (rem === 0) {
      this.add(p, cur);
      return;
    }
    const dirs = SLIDE_DIRS[this.ringMask(cur)];
    const b = cur * 6;
    for (let d = 0; d < 6; d++) {
      if (((dirs >> d) & 1) === 0) continue;
      const n = NB[b + d];
      if (n !== last && n !== s) this.spiderStep(p, s, cur, n, rem - 1);
    }
  }

  private antMoves(p: number, s: number): void {
    const st = this.nextCellStamp();
    const cellMark = this.cellMark, queue = this.queue;
    cellMark[s] = st;
    queue[0] = s;
    let head = 0, tail = 1;
    while (head < tail) {
      const c = queue[head++];
      const dirs = SLIDE_DIRS[this.ringMask(c)];
      const b = c * 6;
      for (let d = 0; d < 6; d++) {
        if (((dirs >> d) & 1) === 0) continue;
        const n = NB[b + d];
        if (cellMark[n] === st) continue;
        cellMark[n] = st;
        this.add(p, n);
        queue[tail++] = n;
      }
    }
  }

  private grasshopperMoves(p: number, s: number): void {
    const H = this.H;
    for (let d = 0; d < 6; d++) {
      let n = NB[s * 6 + d];
      if (H[n] === 0) continue;
      while (H[n] !== 0) n = NB[n * 6 + d];
      this.add(p, n);
    }
  }

  private beetleMoves(p: number, c: number, level: number): void {
    const H = this.H, b = c * 6;
    for (let d = 0; d < 6; d++) {
      const n = NB[b + d];
      if (this.gateOk(c, d, level, H[n])) this.add(p, n);
    }
  }

  private ladybugMoves(p: number, s: number): void {
    const H = this.H, bs = s * 6;
    for (let d1 = 0; d1 < 6; d1++) {
      const x = NB[bs + d1];
      const hx = H[x];
      if (hx === 0 || !this.gateOk(s, d1, 0, hx)) continue;
      const bx = x * 6;
      for (let d2 = 0; d2 < 6; d2++) {
        const y = NB[bx + d2];
        const hy = H[y];
        if (hy === 0 || !this.gateOk(x, d2, hx, hy)) continue;
        const by = y * 6;
        for (let d3 = 0; d3 < 6; d3++) {
          const z = NB[by + d3];
          if (H[z] === 0 && z !== s && this.gateOk(y, d3, hy, 0)) this.add(p, z);
        }
      }
    }
  }

  /** Pillbug ability from `pc`: lift an adjacent lone, unpinned piece over itself to an empty cell. */
  private pillbugThrows(pc: number): void {
    const H = this.H, S = this.S;
    const last = this.g!.lastMoved;
    const bp = pc * 6;
    for (let d = 0; d < 6; d++) {
      const nc = NB[bp + d];
      if (H[nc] !== 1) continue;
      const n = S[nc * MAX_STACK];
      if (n === last || this.pinnedCell(nc)) continue;
      // Climb from nc onto the pillbug (height 1): blocked by a gate of two stacks of 2+.
      const dd = (d + 3) % 6;
      const bn = nc * 6;
      if (H[NB[bn + LEFT[dd]]] > 1 && H[NB[bn + RIGHT[dd]]] > 1) continue;
      H[nc] = 0;
      for (let d2 = 0; d2 < 6; d2++) {
        const z = NB[bp + d2];
        if (H[z] !== 0 || z === nc) continue;
        if (H[NB[bp + LEFT[d2]]] > 1 && H[NB[bp + RIGHT[d2]]] > 1) continue;
        this.add(n, z);
      }
      H[nc] = 1;
    }
  }

  private placementCount(color: number): number {
    const H = this.H, cellMark = this.cellMark, cellOf = this.g!.pieceCell;
    const st = this.nextCellStamp();
    let k = 0;
    const base = color * PIECES_PER_COLOR;
    for (let p = base; p < base + PIECES_PER_COLOR; p++) {
      const c = cellOf[p];
      if (c < 0 || this.top(c) !== p) continue;
      const b = c * 6;
      for (let d = 0; d < 6; d++) {
        const n = NB[b + d];
        if (H[n] !== 0 || cellMark[n] === st) continue;
        cellMark[n] = st;
        const bn = n * 6;
        let ok = true;
        for (let d2 = 0; d2 < 6; d2++) {
          const m = NB[bn + d2];
          if (H[m] !== 0 && PIECE_COLOR[this.top(m)] !== color) {
            ok = false;
            break;
          }
        }
        if (ok) this.placeCells[k++] = n;
      }
    }
    return k;
  }

  private pieceMoves(p: number): void {
    const H = this.H, g = this.g!;
    const c = g.pieceCell[p];
    const level = g.pieceLevel[p];
    const bug = PIECE_BUG[p];
    const pinned = level === 0 && this.pinnedCell(c);
    if (pinned) {
      if (bug === PILLBUG) this.pillbugThrows(c);
      else if (bug === MOSQUITO) {
        const b = c * 6;
        for (let d = 0; d < 6; d++) {
          const n = NB[b + d];
          if (H[n] !== 0 && PIECE_BUG[this.top(n)] === PILLBUG) {
            this.pillbugThrows(c);
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
          if (H[n] !== 0) types |= 1 << PIECE_BUG[this.top(n)];
        }
        types &= ~(1 << MOSQUITO);
      }
    }
    H[c]--; // lift the piece while its own moves are searched
    if (types & ((1 << QUEEN) | (1 << PILLBUG))) this.oneStep(p, c);
    if (types & (1 << SPIDER)) this.spiderStep(p, c, c, c, 3);
    if (types & (1 << BEETLE)) this.beetleMoves(p, c, level);
    if (types & (1 << GRASSHOPPER)) this.grasshopperMoves(p, c);
    if (types & (1 << ANT)) this.antMoves(p, c);
    if (types & (1 << LADYBUG)) this.ladybugMoves(p, c);
    H[c]++;
    if (types & (1 << PILLBUG)) this.pillbugThrows(c);
  }
}
