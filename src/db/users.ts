import type { Role } from '../domain/capabilities.js';
import type { Db } from './connection.js';
import { unseenWrite } from './generation.js';

export interface User {
  id: number;
  login: string;
  email: string | null;
  displayName: string;
  role: Role;
  credentialVersion: number;
  registeredUtc: string;
}

export interface AppPassword {
  uuid: string;
  userId: number;
  name: string;
  scheme: 'sha256' | 'scrypt';
  salt: string;
  hash: string;
  isBootstrap: boolean;
  createdUtc: string;
  lastUsedUtc: string | null;
  lastIp: string | null;
}

interface UserRow { id: number; login: string; email: string | null; display_name: string; role: string; credential_version: number; registered_utc: string }
interface PasswordRow { uuid: string; user_id: number; name: string; scheme: string; salt: string; hash: string; is_bootstrap: number; created_utc: string; last_used_utc: string | null; last_ip: string | null }

const toUser = (r: UserRow): User => ({
  id: r.id, login: r.login, email: r.email, displayName: r.display_name, role: r.role as Role,
  credentialVersion: r.credential_version, registeredUtc: r.registered_utc,
});
const toPassword = (r: PasswordRow): AppPassword => ({
  uuid: r.uuid, userId: r.user_id, name: r.name, scheme: r.scheme as AppPassword['scheme'], salt: r.salt, hash: r.hash,
  isBootstrap: r.is_bootstrap === 1, createdUtc: r.created_utc, lastUsedUtc: r.last_used_utc, lastIp: r.last_ip,
});

/** Users and their application passwords. */
export class UsersRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
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
      passwordsOf: db.prepare<[number], PasswordRow>('SELECT * FROM app_passwords WHERE user_id = ? ORDER BY created_utc, uuid'),
      insertPassword: db.prepare(`INSERT INTO app_passwords (uuid, user_id, name, scheme, salt, hash, is_bootstrap, created_utc)
                                  VALUES (@uuid, @userId, @name, @scheme, @salt, @hash, @isBootstrap, @createdUtc)`),
      deletePassword: db.prepare('DELETE FROM app_passwords WHERE user_id = ? AND uuid = ?'),
      deleteBootstrap: db.prepare('DELETE FROM app_passwords WHERE user_id = ? AND is_bootstrap = 1'),
      touchPassword: db.prepare('UPDATE app_passwords SET last_used_utc = @at, last_ip = @ip WHERE uuid = @uuid'),
    };
  }

  /** The user with this login or, failing that, this e-mail address (WordPress accepts either). */
  findByLoginOrEmail(loginOrEmail: string): User | null {
    const row = this.stmts.byLogin.get(loginOrEmail) ?? this.stmts.byEmail.get(loginOrEmail);
    return row ? toUser(row) : null;
  }

  findById(id: number): User | null {
    const row = this.stmts.byId.get(id);
    return row ? toUser(row) : null;
  }

  list(): User[] {
    return this.stmts.all.all().map(toUser);
  }

  /** Adds a user (no password); `id` keeps a given id (an import keeping its source's author ids), else the next one. */
  create(input: { id?: number; login: string; email: string | null; displayName?: string; role: Role }): User {
    const info = this.stmts.insert.run({
      id: input.id ?? null, login: input.login, email: input.email, displayName: input.displayName ?? input.login, role: input.role,
      registeredUtc: new Date().toISOString().slice(0, 19).replace('T', ' '),
    });
    return this.findById(Number(info.lastInsertRowid))!;
  }

  /** Changes the role; takes effect on the user's next request in every worker. */
  setRole(id: number, role: Role): void {
    this.stmts.setRole.run({ id, role });
  }

  /** Removes a user after giving their records to another user, in one transaction. */
  remove(id: number, reassignTo: number): void {
    this.db.transaction(() => {
      this.stmts.reassignPosts.run({ from: id, to: reassignTo });
      this.stmts.remove.run(id);
    }).immediate();
  }

  passwordsOf(userId: number): AppPassword[] {
    return this.stmts.passwordsOf.all(userId).map(toPassword);
  }

  addPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): void {
    this.stmts.insertPassword.run({ ...p, isBootstrap: p.isBootstrap ? 1 : 0 });
  }

  /** Revokes one password; bumps the user's credential version so cached checks of it stop at once. */
  revokePassword(userId: number, uuid: string): boolean {
    return this.db.transaction(() => {
      const changed = this.stmts.deletePassword.run(userId, uuid).changes > 0;
      if (changed) this.stmts.bumpVersion.run(userId);
      return changed;
    }).immediate();
  }

  /** Replaces the bootstrap password of a user (at most one). */
  replaceBootstrapPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): void {
    this.db.transaction(() => {
      this.stmts.deleteBootstrap.run(p.userId);
      this.stmts.bumpVersion.run(p.userId);
      this.addPassword(p);
    }).immediate();
  }

  /** Records a password's use; no answer shows it, so it does not change the connection's generation. */
  touchPassword(uuid: string, at: string, ip: string | null): void {
    unseenWrite(this.db, () => this.stmts.touchPassword.run({ uuid, at, ip }));
  }
}
