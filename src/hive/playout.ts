// Deterministic random playouts: reproducible mid-game positions for benchmarks and tests.
import { HiveGame } from "./game.ts";

/** xorshift32 PRNG returning floats in [0, 1); the same seed gives the same sequence. */
export function xorshift32(seed: number): () => number {
  let s = seed >>> 0 || 0x9e3779b9;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

/** Plays up to `plies` uniformly random legal moves from the start (stops early if the game ends). */
export function randomGame(gameType: string | number, plies: number, seed: number): HiveGame {
  const g = new HiveGame(gameType);
  const rand = xorshift32(seed);
  const buf = new Int32Array(4096);
  for (let i = 0; i < plies && !g.isOver(); i++) {
    const n = g.generate(buf, 0);
    g.play(buf[Math.floor(rand() * n)]);
  }
  return g;
}
