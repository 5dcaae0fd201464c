import type { Statement } from 'better-sqlite3';
import { DateTime } from 'luxon';
import { existsSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { workerScript } from '../../paths.js';
import { Turns } from '../../turns.js';
import type { Engine, Repositories, WriteUnit } from '../engine.js';
import { StorageFull } from '../../errors.js';
import { storageFault } from '../faults.js';
import { ChangeSet, MAX_CHANGES_READ, recordingReads, recordingWrites, type ChangeTracker, type ReadSet } from '../changes.js';
import { boundedEventList } from '../listQueries.js';
import type { EventListQuery } from '../records.js';
import { CoalescedReader, GenerationTracker, readChanges, utcNowWire } from '../generation.js';
import { lockoutPathOf, SqliteLockout } from './authFailures.js';
import { DEFAULT_READ_MMAP_BYTES, openDatabase, openInMemory, openReadOnly, type Db } from './connection.js';
import { GroupCommit } from './groupCommit.js';
import { SqliteMedia } from './media.js';
import { migrate, schemaVersionOf } from './migrate.js';
import { nextScheduledOf, SqlitePosts, TurnReads } from './posts.js';
import { IdleMerges } from './idleMerges.js';
import { ReadThreads } from './readThreads.js';
import { COUNT, SqliteTerms } from './terms.js';
import { SqliteUsers } from './users.js';

export interface SqliteOptions {
  /** Worker threads for costly reads (lists, searches, feeds); 0 runs them on the event loop. */
  readThreads?: number;
  /** The most (address, account) pairs the lock-out keeps (ALMANAC_AUTH_TRACKED_PAIRS). */
  trackedPairs?: number;
  /** How much of the file each read connection maps (ALMANAC_SQLITE_MMAP_MB), in bytes; 0 maps nothing. */
  mmapBytes?: number;
}

/**
 * The repositories of one connection (their statements are prepared once, for that connection); `together`: where
 * its reads by key join the other calls of their turn (read connections only).
 */
export function repositoriesOf(db: Db, together: TurnReads | null = null): Repositories {
  const terms = new SqliteTerms(db);
  const media = new SqliteMedia(db);
  return { posts: new SqlitePosts(db, { terms, media }, together), terms, users: new SqliteUsers(db), media };
}


/**
 * Makes what was written to a file durable: an fsync on libuv's threads, through a handle kept open. The write-ahead
 * log stays the same file while a connection (the writer) has the database open; should it be another file all the
 * same (its path names another inode, checked beside each sync), the new one is opened and synced.
 */
class FileSync {
  private handle: { file: FileHandle; ino: number; dev: number } | null = null;

  constructor(private readonly path: string) {}

  async sync(): Promise<void> {
    const held = this.handle ?? (this.handle = await this.open());
    const [, now] = await Promise.all([held.file.sync(), stat(this.path)]);
    if (now.ino === held.ino && now.dev === held.dev) return;
    this.handle = null;
    await held.file.close();
    await this.sync();
  }

  async close(): Promise<void> {
    await this.handle?.file.close();
    this.handle = null;
  }

  private async open(): Promise<{ file: FileHandle; ino: number; dev: number }> {
    const file = await open(this.path, 'r+');
    const { ino, dev } = await file.stat();
    return { file, ino, dev };
  }
}

/**
 * The most connections cheap reads hold at once on the event loop (more wait): they rarely overlap there at all.
 * Lists, searches and feeds have connections of their own besides (see `readList`).
 */
const CHEAP_READERS = 8;

/** Change log rows older than this are pruned (a cache that missed that many changes starts afresh anyway). */
const CHANGE_LOG_DAYS = 1;

interface Reader {
  db: Db;
  repos: Repositories;
  begin: Statement;
  commit: Statement;
}

/**
 * The SQLite engine: one file in WAL mode. One connection writes, through the group commit; reads use read-only
 * connections of their own (one snapshot each, `BEGIN … COMMIT`), so a read never sees a batch that is still
 * being written, and costly list queries run in worker threads with connections of their own. Every process that
 * opens the file (workers, the CLI) shares it through SQLite's locks.
 */
export class SqliteEngine implements Engine {
  readonly kind = 'sqlite' as const;
  private readonly writer: Db;
  private readonly writerRepos: Repositories;
  private readonly group: GroupCommit;
  private readonly merges: IdleMerges;
  private readonly idle: Reader[] = [];
  private readers = 0;
  private readonly waiting: ((reader: Reader) => void)[] = [];
  private readonly threads: ReadThreads | null;
  /** Reads by key of the read connections made together per turn, on a connection of their own. */
  private readonly turnReads = new TurnReads(() => {
    const db = openReadOnly(this.path, { mmapBytes: this.mmapBytes });
    return { db, posts: repositoriesOf(db).posts as SqlitePosts };
  });
  /**
   * Turns of the lists, searches and feeds (`readList`): twice as many as read threads (two without), so that a
   * thread always has the next statement waiting while a list whose statement is done renders its page.
   */
  private readonly listTurns: Turns | null;
  private readonly maxReaders: number;
  private readonly probe: Db;
  private readonly walSync: FileSync;
  private readonly termCountsOf: (ids: number[]) => { counts: Map<number, number>; seq: number };
  readonly changes: ChangeTracker;
  private closed = false;
  readonly lockout: SqliteLockout;
  private readonly readings: CoalescedReader<string>;
  private readonly mmapBytes: number;

  private constructor(readonly path: string, writer: Db, options: SqliteOptions, readonly applied: number[]) {
    this.writer = writer;
    this.mmapBytes = options.mmapBytes ?? DEFAULT_READ_MMAP_BYTES;
    this.lockout = new SqliteLockout(lockoutPathOf(path), options.trackedPairs ?? 100_000);
    this.writerRepos = repositoriesOf(writer);
    const appendChange = writer.prepare<[string, string]>('INSERT INTO change_log (changed_utc, tags) VALUES (?, ?)');
    const prune = writer.prepare<[string]>('DELETE FROM change_log WHERE changed_utc < ? AND seq < (SELECT MAX(seq) FROM change_log)');
    let pruned = 0;
    const memory = path === ':memory:';
    this.walSync = new FileSync(`${path}-wal`);
    // a commit writes the log without waiting for the disk, and the batch waits for an fsync of the log made on
    // libuv's threads: as durable as synchronous=FULL, without holding up the event loop for the disk
    if (!memory) writer.pragma('synchronous = NORMAL');
    this.group = new GroupCommit(writer, (changes) => {
      const now = DateTime.utc();
      appendChange.run(wire(now), changes.toString());
      if (now.toMillis() - pruned > 3_600_000) {
        pruned = now.toMillis();
        prune.run(wire(now.minus({ days: CHANGE_LOG_DAYS })));
      }
    }, memory ? null : () => this.walSync.sync());
    this.merges = new IdleMerges(writer, this.group);
    // the generation is read on a connection of its own: the writer's commits then move its data_version, which
    // costs nothing to read; the change log is read only when it moved
    this.probe = memory ? writer : openReadOnly(path, { mmapBytes: this.mmapBytes });
    const dataVersion = this.probe.prepare<[], number>('PRAGMA data_version').pluck();
    const lastChange = this.probe.prepare<[], number>('SELECT MAX(seq) FROM change_log').pluck();
    const changesFrom = this.probe.prepare<[number, number], { seq: number; tags: string }>('SELECT seq, tags FROM change_log WHERE seq >= ? ORDER BY seq LIMIT ?');
    const nextScheduled = nextScheduledOf(this.probe);
    const termCounts = this.probe.prepare<{ ids: string; now: string }, { seq: number | null; counts: string }>(
      `SELECT (SELECT MAX(seq) FROM change_log) AS seq,
        (SELECT json_group_array(json_array(t.id, ${COUNT})) FROM json_each(@ids) j CROSS JOIN terms t ON t.id = j.value) AS counts`,
    );
    this.termCountsOf = (ids) => {
      const row = termCounts.get({ ids: JSON.stringify(ids), now: utcNowWire() })!;
      return { counts: new Map(JSON.parse(row.counts) as [number, number][]), seq: row.seq ?? 0 };
    };
    const tracker = new GenerationTracker();
    this.changes = tracker.changes;
    let seenVersion = -1;
    let seq = 0;
    // one reading per turn of the event loop serves every request that arrived in it (see CoalescedReader): read per
    // request, this and the lock-out file's were 8 % of the 95/5 mix's CPU (the lock-out's is read after it, by the
    // first request with credentials: SqliteLockout.observe)
    this.readings = new CoalescedReader(async () => {
      this.lockout.observe();
      const version = dataVersion.get()!;
      if (version !== seenVersion || memory) {
        seenVersion = version;
        seq = lastChange.get() ?? 0;
      }
      const now = utcNowWire();
      return tracker.advance(seq, (from) => readChanges(from, changesFrom.all(from, MAX_CHANGES_READ + 1)), now, () => nextScheduled(now));
    });
    const script = memory ? null : workerScript(new URL('./readThread.js', import.meta.url));
    const size = options.readThreads ?? 2;
    this.threads = script && size > 0 ? new ReadThreads(script, { path, mmapBytes: this.mmapBytes }, size) : null;
    this.listTurns = memory ? null : new Turns(2 * Math.max(1, this.threads ? size : 1));
    this.maxReaders = CHEAP_READERS + (this.listTurns?.size ?? 0);
  }

  /** Opens (creating it when missing) and migrates the database file (`:memory:`: a private database). */
  static async open(path: string, options: SqliteOptions = {}): Promise<SqliteEngine> {
    const writer = openDatabase(path);
    let applied: number[];
    try {
      applied = migrate(writer);
    } catch (err) {
      writer.close();
      throw err;
    }
    return new SqliteEngine(path, writer, options, applied);
  }

  /**
   * A private copy in memory of the file (an empty database when there is none), migrated: what a dry run reads and
   * writes without touching the file.
   */
  static async copyOf(path: string): Promise<SqliteEngine> {
    let image: Buffer | undefined;
    if (existsSync(path)) {
      const disk = openReadOnly(path);
      image = disk.serialize();
      disk.close();
    }
    const copy = openInMemory(image);
    return new SqliteEngine(':memory:', copy, {}, migrate(copy));
  }

  /** The connection that writes, for what only SQLite offers (backup, pragmas of the CLI). */
  get database(): Db {
    return this.writer;
  }

  async read<T>(work: (repos: Repositories) => Promise<T>, reads: ReadSet | null = null): Promise<T> {
    const recorded = (repos: Repositories) => (reads ? recordingReads(repos, reads) : repos);
    if (this.path === ':memory:') return work(recorded(this.writerRepos));
    const reader = await this.acquire();
    reader.begin.run();
    try {
      return await work(recorded(reader.repos));
    } finally {
      reader.commit.run();
      this.release(reader);
    }
  }

  /**
   * A list waits for its turn before it takes a connection: lists waiting for a read thread used to hold every
   * connection, and a read by id that missed the cache waited for them (half a second, with 16 costly clients).
   */
  async readList<T>(work: (repos: Repositories) => Promise<T>, reads: ReadSet | null = null): Promise<T> {
    if (this.listTurns === null) return this.read(work, reads);
    const done = await this.listTurns.take();
    try {
      return await this.read(work, reads);
    } finally {
      done();
    }
  }

  async termCounts(ids: number[]): Promise<{ counts: Map<number, number>; seq: number }> {
    return this.termCountsOf(ids); // one statement: one snapshot
  }

  write<T>(work: (unit: WriteUnit) => Promise<T>): Promise<T> {
    const changes = new ChangeSet();
    return this.group.run(() => work(recordingWrites(this.unit(), changes)), changes).then(this.written, rethrow);
  }

  bookkeep<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.group.run(() => work(this.writerRepos), null).then(this.written, rethrow);
  }

  /** A write's value, once its batch is made: what it added to the search indexes is merged when the writer is idle. */
  private readonly written = <T>(value: T): T => {
    this.merges.wrote();
    return value;
  };

  async bulk<T>(work: () => Promise<T>): Promise<T> {
    const db = this.writer;
    const cacheSize = db.pragma('cache_size', { simple: true });
    const autoCheckpoint = db.pragma('wal_autocheckpoint', { simple: true });
    db.pragma('cache_size = -262144');
    db.pragma('wal_autocheckpoint = 0');
    try {
      const result = await work();
      // a load's many short writes leave each trigram index in the segments they flushed (8 at 10,000 events, 12 at
      // 100,000), and a search probes every segment for each key it asks for: merged into one, a search in the
      // default window read its page and total in 450-650 µs instead of 1,000-1,560 at 10,000 events, 1,210-1,360
      // instead of 1,930-2,320 at 100,000 (by hand, alternating). Later writes add segments that FTS5 merges as usual.
      for (const index of ['posts_search', 'events_search']) db.prepare(`INSERT INTO ${index} (${index}) VALUES ('optimize')`).run();
      return result;
    } finally {
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma(`wal_autocheckpoint = ${autoCheckpoint}`);
      db.pragma(`cache_size = ${cacheSize}`);
      db.pragma('optimize');
    }
  }

  generation(): Promise<string> {
    return this.readings.get();
  }

  missingReference(err: unknown): boolean {
    return (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  }

  async schemaVersion(): Promise<number> {
    return schemaVersionOf(this.probe);
  }

  async migrate(): Promise<number[]> {
    return migrate(this.writer);
  }

  async checkWritable(): Promise<void> {
    this.writer.pragma(`user_version = ${this.writer.pragma('user_version', { simple: true }) as number}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.merges.stop();
    await this.group.settled();
    await this.threads?.close();
    await this.lockout.close();
    for (const reader of this.idle) reader.db.close();
    this.turnReads.close();
    if (this.probe !== this.writer) this.probe.close();
    try {
      this.writer.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // another process still reads: it checkpoints when it closes
    }
    await this.walSync.close();
    this.writer.close();
  }

  private unit(): WriteUnit {
    let depth = 0;
    const db = this.writer;
    return Object.assign(Object.create(null) as object, this.writerRepos, {
      now: DateTime.utc(),
      async savepoint<T>(work: () => Promise<T>): Promise<T> {
        const name = `nested_${++depth}`;
        db.exec(`SAVEPOINT ${name}`);
        try {
          const value = await work();
          db.exec(`RELEASE ${name}`);
          return value;
        } catch (err) {
          if (db.inTransaction) db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
          throw err;
        } finally {
          depth--;
        }
      },
    }) as WriteUnit;
  }

  private acquire(): Promise<Reader> {
    const reader = this.idle.pop();
    if (reader) return Promise.resolve(reader);
    if (this.readers < this.maxReaders) {
      this.readers++;
      const db = openReadOnly(this.path, { mmapBytes: this.mmapBytes });
      const repos = repositoriesOf(db, this.turnReads);
      if (this.threads) {
        // the costly reads go to a thread; the rest stay on this connection's snapshot (event lists that cost little
        // whatever the calendar's size among them: the thread's round trip cost 300-500 µs of CPU, more than they do)
        const threads = this.threads;
        const own = repos.posts;
        repos.posts = Object.assign(Object.create(repos.posts) as SqlitePosts, {
          listEvents: (q: EventListQuery) => (boundedEventList(q) ? own.listEvents(q) : threads.call('posts', 'listEvents', [q])),
          listLinked: (q: unknown) => threads.call('posts', 'listLinked', [q]),
          listChanges: (q: unknown) => threads.call('posts', 'listChanges', [q]),
        });
        repos.terms = Object.assign(Object.create(repos.terms) as SqliteTerms, {
          list: (q: unknown) => threads.call('terms', 'list', [q]),
        });
      }
      return Promise.resolve({ db, repos, begin: db.prepare('BEGIN'), commit: db.prepare('COMMIT') });
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(reader: Reader): void {
    const next = this.waiting.shift();
    if (next) next(reader);
    else if (this.closed) reader.db.close();
    else this.idle.push(reader);
  }
}

const wire = (t: DateTime) => t.toFormat('yyyy-MM-dd HH:mm:ss');

/**
 * SQLite's own words for a full disk become the engine-neutral error (507, not 500); its other storage faults
 * (faults.ts: a file that cannot be written, a lock held too long) go on as they are, for the response stage.
 */
function rethrow(err: unknown): never {
  if (storageFault(err) === 'full') throw new StorageFull(undefined, { cause: err });
  throw err;
}
