/** A throttled single-line progress reporter for long jobs (stderr, redrawn in place on a TTY). */
export class Progress {
  private last = -Infinity;
  private readonly start = performance.now();
  private readonly tty: boolean;
  private readonly encoder = new TextEncoder();

  constructor(private readonly label: string, private readonly intervalMs = 250) {
    this.tty = Deno.stderr.isTerminal();
  }

  /** Seconds since the reporter was created. */
  elapsed(): number {
    return (performance.now() - this.start) / 1000;
  }

  /** Prints `text` if the throttle interval has passed (or `force`). */
  update(text: string, force = false): void {
    const now = performance.now();
    if (!force && now - this.last < this.intervalMs) return;
    this.last = now;
    const line = `${this.label}: ${text}`;
    Deno.stderr.writeSync(this.encoder.encode(this.tty ? `\r\x1b[2K${line}` : `${line}\n`));
  }

  /** Ends the progress line. */
  done(text: string): void {
    this.update(text, true);
    if (this.tty) Deno.stderr.writeSync(this.encoder.encode("\n"));
  }
}
