import pg from 'pg';

/** The channel migration 0015 notifies when the change log or the lock-out's counts move. */
export const CHANGED_CHANNEL = 'almanac_changed';

/** How long a round trip on the listening connection may take before the connection is given up (then: read the log). */
const FENCE_TIMEOUT_MS = 5_000;
/** How long after a failed connection attempt the next one is made (meanwhile every request reads the log). */
const RETRY_MS = 1_000;

/**
 * Whether anything moved in the shared database since this node last read its change log, known without reading it.
 * A connection of its own listens on `almanac_changed`. PostgreSQL sends a listening session every notification
 * committed before a statement began ahead of that statement's answer: once an empty statement on this connection has
 * been answered with no notification seen, nothing was committed to the log before that statement was sent. That is
 * as exact as reading the log: a write acknowledged to anyone had committed before. Any doubt (not listening yet, the
 * connection lost, a round trip failed or slow) counts as moved, and the engine reads the log as it always can.
 */
export class ChangeSignal {
  private client: pg.Client | null = null;
  private connecting = false;
  /** Set by every notification, and whenever listening (re)starts; cleared by `reset`. */
  private moved = true;
  private retryAt = 0;
  private closed = false;

  constructor(private readonly url: string) {}

  /**
   * True when nothing moved since the last `reset`, as of a moment after this call began. Starts listening (in the
   * background) when not listening yet.
   */
  async quiet(): Promise<boolean> {
    const client = this.client;
    if (client === null) {
      this.listen();
      return false;
    }
    try {
      await client.query('');
    } catch {
      this.drop(client);
      return false;
    }
    return this.client === client && !this.moved;
  }

  /**
   * Called just before the change log is read: whatever moves from now on will be noticed (once listening: this
   * starts it, in the background, when it has not started yet).
   */
  reset(): void {
    this.moved = false;
    if (this.client === null) this.listen();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private listen(): void {
    if (this.connecting || this.closed || Date.now() < this.retryAt) return;
    this.connecting = true;
    const client = new pg.Client({ connectionString: this.url, application_name: 'almanac-listen', keepAlive: true, pipeline: true, query_timeout: FENCE_TIMEOUT_MS, connectionTimeoutMillis: FENCE_TIMEOUT_MS });
    client.on('notification', () => {
      this.moved = true;
    });
    // a connection that breaks while idle emits here; without a listener Node would end the process
    client.on('error', () => this.drop(client));
    client.on('end', () => this.drop(client));
    void (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${CHANGED_CHANNEL}`);
        if (this.closed) throw new Error('closed');
        // what was committed before listening began is known only from a reading of the log
        this.moved = true;
        this.client = client;
      } catch {
        this.retryAt = Date.now() + RETRY_MS;
        client.end().catch(() => undefined);
      } finally {
        this.connecting = false;
      }
    })();
  }

  /** Gives up the listening connection (a client still connecting is ended by `listen` itself). */
  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    this.moved = true;
    client.end().catch(() => undefined);
  }
}
