// What the search asks of a network: priors over the legal moves and a value. The batched network
// evaluator lives in src/alphazero; here are the interface, a uniform evaluator (tests, baselines)
// and a bounded cache keyed by the position hash.
import type { Game } from "./game.ts";

/** A position's evaluation: priors aligned with the legal moves given, value for the side to move. */
export interface Evaluation {
  priors: Float32Array;
  value: number;
}

/**
 * Evaluates positions for the search. `evaluate` must read everything it needs from `game` before
 * it returns (the search plays on after the call); the promise may resolve later, so an
 * implementation is free to gather many requests into one network call.
 */
export interface Evaluator<M> {
  evaluate(game: Game<M>, moves: M[]): Promise<Evaluation>;
}

/** Equal priors and value 0: search guided only by exact terminal values. */
export class UniformEvaluator<M> implements Evaluator<M> {
  /** Positions evaluated. */
  calls = 0;

  /** Uniform priors over `moves`, value 0. */
  evaluate(_game: Game<M>, moves: M[]): Promise<Evaluation> {
    this.calls++;
    return Promise.resolve({
      priors: new Float32Array(moves.length).fill(1 / Math.max(1, moves.length)),
      value: 0,
    });
  }
}

/**
 * Wraps an evaluator with a cache keyed by the position hash, bounded to `capacity` entries (the
 * oldest inserted is dropped first). Requests for a position already in flight share its promise.
 * A cached entry whose move count differs from the request (a hash collision) is treated as a miss.
 */
export class CachedEvaluator<M> implements Evaluator<M> {
  private readonly map = new Map<number, { n: number; p: Promise<Evaluation> }>();
  hits = 0;
  misses = 0;

  constructor(readonly inner: Evaluator<M>, readonly capacity = 200_000) {}

  /** Cached evaluation, or the inner evaluator's (then remembered). */
  evaluate(game: Game<M>, moves: M[]): Promise<Evaluation> {
    const key = game.hash();
    const hit = this.map.get(key);
    if (hit && hit.n === moves.length) {
      this.hits++;
      return hit.p;
    }
    this.misses++;
    const p = this.inner.evaluate(game, moves);
    if (this.capacity > 0) {
      if (hit) this.map.delete(key);
      else if (this.map.size >= this.capacity) this.map.delete(this.map.keys().next().value!);
      this.map.set(key, { n: moves.length, p });
    }
    return p;
  }

  /** Entries held. */
  get size(): number {
    return this.map.size;
  }

  /** Forgets everything (call when the network changes). */
  clear(): void {
    this.map.clear();
  }
}
