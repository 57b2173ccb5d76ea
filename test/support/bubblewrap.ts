import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where Debian's `bubblewrap` package puts the program. */
export const bwrapPath = '/usr/bin/bwrap';

/**
 * Installs Debian's bubblewrap if it is missing (`apt-get install -y bubblewrap`, and only if that fails
 * an `apt-get update` and a second try), like `ensureChromium`: the sandbox tests run it for real, and a
 * fresh machine must get it from the project's own files. Returns at once when it is there.
 */
export async function ensureBubblewrap(): Promise<string> {
  if (existsSync(bwrapPath)) return bwrapPath;
  const options = { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 };
  const install = () => run('apt-get', ['install', '-y', 'bubblewrap'], options);
  try {
    await install();
  } catch {
    await run('apt-get', ['update'], options);
    await install();
  }
  if (!existsSync(bwrapPath)) throw new Error(`apt-get installed bubblewrap but ${bwrapPath} does not exist`);
  return bwrapPath;
}
