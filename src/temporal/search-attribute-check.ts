import type { NativeConnection } from '@temporalio/worker';
import { searchAttributeDefinitions } from '../contracts/search-attributes';

/** What a worker learned about the namespace's search attributes before it polls. */
export type SearchAttributeCheck =
  | { kind: 'ready' }
  | { kind: 'missing'; message: string }
  | { kind: 'unknown'; message: string };

/**
 * Asks the namespace which custom search attributes it knows, before a worker polls. A workflow that
 * upserts an attribute the namespace does not know fails its workflow task, over and over, for every run
 * that reaches the upsert (every priced run sets `ErrandCostUsd`): so a missing one is refused at start,
 * naming the command that registers it. Where the operator service cannot be asked (a role without the
 * right, a hosted namespace that serves it elsewhere), the answer is `unknown`: the worker says so and
 * starts, since refusing would stop a deployment that may be registered correctly.
 */
export async function checkSearchAttributes(connection: Pick<NativeConnection, 'operatorService'>, namespace: string): Promise<SearchAttributeCheck> {
  let registered: Set<string>;
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    registered = new Set(Object.keys(listed.customAttributes ?? {}));
  } catch (error) {
    return { kind: 'unknown', message: `could not list the search attributes of namespace "${namespace}" (${error instanceof Error ? error.message : String(error)}); errand's must be registered before workers start (docs/deploy.md)` };
  }
  const missing = searchAttributeDefinitions.filter((attribute) => !registered.has(attribute.name));
  if (missing.length === 0) return { kind: 'ready' };
  const flags = missing.map((attribute) => `--name ${attribute.name} --type ${attribute.type}`).join(' ');
  return {
    kind: 'missing',
    message:
      `namespace "${namespace}" does not know errand's search attribute${missing.length === 1 ? '' : 's'} ${missing.map((attribute) => attribute.name).join(', ')}: ` +
      `every run that sets one would fail its workflow task. Register them first: temporal operator search-attribute create --namespace ${namespace} ${flags}`,
  };
}
