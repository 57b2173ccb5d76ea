import { proxyActivities } from '@temporalio/workflow';
import { nonRetryableFailureTypes } from '../contracts/failures';
import { workflowRunHeartbeatTimeoutMs, workflowScriptRoundMs } from '../contracts/limits/workflow-scripts';
import type { WorkflowRunActivities } from '../contracts/workflow-run-activities';

/* The activities of a workflow run (src/workflows/workflow-run.ts): its script rounds and journal writes, and its agents' plans. */

const nonRetryableErrorTypes = [...nonRetryableFailureTypes];

export const rounds = proxyActivities<WorkflowRunActivities>({
  // A round runs the script in a thread stopped at its time limit; it may run again once per agent
  // definition the script names (read through the sources), and wait for a free thread.
  startToCloseTimeout: workflowScriptRoundMs * 12,
  heartbeatTimeout: workflowRunHeartbeatTimeoutMs,
  retry: { initialInterval: 500, maximumAttempts: 5, nonRetryableErrorTypes },
});
export const planning = proxyActivities<WorkflowRunActivities>({
  startToCloseTimeout: 10 * 60_000,
  heartbeatTimeout: workflowRunHeartbeatTimeoutMs,
  retry: { initialInterval: 500, maximumAttempts: 10, nonRetryableErrorTypes },
});
