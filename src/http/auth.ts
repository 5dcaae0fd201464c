import type { Middleware } from 'koa';
import type { CredentialVerifier } from '../domain/passwords.js';
import { ApiError } from './errors.js';
import type { Caller } from './state.js';

const MESSAGES = {
  invalid_username: 'Unknown username. Check again or try your email address.',
  incorrect_password: 'The provided password is an invalid application password.',
} as const;

/**
 * HTTP Basic with an application password. No Authorization header (or another scheme): anonymous. Credentials
 * that do not verify fail the request with 401 whatever the route, as WordPress does.
 */
export function authenticate(verifier: CredentialVerifier): Middleware {
  return async (ctx, next) => {
    ctx.state.user = null;
    const header = ctx.get('Authorization');
    const basic = /^Basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(header);
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const login = colon < 0 ? decoded : decoded.slice(0, colon);
      const password = colon < 0 ? '' : decoded.slice(colon + 1);
      const check = await verifier.verify(login, password, ctx.ip || null);
      if (!check.ok) throw new ApiError(401, check.reason, MESSAGES[check.reason]);
      const caller: Caller = { id: check.user.id, login: check.user.login, role: check.user.role };
      ctx.state.user = caller;
    }
    await next();
  };
}
