/**
 * A read thread of the SQLite engine (see ReadThreads): a read-only connection of its own, the same repository code
 * as the event loop's, and the calls of a message run one after another, each answered as soon as it is done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { LIST_READ_CACHE_KIB, openReadOnly } from './connection.js';
import { SqlitePosts } from './posts.js';
import { SqliteTerms } from './terms.js';
import type { ThreadAnswer, ThreadCall } from './readThreads.js';

type Methods = Record<string, (...args: unknown[]) => Promise<unknown>>;

const { path, mmapBytes } = workerData as { path: string; mmapBytes: number };
const db = openReadOnly(path, { cacheKiB: LIST_READ_CACHE_KIB, mmapBytes });
const repositories: Record<string, Methods> = {
  posts: new SqlitePosts(db) as unknown as Methods,
  terms: new SqliteTerms(db) as unknown as Methods,
};

parentPort!.on('message', async (calls: ThreadCall[]) => {
  for (const call of calls) {
    let answer: ThreadAnswer;
    try {
      answer = { id: call.id, ok: true, value: await repositories[call.repository]![call.method]!(...call.args) };
    } catch (err) {
      const e = err as { message?: string; code?: string };
      answer = { id: call.id, ok: false, error: { message: e.message ?? String(err), code: e.code } };
    }
    parentPort!.postMessage(answer);
  }
});
