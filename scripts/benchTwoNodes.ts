/**
 * The benchmark's two-node run, in a process of its own: two Almanac servers on one PostgreSQL database, writes on
 * one (`writeUrl`) and reads on the other (`readUrl`), for `duration` seconds, then a check that every acknowledged
 * write is read back from the reading node. Prints one JSON line of counts and latencies on stdout.
 *
 * Each writer creates an event (POST), then edits it a few times (PATCH with If-Match), each time taking the ETag
 * from the reading node: a tag read there before the previous edit was acknowledged would be refused (412). The title
 * carries the version of each write (`v0` for the POST, then `v1`…), so a read tells which write it saw; a read sent
 * after a write's acknowledgement that shows an older version, or no event at all, is stale.
 */
interface TwoNodeLoad {
  writeUrl: string;
  readUrl: string;
  /** The path of the events collection under the namespace. */
  eventsPath: string;
  authorization: string;
  duration: number;
  writers: number;
  readers: number;
  /** Edits (PATCH) after each event's creation. */
  editsPerEvent: number;
}

/** Readers pick among the events created last, those most likely to be cached by the reading node and changing. */
const RECENT = 32;

const load = JSON.parse(process.env.BENCH_TWO_NODES!) as TwoNodeLoad;
const json = { 'content-type': 'application/json' };
const authenticated = { Authorization: load.authorization };

/** Each event's acknowledged writes, in order: the version each wrote and when its acknowledgement arrived. */
const acknowledged = new Map<number, { version: number; at: number }[]>();
const created: number[] = [];
const counts = { posts: 0, patches: 0, preconditionFailed: 0, writeErrors: 0, reads: 0, readErrors: 0, staleReads: 0, tagReads: 0, staleTagReads: 0 };
const latencies = { write: [] as number[], read: [] as number[] };

const title = (writer: number, event: number, version: number) => `Twonode w${writer} e${event} v${version}`;
const versionOf = (body: string): number | null => {
  const match = / v(\d+)$/.exec((JSON.parse(body) as { title?: string }).title ?? '');
  return match ? Number(match[1]) : null;
};

/** The newest version of `id` acknowledged before `sentAt`; a read sent at `sentAt` must show it or a newer one. */
function required(id: number, sentAt: number): number {
  let version = -1;
  for (const write of acknowledged.get(id) ?? []) if (write.at < sentAt) version = write.version;
  return version;
}

/** Reads event `id` from the reading node and tells whether the answer was stale. */
async function readBack(id: number, headers: Record<string, string> = {}): Promise<{ stale: boolean; etag: string | null; ok: boolean }> {
  const sentAt = performance.now();
  const res = await fetch(`${load.readUrl}${load.eventsPath}/${id}`, { headers });
  const body = await res.text();
  latencies.read.push(performance.now() - sentAt);
  const minimum = required(id, sentAt);
  if (res.status !== 200) return { stale: res.status === 404 && minimum >= 0, etag: null, ok: res.status === 404 };
  return { stale: (versionOf(body) ?? -1) < minimum, etag: res.headers.get('etag'), ok: true };
}

async function write(method: 'POST' | 'PATCH', path: string, body: object, headers: Record<string, string> = {}): Promise<{ status: number; id?: number }> {
  const sentAt = performance.now();
  const res = await fetch(load.writeUrl + path, { method, headers: { ...authenticated, ...json, ...headers }, body: JSON.stringify(body) });
  const answer = await res.text();
  latencies.write.push(performance.now() - sentAt);
  return { status: res.status, id: res.status < 300 ? (JSON.parse(answer) as { id: number }).id : undefined };
}

async function writer(w: number, until: number): Promise<void> {
  for (let n = 0; performance.now() < until; n++) {
    const day = String(1 + (n % 28)).padStart(2, '0');
    const post = await write('POST', load.eventsPath, { title: title(w, n, 0), status: 'publish', start_date: `2032-03-${day} 10:00`, end_date: `2032-03-${day} 12:00` });
    if (post.status !== 201 || post.id === undefined) {
      counts.writeErrors++;
      continue;
    }
    const id = post.id;
    acknowledged.set(id, [{ version: 0, at: performance.now() }]);
    created.push(id);
    counts.posts++;
    for (let version = 1; version <= load.editsPerEvent && performance.now() < until; version++) {
      const tagged = await readBack(id, authenticated);
      counts.tagReads++;
      if (tagged.stale) counts.staleTagReads++;
      if (!tagged.etag) {
        counts.readErrors++;
        break;
      }
      const patch = await write('PATCH', `${load.eventsPath}/${id}`, { title: title(w, n, version) }, { 'If-Match': tagged.etag });
      if (patch.status === 412) counts.preconditionFailed++;
      if (patch.status !== 200) {
        if (patch.status !== 412) counts.writeErrors++;
        break;
      }
      acknowledged.get(id)!.push({ version, at: performance.now() });
      counts.patches++;
    }
  }
}

async function reader(until: number): Promise<void> {
  while (performance.now() < until) {
    if (!created.length) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      continue;
    }
    const id = created[created.length - 1 - Math.floor(Math.random() * Math.min(RECENT, created.length))]!;
    const read = await readBack(id);
    counts.reads++;
    if (!read.ok) counts.readErrors++;
    if (read.stale) counts.staleReads++;
  }
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 100) / 100 : 0;
};

/** Runs a writer or reader loop again after a request that failed on the network (counted), until the end. */
async function keepGoing(loop: () => Promise<void>, errors: 'writeErrors' | 'readErrors', until: number): Promise<void> {
  while (performance.now() < until) {
    try {
      await loop();
    } catch {
      counts[errors]++;
    }
  }
}

const started = performance.now();
const until = started + load.duration * 1000;
await Promise.all([
  ...Array.from({ length: load.writers }, (_, w) => keepGoing(() => writer(w, until), 'writeErrors', until)),
  ...Array.from({ length: load.readers }, () => keepGoing(() => reader(until), 'readErrors', until)),
]);
const seconds = (performance.now() - started) / 1000;

// every acknowledged write, read back from the other node once the load is over: the last version of each event
let missing = 0;
let behind = 0;
for (const [id, writes] of acknowledged) {
  const res = await fetch(`${load.readUrl}${load.eventsPath}/${id}`).catch(() => null);
  const body = res?.status === 200 ? await res.text() : null;
  if (body === null) missing++;
  else if (versionOf(body) !== writes[writes.length - 1]!.version) behind++;
}

process.stdout.write(JSON.stringify({
  seconds,
  ...counts,
  writesPerSecond: (counts.posts + counts.patches) / seconds,
  readsPerSecond: (counts.reads + counts.tagReads) / seconds,
  writeP50: quantile(latencies.write, 0.5),
  writeP99: quantile(latencies.write, 0.99),
  readP50: quantile(latencies.read, 0.5),
  readP99: quantile(latencies.read, 0.99),
  readBack: { events: acknowledged.size, writes: counts.posts + counts.patches, missing, behind },
}) + '\n');
