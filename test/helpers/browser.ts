import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium: CHROMIUM_PATH, else `chromium` on PATH. */
function findChromium(): string | null {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return existsSync(configured) ? configured : null;
  try {
    return execFileSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

const executable = findChromium();
const required = process.env.CI === 'true';

/**
 * Whether the browser tests of a file are skipped: when no Chromium is installed, except on CI (CI=true), where they
 * then fail. Warns once per file that skips them.
 */
export function skipBrowserTests(file: string): boolean {
  if (executable || required) return false;
  console.warn(`${file}: the browser tests are skipped: no Chromium found (install Debian's \`chromium\`, or set CHROMIUM_PATH)`);
  return true;
}

/** A headless Chromium, offline but for what the test serves; close it when done. */
export async function launchChromium(): Promise<Browser> {
  if (!executable) throw new Error("CI=true needs Chromium for the browser tests: install Debian's `chromium` or set CHROMIUM_PATH");
  return chromium.launch({
    executablePath: executable,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
