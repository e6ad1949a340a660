// Shared by the fuzz suites: every generated case must end in a result or a KibitzError.
import { KibitzError } from "../../src/errors.ts";

/** Fixed seed and case counts: the fuzz suites are deterministic and fast in CI. */
export const FUZZ_SEED = 20261126;

/** Runs `f`; a KibitzError is a clear error (fine), anything else thrown fails the property. */
export function settle<T>(f: () => T): { ok: true; value: T } | { ok: false; error: KibitzError } {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof KibitzError) return { ok: false, error: e };
    throw e;
  }
}

/** The async twin of settle. */
export async function settleAsync<T>(
  f: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: KibitzError }> {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    if (e instanceof KibitzError) return { ok: false, error: e };
    throw e;
  }
}
