import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Debian's Chromium for browser tests. Playwright's own browser download is not used (it would fetch a
 * browser build from outside the package registries); `playwright-core` drives the system Chromium.
 */

/** Where Debian's `chromium` package puts the browser. */
export const chromiumPath = '/usr/bin/chromium';

/**
 * Installs Debian's Chromium if it is missing: `apt-get install -y chromium`, and only if that fails an
 * `apt-get update` and a second try (the package lists may be missing or stale on a fresh machine).
 * Returns at once when the binary exists, so every browser test can call it; a first install takes a
 * minute or two, so call it from a hook with a long timeout.
 */
export async function ensureChromium(): Promise<string> {
  if (existsSync(chromiumPath)) return chromiumPath;
  const options = { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 };
  const install = () => run('apt-get', ['install', '-y', 'chromium'], options);
  try {
    await install();
  } catch {
    await run('apt-get', ['update'], options);
    await install();
  }
  if (!existsSync(chromiumPath)) throw new Error(`apt-get installed chromium but ${chromiumPath} does not exist`);
  return chromiumPath;
}

/**
 * Command-line switches for a quiet headless Chromium in a test: no GPU, no sandbox (tests run as root),
 * and no background traffic (updates, sync, QUIC), which the machine's network would refuse anyway.
 * The profile folder is not among them: Playwright refuses `--user-data-dir` in `args` and takes it as the
 * first argument of `launchPersistentContext` (see {@link freshProfileDirectory}).
 */
export function chromiumArguments(): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
}

/** A new, empty Chromium profile folder, so no state leaks between launches. */
export function freshProfileDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'errand-chromium-'));
}
