// Turns of the event loop for long loops whose work never waits on I/O (a CPU net's training steps,
// a CPU solve's iterations): only in such a turn do signal handlers (Ctrl-C, SIGTERM) run.

/** How often a long loop lets the event loop turn, in ms. */
export const TURN_EVERY_MS = 50;

/**
 * A long loop's turns of the event loop: between steps, `if (turns.due) await turns.turn()`. Not
 * due, it costs no await (so no microtask turn either: steps in flight stay as they were).
 */
export class EventLoopTurns {
  private last = performance.now();

  constructor(readonly ms = TURN_EVERY_MS) {}

  /** Whether `ms` have passed since the last turn. */
  get due(): boolean {
    return performance.now() - this.last > this.ms;
  }

  /** Lets the event loop turn once (timers, signal handlers). */
  async turn(): Promise<void> {
    await new Promise((r) => setTimeout(r, 0));
    this.last = performance.now();
  }
}
