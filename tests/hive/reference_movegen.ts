// A deliberately naive Hive move generator written straight from the rules (string-keyed maps,
// a flood fill for every One Hive check), used only as an independent oracle in tests.
import type { HiveGame } from "../../src/hive/game.ts";
import { cellAt, neighbor } from "../../src/hive/grid.ts";
import { makeMove, PASS } from "../../src/hive/move.ts";
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
  PILLBUG,
  QUEEN,
  SPIDER,
} from "../../src/hive/pieces.ts";

type Hex = [number, number];
const DIRS: Hex[] = [[0, -1], [1, -1], [1, 0], [0, 1], [-1, 1], [-1, 0]];
const key = (h: Hex) => `${h[0]},${h[1]}`;
const add = (h: Hex, d: Hex): Hex => [h[0] + d[0], h[1] + d[1]];

class RefBoard {
  stacks = new Map<string, number[]>();
  where = new Map<number, Hex>();

  height(h: Hex): number {
    return this.stacks.get(key(h))?.length ?? 0;
  }
  top(h: Hex): number {
    const s = this.stacks.get(key(h));
    return s && s.length ? s[s.length - 1] : -1;
  }
  remove(p: number): Hex {
    const h = this.where.get(p)!;
    const s = this.stacks.get(key(h))!;
    s.pop();
    if (s.length === 0) this.stacks.delete(key(h));
    this.where.delete(p);
    return h;
  }
  put(p: number, h: Hex): void {
    const k = key(h);
    if (!this.stacks.has(k)) this.stacks.set(k, []);
    this.stacks.get(k)!.push(p);
    this.where.set(p, h);
  }
  /** True when all occupied hexes form one connected group. */
  connected(): boolean {
    const cells = [...this.stacks.keys()];
    if (cells.length === 0) return true;
    const seen = new Set([cells[0]]);
    const todo = [cells[0].split(",").map(Number) as Hex];
    while (todo.length) {
      const h = todo.pop()!;
      for (const d of DIRS) {
        const n = add(h, d);
        if (this.height(n) && !seen.has(key(n))) {
          seen.add(key(n));
          todo.push(n);
        }
      }
    }
    return seen.size === cells.length;
  }
}

/** Can a piece go from `a` (standing at level ha) to neighbour `b` (landing on height hb)? */
function canStep(b: RefBoard, a: Hex, dir: number, ha: number, hb: number): boolean {
  const g1 = b.height(add(a, DIRS[(dir + 5) % 6])), g2 = b.height(add(a, DIRS[(dir + 1) % 6]));
  if (Math.min(g1, g2) > Math.max(ha, hb)) return false; // a gate too high to pass
  // On the ground, the piece must keep touching the hive while it moves.
  if (ha === 0 && hb === 0 && g1 === 0 && g2 === 0) return false;
  return true;
}

function slides(b: RefBoard, from: Hex): Hex[] {
  const out: Hex[] = [];
  DIRS.forEach((d, i) => {
    const n = add(from, d);
    if (b.height(n) === 0 && canStep(b, from, i, 0, 0)) out.push(n);
  });
  return out;
}

function pieceMoves(b: RefBoard, p: number, bug: number, level: number): Hex[] {
  const start = b.where.get(p)!;
  const res: Hex[] = [];
  if (bug === BEETLE || (bug === MOSQUITO && level > 0)) {
    b.remove(p);
    DIRS.forEach((d, i) => {
      const n = add(start, d);
      if (canStep(b, start, i, level, b.height(n))) res.push(n);
    });
    b.put(p, start);
    return res;
  }
  if (bug === MOSQUITO) {
    const types = new Set<number>();
    for (const d of DIRS) {
      const t = b.top(add(start, d));
      if (t >= 0 && PIECE_BUG[t] !== MOSQUITO) types.add(PIECE_BUG[t]);
    }
    for (const t of types) res.push(...pieceMoves(b, p, t, 0));
    return res;
  }
  b.remove(p);
  if (bug === QUEEN || bug === PILLBUG) res.push(...slides(b, start));
  if (bug === SPIDER) {
    const walk = (path: Hex[]): void => {
      if (path.length === 4) {
        res.push(path[3]);
        return;
      }
      for (const n of slides(b, path[path.length - 1])) {
        if (!path.some((h) => key(h) === key(n))) walk([...path, n]);
      }
    };
    walk([start]);
  }
  if (bug === ANT) {
    const seen = new Set([key(start)]);
    const todo = [start];
    while (todo.length) {
      for (const n of slides(b, todo.pop()!)) {
        if (!seen.has(key(n))) {
          seen.add(key(n));
          todo.push(n);
          res.push(n);
        }
      }
    }
  }
  if (bug === GRASSHOPPER) {
    for (const d of DIRS) {
      let n = add(start, d);
      if (!b.height(n)) continue;
      while (b.height(n)) n = add(n, d);
      res.push(n);
    }
  }
  if (bug === LADYBUG) {
    DIRS.forEach((d1, i1) => {
      const x = add(start, d1);
      if (!b.height(x) || !canStep(b, start, i1, 0, b.height(x))) return;
      DIRS.forEach((d2, i2) => {
        const y = add(x, d2);
        if (!b.height(y) || !canStep(b, x, i2, b.height(x), b.height(y))) return;
        DIRS.forEach((d3, i3) => {
          const z = add(y, d3);
          if (!b.height(z) && key(z) !== key(start) && canStep(b, y, i3, b.height(y), 0)) {
            res.push(z);
          }
        });
      });
    });
  }
  b.put(p, start);
  return res;
}

