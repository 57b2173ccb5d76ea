/**
 * Names Temporal knows errand's workflows by — the search attributes and the peek query — with no SDK
 * import, for code that talks to Temporal without the SDK (the CLI's light peek over Temporal's HTTP API).
 * `search-attributes.ts` and `subagent-messages.ts` define the SDK's keys and messages from these names.
 */

/** errand's search attribute names, by the field of {@link ErrandAttributeValues} (src/api/delegation-facts.ts) they fill. */
export const searchAttributeNames = {
  kind: 'ErrandKind',
  source: 'ErrandSource',
  parent: 'ErrandParent',
  status: 'ErrandStatus',
  tenant: 'ErrandTenant',
  model: 'ErrandModel',
  turns: 'ErrandTurns',
  costUsd: 'ErrandCostUsd',
} as const;

/** The subagent workflow's peek query. */
export const peekQueryName = 'peek';

/**
 * The names of the queries, signals and updates the API sends to errand's workflows
 * (`subagent-messages.ts` and `mcp-session.ts` define the SDK's messages from them).
 */
export const messageNames = {
  peekQuery: peekQueryName,
  transcriptQuery: 'transcript',
  pendingNoticesQuery: 'mcpPendingNotices',
  cancelSignal: 'cancel',
  sendMessageUpdate: 'sendMessage',
  approvalUpdate: 'approval',
  callToolUpdate: 'callTool',
  ackNoticesSignal: 'mcpAckNotices',
} as const;
