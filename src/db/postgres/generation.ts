/**
 * The database generation as seen by this process, read with as few round trips as exactness allows: a request
 * needs a reading that started after it arrived (an older one could miss a write acknowledged just before), so
 * requests arriving while a reading is in flight share the next one, and under load one round trip serves every
 * request that arrived during the previous one.
 */
export class CoalescedReader<T> {
  private inflight: Promise<T> | null = null;
  private next: Promise<T> | null = null;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.inflight === null) return this.start();
    // a reading is under way but may have started before this request: join the one that starts after it
    this.next ??= this.inflight.then(() => this.start(), () => this.start());
    return this.next;
  }

  private start(): Promise<T> {
    this.next = null;
    const reading = this.read();
    this.inflight = reading;
    const clear = () => {
      if (this.inflight === reading) this.inflight = null;
    };
    reading.then(clear, clear);
    return reading;
  }
}
