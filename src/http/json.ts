import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters of JSON written at most between two turns of the event loop (a few ms of work), bar one item's. */
const JSON_PER_TURN = 256 * 1024;

/**
 * `JSON.stringify(body)` as UTF-8, or undefined for what JSON cannot show. A list (an array, a list's envelope, or
 * either in `_envelope`'s `body`) is written an item at a time, and a record of large texts a member at a time, with
 * a turn of the event loop after each 256 KB: a page of 21 descriptions of 1.7 MB (36 MB of JSON) held every other
 * request for a third of a second as one call, an event of 3.6 MB (7.2 MB with its JSON-LD) for 60 ms. The bytes are
 * those of one call.
 */
export async function jsonBytes(body: unknown): Promise<Buffer | undefined> {
  if (!inPieces(body)) {
    const text = JSON.stringify(body) as string | undefined;
    return text === undefined ? undefined : Buffer.from(text);
  }
  const out = new JsonOut();
  await out.value(body as unknown[] | Record<string, unknown>);
  return out.bytes();
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a value is written in pieces: an array, an object whose first value is one (`{events: [...], rest_url,
 * total, …}`) or whose `body` is a list (`_envelope`), or an object of large texts.
 */
function inPieces(value: unknown): boolean {
  if (Array.isArray(value)) return true;
  if (!isObject(value)) return false;
  for (const key in value) {
    if (Array.isArray(value[key])) return true;
    break;
  }
  return inPieces(value.body) || textLength(value) >= JSON_PER_TURN;
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

/** JSON written in pieces, made into bytes and handed back to the event loop every JSON_PER_TURN characters. */
class JsonOut {
  private readonly chunks: Buffer[] = [];
  private pieces: string[] = [];
  private pending = 0;

  /** An array an item at a time, an object a member at a time (the values JSON.stringify leaves out left out). */
  async value(value: unknown[] | Record<string, unknown>): Promise<void> {
    if (Array.isArray(value)) {
      this.write('[');
      for (let i = 0; i < value.length; i++) {
        if (i > 0) this.write(',');
        await this.part(value[i]);
      }
      this.write(']');
      return;
    }
    this.write('{');
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      this.write(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      await this.part(item);
    }
    this.write('}');
  }

  /** An item or member: in pieces itself when `inPieces` says so, else in one call; then a turn if one is due. */
  private async part(item: unknown): Promise<void> {
    if (inPieces(item)) await this.value(item as unknown[] | Record<string, unknown>);
    else this.write(JSON.stringify(item) ?? 'null'); // the `null` of an undefined item of an array, as JSON.stringify writes it
    if (this.pending >= JSON_PER_TURN) await this.flush();
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
