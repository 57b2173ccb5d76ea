import { loadConfig } from '../../src/settings/config';
import { createLogger, installLogging, providerApiKeys } from '../../src/observability/logging';
import { runWorker } from '../../src/worker/errand-worker';

/**
 * A worker process set up the way `src/worker/main.ts` is to be: `installLogging` first, then the worker.
 * The logging test starts it with a fake LLM key and a fake API key in its environment and reads what
 * it writes. It also logs one API-style request line, as the API's logger would, carrying the API key.
 */

const apiKey = process.env.ERRAND_TEST_API_KEY ?? '';
const config = loadConfig();
installLogging({ secrets: [...providerApiKeys(config.providers), apiKey] });
createLogger('api').info('request accepted', { method: 'POST', path: '/v1/delegations', authorization: `Bearer ${apiKey}`, note: `client sent ${apiKey}` });

runWorker(config).catch((error: unknown) => {
  process.stderr.write(`logging worker: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
