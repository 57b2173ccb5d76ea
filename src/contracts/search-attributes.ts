import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { searchAttributeNames } from './wire-names';

/**
 * Search attributes errand sets on every workflow so the Temporal Web UI and visibility queries can
 * filter by them. The dev server registers them at start (see `src/dev/temporal-dev-server.ts`); a real
 * cluster needs `temporal operator search-attribute create` once (README, "Temporal cluster").
 */
export const searchAttributes = {
  /** `session` or `subagent`. */
  kind: defineSearchAttributeKey(searchAttributeNames.kind, SearchAttributeType.KEYWORD),
  /** Source name (recipe / agent / subrecipe) or `ad-hoc`. */
  source: defineSearchAttributeKey(searchAttributeNames.source, SearchAttributeType.KEYWORD),
  /** Workflow id of the parent session or subagent, if any. */
  parent: defineSearchAttributeKey(searchAttributeNames.parent, SearchAttributeType.KEYWORD),
  /** running / waiting / completed / max_turns / cancelled / failed / budget / time_budget / cost_budget. */
  status: defineSearchAttributeKey(searchAttributeNames.status, SearchAttributeType.KEYWORD),
  /** Tenant of the API key that started it. */
  tenant: defineSearchAttributeKey(searchAttributeNames.tenant, SearchAttributeType.KEYWORD),
  /** `provider/model` of the route in use. */
  model: defineSearchAttributeKey(searchAttributeNames.model, SearchAttributeType.KEYWORD),
  /** Model calls made so far. */
  turns: defineSearchAttributeKey(searchAttributeNames.turns, SearchAttributeType.INT),
  /** US dollars its model calls and its descendants' cost so far (priced calls only); kept current as cost grows. */
  costUsd: defineSearchAttributeKey(searchAttributeNames.costUsd, SearchAttributeType.DOUBLE),
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
