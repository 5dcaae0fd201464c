/**
 * A process's view of the data's generation, as one token: equal tokens mean that nothing an answer can depend on
 * changed in between. Two things move it: a new change log sequence (any write of any process or node), and a
 * scheduled record falling due (its effective status turns to `publish` with no write at all). Engines feed it the
 * latest sequence they read; it asks for the next due time only when one of the two moved.
 */
export class GenerationTracker {
  private seq = -1;
  private epoch = 0;
  private nextDue: string | null = null;

  advance(seq: number, nowUtc: string, nextDue: () => string | null): string {
    if (seq !== this.seq) {
      this.seq = seq;
      this.nextDue = nextDue();
    } else if (this.nextDue !== null && nowUtc >= this.nextDue) {
      this.epoch++;
      this.nextDue = nextDue();
    }
    return `${this.seq}.${this.epoch}`;
  }
}

/** The current UTC time as the data layer writes times (`YYYY-MM-DD HH:MM:SS`). */
export function utcNowWire(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}
