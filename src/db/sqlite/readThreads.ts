import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Costly reads of the SQLite engine (list and search queries, calendar feeds) run in worker threads, each with a
 * read-only connection of its own, so a long statement no longer stops every other request of the process: the
 * event loop keeps serving cheap reads and cached answers while a thread works. A call names a repository method
 * (`posts.listEvents`, say) and its arguments, which must survive structured cloning; the thread runs the very same
 * repository code on its own connection and returns the result.
 *
 * Threads start lazily and are shared by the whole process. A call waits for a free thread (first come, first
 * served), so at most `size` costly statements run at once and cheap work always has the event loop.
 */
export class ReadThreads {
  private readonly idle: Worker[] = [];
  private readonly all: Worker[] = [];
  private readonly waiting: { resolve: (w: Worker) => void }[] = [];
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void; worker: Worker }>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly script: URL, private readonly workerData: unknown, private readonly size = Math.max(1, Math.min(4, availableParallelism()))) {}

  /** Runs `repository.method(...args)` in a thread and resolves with its result. */
  async call<T>(repository: string, method: string, args: unknown[]): Promise<T> {
    if (this.closed) throw new Error('the read threads are closed');
    const worker = await this.acquire();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, worker });
      worker.postMessage({ id, repository, method, args });
    });
  }

  private acquire(): Promise<Worker> {
    const worker = this.idle.pop();
    if (worker) return Promise.resolve(worker);
    if (this.all.length < this.size) return Promise.resolve(this.spawn());
    return new Promise((resolve) => this.waiting.push({ resolve }));
  }

  private release(worker: Worker): void {
    const next = this.waiting.shift();
    if (next) next.resolve(worker);
    else this.idle.push(worker);
  }

  private spawn(): Worker {
    const worker = new Worker(this.script, { workerData: this.workerData });
    this.all.push(worker);
    worker.on('message', (message: { id: number; ok: boolean; value?: unknown; error?: { message: string; code?: string } }) => {
      const call = this.pending.get(message.id);
      if (!call) return;
      this.pending.delete(message.id);
      this.release(worker);
      if (message.ok) call.resolve(message.value);
      else call.reject(Object.assign(new Error(message.error!.message), { code: message.error!.code }));
    });
    // a thread that dies (out of memory, say) fails its calls and is replaced on demand
    const gone = (err: unknown) => {
      const index = this.all.indexOf(worker);
      if (index < 0) return; // 'error' is followed by 'exit'
      this.all.splice(index, 1);
      const idle = this.idle.indexOf(worker);
      if (idle >= 0) this.idle.splice(idle, 1);
      for (const [id, call] of this.pending) {
        if (call.worker !== worker) continue;
        this.pending.delete(id);
        call.reject(err instanceof Error ? err : new Error('a read thread stopped'));
      }
      const next = this.waiting.shift();
      if (next && !this.closed) next.resolve(this.spawn());
    };
    worker.once('error', gone);
    worker.once('exit', (code) => gone(new Error(`a read thread exited (${code})`)));
    worker.unref();
    return worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.all.map((w) => w.terminate()));
  }
}
