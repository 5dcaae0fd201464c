/**
 * The database generation as seen by this process, read with as few round trips as exactness allows: a request
 * needs a reading that started after it arrived (an older one could miss a write acknowledged just before). A
 * reading starts once the requests read from the network with the first one have been seen (after the current turn
 * of the event loop), or once the reading in flight is done: every request arriving meanwhile shares it. Under load,
 * one round trip serves every request that arrived during the previous one.
 */
export class CoalescedReader<T> {
  private inflight: Promise<T> | null = null;
  /** The reading that has not started yet: it starts after every request that joins it arrived. */
  private next: Promise<T> | null = null;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.next === null) {
      const start = () => this.start();
      this.next = (this.inflight ?? new Promise<void>((resolve) => setImmediate(resolve))).then(start, start);
    }
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
