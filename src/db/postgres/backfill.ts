import type pg from 'pg';
import type { PostType } from '../records.js';
import { linkedSearchTexts } from '../listQueries.js';
import { collationKey, foldForSearch } from '../../domain/text.js';
import { baseToRow, DETAIL_TABLE, eventFromRow, organizerFromRow, venueFromRow, type Row } from '../rows.js';

/**
 * Steps in TypeScript that a migration runs after its SQL, in the same transaction: values only Almanac's own
 * functions compute (PostgreSQL has none equal to `collationKey` or `foldForSearch`), for the records that exist when
 * the migration runs. Records written later get them from the repositories.
 */
export const BACKFILLS: Partial<Record<number, (client: pg.PoolClient) => Promise<void>>> = {
  10: foldedCopies,
};

const BATCH = 500;

/**
 * Migration 0010: the title keys and folded search fields of venues and organizers, the events' search text folded
 * again (the fold changed), and the name keys and folded names of terms, each computed as the repositories compute them.
 */
async function foldedCopies(client: pg.PoolClient): Promise<void> {
  for (const type of ['event', 'venue', 'organizer'] as const satisfies readonly PostType[]) {
    await inBatches(client, `SELECT d.*, p.* FROM posts p JOIN ${DETAIL_TABLE[type]} d ON d.post_id = p.id WHERE p.id > $1 ORDER BY p.id LIMIT $2`, async (rows) => {
      const values = rows.map((r) => {
        const record = type === 'event' ? eventFromRow(r, [], []) : type === 'venue' ? venueFromRow(r) : organizerFromRow(r);
        const row = baseToRow(record);
        return { id: record.id, search_text: row.search_text, title_key: row.title_key, search_fields: linkedSearchTexts(record) };
      });
      await client.query(`UPDATE posts p SET search_text = x.search_text, title_key = x.title_key,
          search_fields = CASE WHEN x.search_fields IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(x.search_fields)) END
        FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, search_text text, title_key text, search_fields jsonb) WHERE p.id = x.id`, [JSON.stringify(values)]);
    });
  }
  await inBatches(client, 'SELECT id, name FROM terms WHERE id > $1 ORDER BY id LIMIT $2', async (rows) => {
    const values = rows.map((r) => ({ id: r.id, name_key: collationKey(r.name as string), search_name: foldForSearch(r.name as string) }));
    await client.query(`UPDATE terms t SET name_key = x.name_key, search_name = x.search_name
      FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, name_key text, search_name text) WHERE t.id = x.id`, [JSON.stringify(values)]);
  });
}

/** Runs `work` over the rows of `select` (`$1`: the last id seen, `$2`: the batch size), in id order. */
async function inBatches(client: pg.PoolClient, select: string, work: (rows: Row[]) => Promise<void>): Promise<void> {
  let after = 0;
  for (;;) {
    const { rows } = await client.query<Row>(select, [after, BATCH]);
    if (rows.length === 0) return;
    await work(rows);
    after = Number(rows[rows.length - 1]!.id);
  }
}
