/** What one write of a batch came to: its value, or its error (its promise settles with it once the batch is durable). */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A queued write's promise, settled once its batch is made. */
export interface Settles {
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * The queue of a group commit, the same on both engines: writes wait in it while a batch is being made, and the next
 * batch takes every write that arrived meanwhile. `commit` makes one batch and settles each of its writes.
 */
export abstract class WriteBatches<P extends Settles> {
  private queue: P[] = [];
  private running = false;
  /** The batches being made, while there are any. */
  private flushing: Promise<void> = Promise.resolve();

  /** Makes one batch: every write of it is settled by the time this resolves, and it never rejects. */
  protected abstract commit(batch: P[]): Promise<void>;

  /** Queues a write for the next batch; resolves or rejects as `commit` settles it. */
  protected enqueue<T>(pending: Omit<P, keyof Settles>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ ...pending, resolve: resolve as (value: unknown) => void, reject } as P);
      if (!this.running) this.flushing = this.flush();
    });
  }

  /** No batch is being made, and none waits. */
  get idle(): boolean {
    return !this.running && this.queue.length === 0;
  }

  /**
   * Resolves once every write queued so far (and any queued while they run) has settled: a process that stops waits
   * for it before it closes the connections, so a write it took in is made or refused, never cut off halfway.
   */
  async settled(): Promise<void> {
    while (this.running) await this.flushing;
  }

  private async flush(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // after the poll phase: every request read meanwhile joins this batch
        await new Promise((resolve) => setImmediate(resolve));
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
    } finally {
      this.running = false;
    }
  }
}
