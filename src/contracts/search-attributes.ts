import type { defineSearchAttributeKey } from '@temporalio/common';
import { searchAttributeNames } from './wire-names';

/**
 * A key as the SDK's `defineSearchAttributeKey` makes it (a plain `{ name, type }`), written out so that
 * code which reaches Temporal without the SDK (the API's Lambda bundle) does not load `@temporalio/common`
 * and the protobuf definitions it brings (decision 0026).
 */
function key<T extends 'KEYWORD' | 'INT' | 'DOUBLE'>(name: string, type: T): ReturnType<typeof defineSearchAttributeKey<T>> {
  return { name, type };
}

/**
 * Search attributes errand sets on every workflow so the Temporal Web UI and visibility queries can
 * filter by them. The dev server registers them at start (see `src/dev/temporal-dev-server.ts`); a real
 * cluster needs `temporal operator search-attribute create` once (README, "Temporal cluster").
 */
export const searchAttributes = {
  /** `session` or `subagent`. */
  kind: key(searchAttributeNames.kind, 'KEYWORD'),
  /** Source name (recipe / agent / subrecipe) or `ad-hoc`. */
  source: key(searchAttributeNames.source, 'KEYWORD'),
  /** Workflow id of the parent session or subagent, if any. */
  parent: key(searchAttributeNames.parent, 'KEYWORD'),
  /** running / waiting / completed / max_turns / cancelled / failed / budget. */
  status: key(searchAttributeNames.status, 'KEYWORD'),
  /** Tenant of the API key that started it. */
  tenant: key(searchAttributeNames.tenant, 'KEYWORD'),
  /** `provider/model` of the route in use. */
  model: key(searchAttributeNames.model, 'KEYWORD'),
  /** Model calls made so far. */
  turns: key(searchAttributeNames.turns, 'INT'),
  /** US dollars its model calls and its descendants' cost so far (priced calls only); kept current as cost grows. */
  costUsd: key(searchAttributeNames.costUsd, 'DOUBLE'),
} as const;

/** Name → Temporal type, as the `--search-attribute` flags of `temporal server start-dev` want them. */
export const searchAttributeDefinitions: ReadonlyArray<{ name: string; type: 'Keyword' | 'Int' | 'Double' }> = [
  { name: 'ErrandKind', type: 'Keyword' },
  { name: 'ErrandSource', type: 'Keyword' },
  { name: 'ErrandParent', type: 'Keyword' },
  { name: 'ErrandStatus', type: 'Keyword' },
  { name: 'ErrandTenant', type: 'Keyword' },
  { name: 'ErrandModel', type: 'Keyword' },
  { name: 'ErrandTurns', type: 'Int' },
  { name: 'ErrandCostUsd', type: 'Double' },
];
