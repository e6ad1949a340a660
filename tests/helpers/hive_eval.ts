// Comparing two Hive evaluators' answers on the same position (the fast path against its oracle).
import { ok } from "node:assert/strict";

/** One evaluation: priors aligned with the legal moves, and the value. */
export interface EvaluationLike {
  priors: ArrayLike<number>;
  value: number;
}

/** Asserts that value and every prior agree within tol, naming the first that does not. */
export function assertSameEvaluation(a: EvaluationLike, b: EvaluationLike, tol = 1e-5): void {
  ok(Math.abs(a.value - b.value) < tol, `value ${a.value} vs ${b.value}`);
  ok(a.priors.length === b.priors.length, `${a.priors.length} vs ${b.priors.length} priors`);
  for (let i = 0; i < a.priors.length; i++) {
    ok(Math.abs(a.priors[i] - b.priors[i]) < tol, `prior ${i}: ${a.priors[i]} vs ${b.priors[i]}`);
  }
}
