import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
/** What parseArgs reads for such options: a flag is a boolean, an option with a default a string, any other maybe none. */
type Values<T extends Options> = {
  [K in keyof T]: T[K] extends { type: 'boolean' } ? boolean : T[K] extends { default: string } ? string : string | undefined;
};

/**
 * A script's options, read as `parseArgs` reads them (strict: an unknown option or a missing value is an error), with
 * `--help` / `-h` added: the usage text on standard output and exit 0. A mistake on the command line is said in one
 * line followed by the usage text, on standard error, and exits 2, as the CLI does, instead of a stack trace.
 */
export function commandLine<T extends Options>(name: string, options: T, usage: string, args: string[] = process.argv.slice(2)): Values<T> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (err) {
    usageError(name, (err as Error).message, usage);
  }
  if (values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return values as Values<T>;
}

/** Says what is wrong with the command line, then the usage text, on standard error, and exits 2. */
export function usageError(name: string, message: string, usage: string): never {
  process.stderr.write(`${name}: ${message}\n\n${usage}`);
  process.exit(2);
}

/** An option's value as a whole number of at least `min`, or a usage error naming the option. */
export function wholeNumber(name: string, option: string, value: string, min: number, usage: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) usageError(name, `--${option} must be a whole number of at least ${min}, not "${value}"`, usage);
  return n;
}
