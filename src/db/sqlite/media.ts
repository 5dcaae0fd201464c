import type { MediaRepository } from '../engine.js';
import type { MediaRecord } from '../records.js';
import { toMedia, type MediaRow } from '../rows.js';
import type { Db } from './connection.js';
import { utcNowWire } from '../generation.js';


export class SqliteMedia implements MediaRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      byId: db.prepare<[number], MediaRow>('SELECT * FROM media WHERE id = ?'),
      byUrl: db.prepare<[string], MediaRow>('SELECT * FROM media WHERE url = ?'),
      byIds: db.prepare<{ ids: string }, MediaRow>('SELECT * FROM media WHERE id IN (SELECT value FROM json_each(@ids))'),
      insert: db.prepare('INSERT INTO media (url, extension, created_utc) VALUES (@url, @extension, @created)'),
      insertAs: db.prepare(`INSERT INTO media (id, url, extension, width, height, filesize, sizes, created_utc)
                            VALUES (@id, @url, @extension, @width, @height, @filesize, @sizes, @created)`),
      describe: db.prepare('UPDATE media SET extension = @extension, width = @width, height = @height, filesize = @filesize, sizes = @sizes WHERE id = @id'),
    };
  }

  async findByUrl(url: string): Promise<MediaRecord | null> {
    const row = this.stmts.byUrl.get(url);
    return row ? toMedia(row) : null;
  }

  /**
   * Stores an image as another site describes it (an import): the record of its URL, updated to the description,
   * or a new one that keeps the given id when that id is free. Returns the id it has here.
   */
  async save(media: MediaRecord): Promise<number> {
    const row = { ...media, sizes: media.sizes ? JSON.stringify(media.sizes) : null };
    const existing = this.stmts.byUrl.get(media.url);
    if (existing) {
      const same = (['extension', 'width', 'height', 'filesize', 'sizes'] as const).every((k) => existing[k] === row[k]);
      if (!same) this.stmts.describe.run({ ...row, id: existing.id });
      return existing.id;
    }
    const created = utcNowWire();
    if (!this.stmts.byId.get(media.id)) {
      this.stmts.insertAs.run({ ...row, created });
      return media.id;
    }
    return Number(this.stmts.insertAs.run({ ...row, id: null, created }).lastInsertRowid);
  }

  async findById(id: number): Promise<MediaRecord | null> {
    const row = this.stmts.byId.get(id);
    return row ? toMedia(row) : null;
  }

  /** Several media records by id, in one statement (for PostsRepository.viewLinks). */
  async findMany(ids: number[]): Promise<Map<number, MediaRecord>> {
    if (ids.length === 0) return new Map();
    return new Map(this.stmts.byIds.all({ ids: JSON.stringify([...new Set(ids)]) }).map((r) => [r.id, toMedia(r)]));
  }

  /** The media record of a URL, registered on first use (no download). */
  async register(url: string): Promise<MediaRecord> {
    const existing = await this.findByUrl(url);
    if (existing) return existing;
    const extension = /\.([A-Za-z0-9]{1,5})(?:[?#]|$)/.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
    const id = Number(this.stmts.insert.run({ url, extension, created: utcNowWire() }).lastInsertRowid);
    return (await this.findById(id))!;
  }
}
