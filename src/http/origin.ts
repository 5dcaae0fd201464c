import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

/**
 * Where a request came from and what address it was sent to, read from the raw request as Koa reads them (`trustProxy`:
 * ALMANAC_TRUST_PROXY, Koa's `proxy`), so that the front answer (see front.ts) and the Koa stages always agree.
 */

/** The first of a comma-separated header's values, trimmed ('' when absent). */
function first(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : value ?? '';
  return text ? text.split(',', 1)[0]!.trim() : '';
}

/** The client's address: behind a trusted proxy the first `X-Forwarded-For` entry, else the socket's peer. */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  return (trustProxy && first(req.headers['x-forwarded-for'])) || req.socket.remoteAddress || '';
}

/** `https` on TLS; behind a trusted proxy the first `X-Forwarded-Proto`; else `http`. */
export function requestProtocol(req: IncomingMessage, trustProxy: boolean): string {
  if ((req.socket as TLSSocket).encrypted) return 'https';
  if (!trustProxy) return 'http';
  return first(req.headers['x-forwarded-proto']).toLowerCase() || 'http';
}

/** The host the request was sent to (with port): `X-Forwarded-Host` behind a trusted proxy, else `Host`; '' if none. */
export function requestHost(req: IncomingMessage, trustProxy: boolean): string {
  let host = (trustProxy && first(req.headers['x-forwarded-host'])) || (req.httpVersionMajor >= 2 && first(req.headers[':authority'])) || first(req.headers.host);
  if (host.includes('@')) {
    // userinfo before the host is not part of it (RFC 9110 §4.2.4)
    try {
      host = new URL(`http://${host}`).host;
    } catch {
      return '';
    }
  }
  return host;
}
