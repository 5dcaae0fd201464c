import type { Db } from './connection.js';

export type PostType = 'event' | 'venue' | 'organizer';

/** Events, venues and organizers (one id space). */
export class PostsRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      typeOf: db.prepare<[number], { type: string }>('SELECT type FROM posts WHERE id = ?'),
    };
  }

  /** The kind of record an id names, or null when none does. */
  typeOf(id: number): PostType | null {
    return (this.stmts.typeOf.get(id)?.type as PostType | undefined) ?? null;
  }
}
