import { loadConfig, type ErrandConfig } from '../settings/config';
import { installLogging, providerApiKeys } from '../observability/logging';
import { runWorker } from './errand-worker';

// The worker's entry: the image runs `node dist/worker/main.js` (Dockerfile). Configuration comes from the
// environment; an error in it ends the process with a message that names the setting.
if (require.main === module) {
  let config: ErrandConfig;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`errand worker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  installLogging({ secrets: providerApiKeys(config.providers) });
  runWorker(config).catch((error: unknown) => {
    process.stderr.write(`errand worker: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
