// GPU memory held for the length of one async pass (a parity check, a tuning pass) or built by one
// (a solver's buffers): a pass can throw (a lost device, a failed readback, a shader that fails to
// compile), and what it allocated must not then live on until the device is dropped.

/** Anything that holds GPU memory until destroyed (a buffer, a recorder, a tensor pool). */
export interface Destroyable {
  destroy(): void;
}

/** Hands `x` to the pass's owner, which destroys it when the pass ends; returns `x`. */
export type Own = <T extends Destroyable>(x: T) => T;

/** A list of owned objects and the function that destroys them all, the latest first. */
function ownership(): { own: Own; destroyAll: () => void } {
  const owned: Destroyable[] = [];
  return {
    own: (x) => {
      owned.push(x);
      return x;
    },
    destroyAll: () => {
      for (let i = owned.length - 1; i >= 0; i--) owned[i].destroy();
      owned.length = 0;
    },
  };
}

/**
 * Runs `pass` and destroys everything it owned when it ends, returned or thrown, the latest first
 * (a recorder before the pool it draws from).
 */
export async function withOwned<T>(pass: (own: Own) => Promise<T>): Promise<T> {
  const { own, destroyAll } = ownership();
  try {
    return await pass(own);
  } finally {
    destroyAll();
  }
}

/**
 * Runs `build`, which makes GPU objects meant to outlive it (a solver's buffers): when it throws,
 * everything it kept is destroyed, the latest first; when it returns, all of it stays alive.
 */
export async function withRollback<T>(build: (keep: Own) => Promise<T>): Promise<T> {
  const { own, destroyAll } = ownership();
  try {
    return await build(own);
  } catch (e) {
    destroyAll();
    throw e;
  }
}
