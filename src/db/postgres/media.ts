import type { MediaRepository } from '../engine.js';
import { utcNowWire } from '../generation.js';
import type { MediaRecord } from '../records.js';
import { toMedia, type MediaRow } from '../rows.js';
import type { Queryable } from './connection.js';
import { query } from './sql.js';

/** Images known by URL, on PostgreSQL. */
export class PostgresMedia implements MediaRepository {
  constructor(private readonly db: Queryable) {}

  async findById(id: number): Promise<MediaRecord | null> {
    const rows = await query<MediaRow>(this.db, 'SELECT * FROM media WHERE id = $1', [id]);
    return rows[0] ? toMedia(rows[0]) : null;
  }

  async findByUrl(url: string): Promise<MediaRecord | null> {
    const rows = await query<MediaRow>(this.db, 'SELECT * FROM media WHERE url = $1', [url]);
    return rows[0] ? toMedia(rows[0]) : null;
  }

  async register(url: string): Promise<MediaRecord> {
    const existing = await this.findByUrl(url);
    if (existing) return existing;
    const extension = /\.([A-Za-z0-9]{1,5})(?:[?#]|$)/.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
    const rows = await query<MediaRow>(this.db, 'INSERT INTO media (url, extension, created_utc) VALUES ($1, $2, $3) RETURNING *', [url, extension, utcNowWire()]);
    return toMedia(rows[0]!);
  }

  async save(media: MediaRecord): Promise<number> {
    const sizes = media.sizes ? JSON.stringify(media.sizes) : null;
    const rows = await query<MediaRow>(this.db, 'SELECT * FROM media WHERE url = $1', [media.url]);
    const existing = rows[0];
    if (existing) {
      const same = existing.extension === media.extension && existing.width === media.width && existing.height === media.height
        && existing.filesize === media.filesize && existing.sizes === sizes;
      if (!same) {
        await query(this.db, 'UPDATE media SET extension = $2, width = $3, height = $4, filesize = $5, sizes = $6 WHERE id = $1',
          [existing.id, media.extension, media.width, media.height, media.filesize, sizes]);
      }
      return existing.id;
    }
    const values = [media.url, media.extension, media.width, media.height, media.filesize, sizes, utcNowWire()];
    if (!(await this.findById(media.id))) {
      await query(this.db, `INSERT INTO media (id, url, extension, width, height, filesize, sizes, created_utc) VALUES ($8, $1, $2, $3, $4, $5, $6, $7)`, [...values, media.id]);
      await query(this.db, `SELECT setval(pg_get_serial_sequence('media', 'id'), GREATEST($1::bigint, (SELECT last_value FROM media_id_seq)))`, [media.id]);
      return media.id;
    }
    const inserted = await query<{ id: number }>(this.db, `INSERT INTO media (url, extension, width, height, filesize, sizes, created_utc) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, values);
    return inserted[0]!.id;
  }
}
