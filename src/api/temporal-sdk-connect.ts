import { Client, Connection } from '@temporalio/client';
import type { TemporalClientSettings } from './temporal-client-provider';

/**
 * Connects the SDK's client. A module of its own so that temporal-client-provider.ts reaches the SDK only
 * through `import()` of this file (an ES module of ours: the CommonJS SDK imported directly would come out
 * of an esbuild chunk with its exports only under `default`).
 */
export async function connectTemporalClient(settings: TemporalClientSettings): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect(settings.connection);
  return { client: new Client({ connection, namespace: settings.namespace }), connection };
}
