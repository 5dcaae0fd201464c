/** Where progress goes: a terminal gets a bar redrawn in place, anything else (a file, a pipe, CI) plain lines. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  /** `n` more items are done. */
  advance(n?: number): void;
  /** The total turned out larger (more items found on the way). */
  grow(n: number): void;
  /** All done: the last state is shown and the line ended. */
  done(): void;
}

const WIDTH = 30;
const REDRAW_MS = 100;

/**
 * A progress bar for one task, on `stream` (stderr by default). On a terminal it is redrawn in place, at most every
 * 100 ms; otherwise a plain line `label: done/total (p%)` is written each time another tenth is reached, and at the
 * end, so logs stay readable.
 */
export function progressBar(label: string, total: number, stream: ProgressStream = process.stderr): Progress {
  let done = 0;
  let lastDraw = 0;
  let lastTenth = 0;
  let finished = false;
  const percent = () => (total > 0 ? Math.floor((done / total) * 100) : 100);
  const draw = (final: boolean) => {
    if (stream.isTTY) {
      const now = Date.now();
      if (!final && now - lastDraw < REDRAW_MS) return;
      lastDraw = now;
      const filled = total > 0 ? Math.min(WIDTH, Math.round((done / total) * WIDTH)) : WIDTH;
      stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${done}/${total}${final ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor(percent() / 10);
    if (tenth > lastTenth || final) {
      lastTenth = tenth;
      stream.write(`${label}: ${done}/${total} (${percent()}%)\n`);
    }
  };
  return {
    advance(n = 1) {
      done += n;
      if (done < total) draw(false);
    },
    grow(n) {
      total += n;
    },
    done() {
      if (finished) return;
      finished = true;
      draw(true);
    },
  };
}