/** Pieces next to the pillbug at `pc` that it may throw, with their landing hexes. */
function throws(b: RefBoard, pc: Hex, last: number): [number, Hex][] {
  const out: [number, Hex][] = [];
  DIRS.forEach((d, i) => {
    const nc = add(pc, d);
    if (b.height(nc) !== 1) return;
    const n = b.top(nc);
    if (n === last) return;
    b.remove(n);
    const ok = b.connected();
    b.put(n, nc);
    if (!ok || !canStep(b, nc, (i + 3) % 6, 0, b.height(pc))) return;
    b.remove(n);
    DIRS.forEach((_, j) => {
      const z = add(pc, DIRS[j]);
      if (!b.height(z) && key(z) !== key(nc) && canStep(b, pc, j, 1, 0)) out.push([n, z]);
    });
    b.put(n, nc);
  });
  return out;
}

/** The legal moves of `g` by the naive rules, as a sorted array of packed moves. */
export function referenceMoves(g: HiveGame): number[] {
  if (g.isOver()) return [];
  // Rebuild the board with unbounded coordinates by walking out from one piece.
  const b = new RefBoard();
  const coord = new Map<number, Hex>();
  const first = g.pieces()[0];
  if (first) {
    coord.set(first.cell, [first.q, first.r]);
    const todo = [first.cell];
    while (todo.length) {
      const c = todo.pop()!;
      const h = coord.get(c)!;
      for (let d = 0; d < 6; d++) {
        const n = neighbor(c, d);
        if (g.height[n] && !coord.has(n)) {
          coord.set(n, add(h, DIRS[d]));
          todo.push(n);
        }
      }
    }
    const byLevel = g.pieces().sort((x, y) => x.level - y.level);
    for (const p of byLevel) b.put(p.piece, coord.get(p.cell)!);
  }
  const color = g.turn & 1;
  const mine = [...Array(NUM_PIECES).keys()].filter((p) =>
    PIECE_COLOR[p] === color && g.enabled[p]
  );
  const inHand = (p: number) => !b.where.has(p);
  const canPlace = (p: number) => inHand(p) && (PIECE_PREV[p] < 0 || !inHand(PIECE_PREV[p]));
  const moves = new Set<number>();
  const emit = (p: number, h: Hex) => moves.add(makeMove(p, cellAt(h[0], h[1])));
  const turnOfPlayer = 1 + (g.turn >> 1);
  const queen = mine.find((p) => PIECE_BUG[p] === QUEEN)!;
  for (const p of mine.filter(canPlace)) {
    if (turnOfPlayer === 1 && p === queen) continue;
    if (turnOfPlayer === 4 && inHand(queen) && p !== queen) continue;
    if (g.turn === 0) emit(p, [0, 0]);
    else if (g.turn === 1) { for (const d of DIRS) emit(p, d); }
    else {
      for (const [k, s] of b.stacks) {
        if (PIECE_COLOR[s[s.length - 1]] !== color) continue;
        const h = k.split(",").map(Number) as Hex;
        for (const d of DIRS) {
          const n = add(h, d);
          if (b.height(n)) continue;
          const enemy = DIRS.some((e) => {
            const t = b.top(add(n, e));
            return t >= 0 && PIECE_COLOR[t] !== color;
          });
          if (!enemy) emit(p, n);
        }
      }
    }
  }
  if (!inHand(queen)) {
    for (const p of mine) {
      if (inHand(p) || p === g.lastMoved) continue;
      const h = b.where.get(p)!;
      if (b.top(h) !== p) continue;
      const level = b.height(h) - 1;
      let free = true;
      if (level === 0) {
        b.remove(p);
        free = b.connected();
        b.put(p, h);
      }
      const bug = PIECE_BUG[p];
      if (free) { for (const to of pieceMoves(b, p, bug, level)) emit(p, to); }
      const touchesPillbug = DIRS.some((d) => {
        const t = b.top(add(h, d));
        return t >= 0 && PIECE_BUG[t] === PILLBUG;
      });
      if (bug === PILLBUG || (bug === MOSQUITO && level === 0 && touchesPillbug)) {
        for (const [n, to] of throws(b, h, g.lastMoved)) emit(n, to);
      }
    }
  }
  if (moves.size === 0) moves.add(PASS);
  return [...moves].sort((x, y) => x - y);
}
