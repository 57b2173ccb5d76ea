import { ensureBuiltArtifacts } from './built-artifacts';

/**
 * The unit project's global setup: the CLI bundle fresh (rebuilt when a source is newer), so a unit test
 * that runs `bin/errand.js` runs what users run. A few ms when it is fresh, a few seconds when not.
 */
export async function setup(): Promise<void> {
  const built = await ensureBuiltArtifacts({ worker: false });
  if (built.length > 0) process.stdout.write(`built for this run: ${built.join(', ')}\n`);
}
