import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters of JSON written at most between two turns of the event loop (a few ms of work), bar one item's. */
const JSON_PER_TURN = 256 * 1024;

/**
 * `JSON.stringify(body)` as UTF-8, or undefined for what JSON cannot show. A list (an array, a list's envelope, or
 * either in `_envelope`'s `body`) is written an item at a time, with a turn of the event loop after each 256 KB: a
 * page of 21 descriptions of 1.7 MB (36 MB of JSON) held every other request for a third of a second as one call.
 * A record of large texts is written a member at a time likewise. The bytes are those of one call.
 */
export async function jsonBytes(body: unknown): Promise<Buffer | undefined> {
  const enveloped = !isList(body) && isObject(body) && isList(body.body);
  if (!enveloped && !isList(body)) {
    if (!isObject(body) || textLength(body) < JSON_PER_TURN) {
      const text = JSON.stringify(body) as string | undefined;
      return text === undefined ? undefined : Buffer.from(text);
    }
    const out = new JsonOut();
    await out.record(body);
    return out.bytes();
  }
  const out = new JsonOut();
  if (enveloped) await out.members(body as Record<string, unknown>, (item, key) => (key === 'body' ? out.list(item) : out.whole(item)));
  else await out.list(body);
  return out.bytes();
}

/** The characters of an object's texts and of its objects' texts: what tells a record of megabytes from the others. */
function textLength(object: Record<string, unknown>): number {
  let length = 0;
  for (const key in object) {
    const value = object[key];
    if (typeof value === 'string') length += value.length;
    else if (isObject(value)) for (const inner in value) if (typeof value[inner] === 'string') length += (value[inner] as string).length;
  }
  return length;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An array, or an object whose first value is one (`{events: [...], rest_url, total, …}`). */
function isList(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (!isObject(value)) return false;
  for (const key in value) return Array.isArray(value[key]);
  return false;
}

/** JSON written in pieces, made into bytes and handed back to the event loop every JSON_PER_TURN characters. */
class JsonOut {
  private readonly chunks: Buffer[] = [];
  private pieces: string[] = [];
  private pending = 0;

  /** An array, each item in one call; or a list's envelope, each array of it so. */
  async list(value: unknown): Promise<void> {
    if (!Array.isArray(value)) return this.members(value as Record<string, unknown>, (item) => (Array.isArray(item) ? this.list(item) : this.whole(item)));
    this.write('[');
    for (let i = 0; i < value.length; i++) {
      this.write(i === 0 ? '' : ',');
      this.write(JSON.stringify(value[i]) ?? 'null'); // the `null` of an undefined item, as JSON.stringify writes it
      if (this.pending >= JSON_PER_TURN) await this.flush();
    }
    this.write(']');
  }

  /** An object, each value written by `write`; the values JSON.stringify leaves out are left out. */
  async members(object: Record<string, unknown>, write: (item: unknown, key: string) => Promise<void> | void): Promise<void> {
    this.write('{');
    let first = true;
    for (const [key, item] of Object.entries(object)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      this.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await write(item, key);
    }
    this.write('}');
  }

  /**
   * An object member by member, those of large texts themselves so, with a turn after every JSON_PER_TURN characters:
   * an event of a 3.6 MB description (7.2 MB of JSON with its JSON-LD) held the event loop for 60 ms as one call.
   */
  async record(object: Record<string, unknown>): Promise<void> {
    await this.members(object, async (item) => {
      if (isObject(item) && textLength(item) >= JSON_PER_TURN) await this.record(item);
      else this.whole(item);
      if (this.pending >= JSON_PER_TURN) await this.flush();
    });
  }

  whole(value: unknown): void {
    this.write(JSON.stringify(value));
  }

  private write(text: string): void {
    this.pieces.push(text);
    this.pending += text.length;
  }

  private async flush(): Promise<void> {
    this.chunks.push(Buffer.from(this.pieces.join('')));
    this.pieces = [];
    this.pending = 0;
    await nextTurn();
  }

  bytes(): Buffer {
    const last = Buffer.from(this.pieces.join(''));
    return this.chunks.length === 0 ? last : Buffer.concat([...this.chunks, last]);
  }
}
