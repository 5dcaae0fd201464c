import type { Role } from '../../domain/capabilities.js';
import type { UsersRepository } from '../engine.js';
import { utcNowWire } from '../generation.js';
import type { AppPassword, User } from '../records.js';
import { toPassword, toUser, type PasswordRow, type UserRow } from '../rows.js';
import type { Queryable } from './connection.js';
import { query } from './sql.js';

/** Users and their application passwords on PostgreSQL. Logins and e-mail addresses match whatever their case. */
export class PostgresUsers implements UsersRepository {
  constructor(private readonly db: Queryable) {}

  async findByLoginOrEmail(loginOrEmail: string): Promise<User | null> {
    const rows = await query<UserRow>(this.db,
      'SELECT * FROM users WHERE lower(login) = lower($1) OR lower(email) = lower($1) ORDER BY lower(login) = lower($1) DESC LIMIT 1', [loginOrEmail]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async findById(id: number): Promise<User | null> {
    const rows = await query<UserRow>(this.db, 'SELECT * FROM users WHERE id = $1', [id]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async list(): Promise<User[]> {
    return (await query<UserRow>(this.db, 'SELECT * FROM users ORDER BY id')).map(toUser);
  }

  async create(input: { id?: number; login: string; email: string | null; displayName?: string; role: Role }): Promise<User> {
    const values = [input.login, input.email, input.displayName ?? input.login, input.role, utcNowWire()];
    const rows = input.id === undefined
      ? await query<UserRow>(this.db, 'INSERT INTO users (login, email, display_name, role, registered_utc) VALUES ($1, $2, $3, $4, $5) RETURNING *', values)
      : await query<UserRow>(this.db, 'INSERT INTO users (id, login, email, display_name, role, registered_utc) VALUES ($6, $1, $2, $3, $4, $5) RETURNING *', [...values, input.id]);
    // ids given from outside (an import) must never be handed out again
    if (input.id !== undefined) await query(this.db, `SELECT setval(pg_get_serial_sequence('users', 'id'), GREATEST($1::bigint, (SELECT last_value FROM users_id_seq)))`, [input.id]);
    return toUser(rows[0]!);
  }

  async setRole(id: number, role: Role): Promise<void> {
    await query(this.db, 'UPDATE users SET role = $2, credential_version = credential_version + 1 WHERE id = $1', [id, role]);
  }

  async remove(id: number, reassignTo: number): Promise<void> {
    await query(this.db, 'UPDATE posts SET author_id = $2 WHERE author_id = $1', [id, reassignTo]);
    // the listing index's copy of the author (migration 0002) follows
    await query(this.db, 'UPDATE events SET author_id = $2 WHERE author_id = $1', [id, reassignTo]);
    await query(this.db, 'DELETE FROM users WHERE id = $1', [id]);
  }

  async passwordsOf(userId: number): Promise<AppPassword[]> {
    return (await query<PasswordRow>(this.db, 'SELECT * FROM app_passwords WHERE user_id = $1 ORDER BY created_utc, uuid', [userId])).map(toPassword);
  }

  async addPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void> {
    await query(this.db, `INSERT INTO app_passwords (uuid, user_id, name, scheme, salt, hash, is_bootstrap, created_utc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [p.uuid, p.userId, p.name, p.scheme, p.salt, p.hash, p.isBootstrap, p.createdUtc]);
  }

  async revokePassword(userId: number, uuid: string): Promise<boolean> {
    const gone = await query(this.db, 'DELETE FROM app_passwords WHERE user_id = $1 AND uuid = $2 RETURNING uuid', [userId, uuid]);
    if (gone.length === 0) return false;
    await query(this.db, 'UPDATE users SET credential_version = credential_version + 1 WHERE id = $1', [userId]);
    return true;
  }

  async replaceBootstrapPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void> {
    await query(this.db, 'DELETE FROM app_passwords WHERE user_id = $1 AND is_bootstrap', [p.userId]);
    await query(this.db, 'UPDATE users SET credential_version = credential_version + 1 WHERE id = $1', [p.userId]);
    await this.addPassword(p);
  }

  async touchPassword(uuid: string, at: string, ip: string | null): Promise<void> {
    await query(this.db, 'UPDATE app_passwords SET last_used_utc = $2, last_ip = $3 WHERE uuid = $1', [uuid, at, ip]);
  }
}
