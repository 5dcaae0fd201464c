/**
 * Identical asynchronous reads asked for at once run once: a call with the key of one still in flight shares its
 * promise. A key must name everything the result depends on (for a read of the data, its generation).
 */
export class InFlight<K, V> {
  private readonly pending = new Map<K, Promise<V>>();

  run(key: K, work: () => Promise<V>): Promise<V> {
    let shared = this.pending.get(key);
    if (shared === undefined) {
      shared = work().finally(() => this.pending.delete(key));
      this.pending.set(key, shared);
    }
    return shared;
  }
}
