// Perft: counts the leaves of the legal-move tree, the standard oracle for move generators.
import type { HiveGame } from "./game.ts";

const PLY_STRIDE = 2048;

/** Counts the move-tree leaves `depth` plies below the current position (bulk-counts the last ply). */
export function perft(g: HiveGame, depth: number, buffer?: Int32Array): number {
  if (depth <= 0) return 1;
  const buf = buffer ?? new Int32Array(PLY_STRIDE * depth);
  return perftAt(g, depth, buf, 0);
}

function perftAt(g: HiveGame, depth: number, buf: Int32Array, start: number): number {
  const n = g.generate(buf, start);
  if (depth === 1) return n;
  let total = 0;
  const next = start + n;
  for (let i = start; i < next; i++) {
    g.play(buf[i]);
    total += perftAt(g, depth - 1, buf, next);
    g.undo();
  }
  return total;
}

/** Perft split by first move: [moveString, count] per legal move, in generation order. */
export function perftDivide(g: HiveGame, depth: number): [string, number][] {
  const out: [string, number][] = [];
  if (depth <= 0) return out;
  const buf = new Int32Array(PLY_STRIDE * depth);
  for (const m of g.validMoves()) {
    const s = g.moveString(m);
    g.play(m, s);
    out.push([s, perft(g, depth - 1, buf)]);
    g.undo();
  }
  return out;
}

class PerftTimeout extends Error {}

/**
 * Perft that gives up once `timeMs` has passed: returns the count, or null when stopped (the game
 * is left as it was). For callers that must stay responsive, such as the UHP engine's `perft`.
 */
export function perftWithin(g: HiveGame, depth: number, timeMs: number): number | null {
  if (depth <= 0) return 1;
  const deadline = performance.now() + timeMs;
  const start = g.historyLength;
  const buf = new Int32Array(PLY_STRIDE * depth);
  let calls = 0;
  const walk = (d: number, at: number): number => {
    if ((++calls & 255) === 0 && performance.now() > deadline) throw new PerftTimeout();
    const n = g.generate(buf, at);
    if (d === 1) return n;
    let total = 0;
    const next = at + n;
    for (let i = at; i < next; i++) {
      g.play(buf[i]);
      total += walk(d - 1, next);
      g.undo();
    }
    return total;
  };
  try {
    return walk(depth, 0);
  } catch (e) {
    if (!(e instanceof PerftTimeout)) throw e;
    while (g.historyLength > start) g.undo();
    return null;
  }
}
