import type { Role } from '../../domain/capabilities.js';
import type { UsersRepository } from '../engine.js';
import type { AppPassword, User } from '../records.js';
import { toPassword, toUser, type PasswordRow, type UserRow } from '../rows.js';
import type { Db } from './connection.js';
import { utcNowWire } from '../generation.js';

/** Users and their application passwords. */
export class SqliteUsers implements UsersRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      byLogin: db.prepare<[string], UserRow>('SELECT * FROM users WHERE login = ?'),
      byEmail: db.prepare<[string], UserRow>('SELECT * FROM users WHERE email = ?'),
      byId: db.prepare<[number], UserRow>('SELECT * FROM users WHERE id = ?'),
      all: db.prepare<[], UserRow>('SELECT * FROM users ORDER BY id'),
      insert: db.prepare('INSERT INTO users (id, login, email, display_name, role, registered_utc) VALUES (@id, @login, @email, @displayName, @role, @registeredUtc)'),
      setRole: db.prepare('UPDATE users SET role = @role, credential_version = credential_version + 1 WHERE id = @id'),
      bumpVersion: db.prepare('UPDATE users SET credential_version = credential_version + 1 WHERE id = ?'),
      remove: db.prepare('DELETE FROM users WHERE id = ?'),
      reassignPosts: db.prepare('UPDATE posts SET author_id = @to WHERE author_id = @from'),
      // the listing index's copy of the author (migration 0002) follows
      reassignEvents: db.prepare('UPDATE events SET author_id = @to WHERE author_id = @from'),
      passwordsOf: db.prepare<[number], PasswordRow>('SELECT * FROM app_passwords WHERE user_id = ? ORDER BY created_utc, uuid'),
      insertPassword: db.prepare(`INSERT INTO app_passwords (uuid, user_id, name, scheme, salt, hash, is_bootstrap, created_utc)
                                  VALUES (@uuid, @userId, @name, @scheme, @salt, @hash, @isBootstrap, @createdUtc)`),
      deletePassword: db.prepare('DELETE FROM app_passwords WHERE user_id = ? AND uuid = ?'),
      deleteBootstrap: db.prepare('DELETE FROM app_passwords WHERE user_id = ? AND is_bootstrap = 1'),
      touchPassword: db.prepare('UPDATE app_passwords SET last_used_utc = @at, last_ip = @ip WHERE uuid = @uuid'),
    };
  }

  /** The user with this login or, failing that, this e-mail address (WordPress accepts either). */
  async findByLoginOrEmail(loginOrEmail: string): Promise<User | null> {
    const row = this.stmts.byLogin.get(loginOrEmail) ?? this.stmts.byEmail.get(loginOrEmail);
    return row ? toUser(row) : null;
  }

  async findById(id: number): Promise<User | null> {
    const row = this.stmts.byId.get(id);
    return row ? toUser(row) : null;
  }

  async list(): Promise<User[]> {
    return this.stmts.all.all().map(toUser);
  }

  /** Adds a user (no password); `id` keeps a given id (an import keeping its source's author ids), else the next one. */
  async create(input: { id?: number; login: string; email: string | null; displayName?: string; role: Role }): Promise<User> {
    const info = this.stmts.insert.run({
      id: input.id ?? null, login: input.login, email: input.email, displayName: input.displayName ?? input.login, role: input.role,
      registeredUtc: utcNowWire(),
    });
    return (await this.findById(Number(info.lastInsertRowid)))!;
  }

  /** Changes the role; takes effect on the user's next request in every worker. */
  async setRole(id: number, role: Role): Promise<void> {
    this.stmts.setRole.run({ id, role });
  }

  /** Removes a user after giving their records to another user. */
  async remove(id: number, reassignTo: number): Promise<void> {
    this.stmts.reassignPosts.run({ from: id, to: reassignTo });
    this.stmts.reassignEvents.run({ from: id, to: reassignTo });
    this.stmts.remove.run(id);
  }

  async passwordsOf(userId: number): Promise<AppPassword[]> {
    return this.stmts.passwordsOf.all(userId).map(toPassword);
  }

  async addPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void> {
    this.stmts.insertPassword.run({ ...p, isBootstrap: p.isBootstrap ? 1 : 0 });
  }

  /** Revokes one password; bumps the user's credential version so cached checks of it stop at once. */
  async revokePassword(userId: number, uuid: string): Promise<boolean> {
    const changed = this.stmts.deletePassword.run(userId, uuid).changes > 0;
    if (changed) this.stmts.bumpVersion.run(userId);
    return changed;
  }

  /** Replaces the bootstrap password of a user (at most one). */
  async replaceBootstrapPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void> {
    this.stmts.deleteBootstrap.run(p.userId);
    this.stmts.bumpVersion.run(p.userId);
    await this.addPassword(p);
  }

  /** Records a password's use (bookkeeping: no answer shows it). */
  async touchPassword(uuid: string, at: string, ip: string | null): Promise<void> {
    this.stmts.touchPassword.run({ uuid, at, ip });
  }
}
