/** Structured JSON logs on stderr, one object per line. Never pass secrets or passwords in `fields`. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] < rank[level]) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * A run of like failures (a full disk, a flood of password checks), logged once when it starts and once when it
 * ends, with how many there were, rather than once each.
 */
export class Episode {
  private count = 0;
  private since = 0;

  constructor(private readonly log: Logger, private readonly level: 'warn' | 'error', private readonly started: string, private readonly ended: string) {}

  /** One more failure; the first of a run is logged with `fields`. */
  fail(fields: Record<string, unknown>): void {
    if (this.count++ > 0) return;
    this.since = Date.now();
    this.log[this.level](this.started, fields);
  }

  /** Things work again: ends the run, if any. */
  end(): void {
    if (this.count === 0) return;
    this.log.info(this.ended, { failures: this.count, seconds: Math.round((Date.now() - this.since) / 1000) });
    this.count = 0;
  }
}
