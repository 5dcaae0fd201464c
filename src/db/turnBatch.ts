/** A call waiting in a TurnBatch, with what settles its promise. */
export interface Pending<C, R> {
  call: C;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

/**
 * The calls made during one turn of the event loop, handed together to `flush` once the turn is over (at
 * `setImmediate`), so that what the requests of a turn ask for costs one statement, one socket write or one
 * transaction instead of one each. Every engine's batching of a turn goes through here; each decides in its `flush`
 * how its calls are made together, and settles every call it is given. Should `flush` throw, the calls it has not
 * settled are rejected with that error (a promise settles once: those it settled keep their answer), so no caller
 * waits forever.
 */
export class TurnBatch<C, R> {
  private pending: Pending<C, R>[] = [];

  constructor(private readonly flush: (calls: Pending<C, R>[]) => void | Promise<void>) {}

  add(call: C): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.pending.push({ call, resolve, reject }) === 1) setImmediate(() => this.flushPending());
    });
  }

  private flushPending(): void {
    const calls = this.pending;
    this.pending = [];
    const failed = (err: unknown) => {
      for (const { reject } of calls) reject(err);
    };
    try {
      const done = this.flush(calls);
      if (done) done.catch(failed);
    } catch (err) {
      failed(err);
    }
  }
}
