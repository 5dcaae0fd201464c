/** At most `size` holders at once; the others wait, first come, first served. */
export class Turns {
  private held = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Callers waiting for a turn now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Whether a turn is free now (a `take` would not wait). */
  get free(): boolean {
    return this.held < this.size;
  }

  /** Resolves once the caller holds a turn, with the function that ends it. */
  async take(): Promise<() => void> {
    if (this.held < this.size) this.held++;
    else await new Promise<void>((resolve) => this.queue.push(resolve));
    return () => {
      // the turn passes straight to the next in line, so `held` counts it throughout
      const next = this.queue.shift();
      if (next) next();
      else this.held--;
    };
  }
}
