/**
 * The one rule for every workflow id errand names (DESIGN.md convention 10): ids are made of
 * `[A-Za-z0-9._-]` parts joined by `~`, and never hold a `/`. Temporal's HTTP API, which the API reaches
 * Temporal through in the dev stack and on the Lambda, cannot address an id with a `/` (its path keeps
 * `%2F` encoded and answers 404), while `~` is unreserved in URLs (RFC 3986: never percent-encoded) and is
 * in none of the parts (tenant names are `[A-Za-z0-9._-]`, auth-config.ts; days `YYYY-MM-DD`; task ids
 * `task-<n>`; short ids hex), so every id splits back into its parts unambiguously.
 */

/** What joins the parts of a workflow id. */
export const workflowIdSeparator = '~';

/** What joined a child's id to its parent's before the rule (children started before it keep these ids). */
export const legacyChildSeparator = '/';

/** The id of a delegation or session errand starts from outside a workflow: `errand-<short id>`. */
export function errandWorkflowId(shortId: string): string {
  return `errand-${shortId}`;
}

/** The id of a parent's task: `<parent id>~task-<n>`. */
export function childWorkflowId(parentWorkflowId: string, taskId: string): string {
  return `${parentWorkflowId}${workflowIdSeparator}${taskId}`;
}

/** The id of the workflow that keeps a tenant's spend of one UTC day: `errand-spend~<tenant>~<day>`. */
export function tenantSpendWorkflowId(tenant: string, day: string): string {
  return ['errand-spend', tenant, day].join(workflowIdSeparator);
}

/** The last part of a workflow id (a task's `task-<n>`), whichever separator made it. */
export function lastIdPart(workflowId: string): string {
  return workflowId.slice(Math.max(workflowId.lastIndexOf(workflowIdSeparator), workflowId.lastIndexOf(legacyChildSeparator)) + 1);
}

/** The id of the `n`-th agent (1 for the first) of a workflow run: `<run id>~agent-<n>`. */
export function workflowAgentId(runWorkflowId: string, n: number): string {
  return `${runWorkflowId}${workflowIdSeparator}agent-${n}`;
}
