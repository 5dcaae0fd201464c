import type { Db } from './connection.js';

/** A media record: an image known by its URL (Almanac keeps no files; sizes are known only when given). */
export interface MediaRecord {
  id: number;
  url: string;
  extension: string;
  width: number | null;
  height: number | null;
  filesize: number | null;
  sizes: Record<string, unknown> | null;
}

interface MediaRow { id: number; url: string; extension: string; width: number | null; height: number | null; filesize: number | null; sizes: string | null }
const toMedia = (r: MediaRow): MediaRecord => ({ ...r, sizes: r.sizes ? (JSON.parse(r.sizes) as Record<string, unknown>) : null });

export class MediaRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      byId: db.prepare<[number], MediaRow>('SELECT * FROM media WHERE id = ?'),
      byUrl: db.prepare<[string], MediaRow>('SELECT * FROM media WHERE url = ?'),
      insert: db.prepare('INSERT INTO media (url, extension, created_utc) VALUES (@url, @extension, @created)'),
    };
  }

  findById(id: number): MediaRecord | null {
    const row = this.stmts.byId.get(id);
    return row ? toMedia(row) : null;
  }

  /** The media record of a URL, registered on first use (no download). */
  register(url: string): MediaRecord {
    const existing = this.stmts.byUrl.get(url);
    if (existing) return toMedia(existing);
    const extension = /\.([A-Za-z0-9]{1,5})(?:[?#]|$)/.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
    const id = Number(this.stmts.insert.run({ url, extension, created: new Date().toISOString().slice(0, 19).replace('T', ' ') }).lastInsertRowid);
    return this.findById(id)!;
  }
}
