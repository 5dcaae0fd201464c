/**
 * A read thread of the SQLite engine (see ReadThreads): a read-only connection of its own, the same repository code
 * as the event loop's, and one call at a time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LIST_READ_CACHE_KIB, openReadOnly } from './connection.js';
import { SqlitePosts } from './posts.js';
import { SqliteTerms } from './terms.js';

type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

const db = openReadOnly((workerData as { path: string }).path, LIST_READ_CACHE_KIB);
const repositories: Record<string, Methods> = {
  posts: new SqlitePosts(db) as unknown as Methods,
  terms: new SqliteTerms(db) as unknown as Methods,
};

parentPort!.on('message', async (message: { id: number; repository: string; method: string; args: unknown[] }) => {
  try {
    const value = await repositories[message.repository]![message.method]!(...message.args);
    parentPort!.postMessage({ id: message.id, ok: true, value });
  } catch (err) {
    const e = err as { message?: string; code?: string };
    parentPort!.postMessage({ id: message.id, ok: false, error: { message: e.message ?? String(err), code: e.code } });
  }
});
