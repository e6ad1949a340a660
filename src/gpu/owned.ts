// GPU memory held for the length of one async pass (a parity check, a tuning pass): a pass can throw
// (a lost device, a failed readback, a shader that fails to compile), and what it allocated must not
// then live on until the device is dropped.

/** Anything that holds GPU memory until destroyed (a buffer, a recorder, a tensor pool). */
export interface Destroyable {
  destroy(): void;
}

/** Hands `x` to the pass's owner, which destroys it when the pass ends; returns `x`. */
export type Own = <T extends Destroyable>(x: T) => T;

/**
 * Runs `pass` and destroys everything it owned when it ends, returned or thrown, the latest first
 * (a recorder before the pool it draws from).
 */
export async function withOwned<T>(pass: (own: Own) => Promise<T>): Promise<T> {
  const owned: Destroyable[] = [];
  const own: Own = (x) => {
    owned.push(x);
    return x;
  };
  try {
    return await pass(own);
  } finally {
    for (let i = owned.length - 1; i >= 0; i--) owned[i].destroy();
  }
}

/**
 * Runs `build`, which makes GPU objects meant to outlive it (a solver's buffers): when it throws,
 * everything it kept is destroyed, the latest first; when it returns, all of it stays alive.
 */
export async function withRollback<T>(build: (keep: Own) => Promise<T>): Promise<T> {
  const kept: Destroyable[] = [];
  const keep: Own = (x) => {
    kept.push(x);
    return x;
  };
  try {
    return await build(keep);
  } catch (e) {
    for (let i = kept.length - 1; i >= 0; i--) kept[i].destroy();
    throw e;
  }
}
