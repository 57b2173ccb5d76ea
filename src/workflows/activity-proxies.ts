import { ActivityCancellationType, proxyActivities, proxyLocalActivities, type ActivityInterfaceFor, type LocalActivityInterfaceFor } from '@temporalio/workflow';
import type { AgentLoopActivities, OrchestrationActivities } from '../contracts/activities';
import type { RunActivities } from '../contracts/run-activities';
import { nonRetryableFailureTypes } from '../contracts/failures';
import { compactionMaxCalls, localToolCallTimeoutMs, storeCallTimeoutMs } from '../contracts/limits/workflow';
import type { SubagentActivitySettings } from '../contracts/subagent';

/** The activity proxies of one agent workflow, each with the timeouts and retries its kind of work needs. */
export interface AgentActivityProxies {
  /** Model calls: heartbeat, long timeout, retried on 429/5xx. */
  model: ActivityInterfaceFor<AgentLoopActivities>;
  /**
   * Compaction: like a model call, but it may make up to `compactionMaxCalls` summarising calls, so its time
   * limit is that many model calls' (a slow model summarising a long history must not time out and start
   * over, again and again). Heartbeats still notice a lost worker within the heartbeat timeout.
   */
  compaction: ActivityInterfaceFor<AgentLoopActivities>;
  /** Tool calls: heartbeat; retried only when the worker was lost (tool errors are results). */
  tools: ActivityInterfaceFor<AgentLoopActivities>;
  /**
   * Fast built-in file tools (`ToolCallRef.local`) as local activities: run by the worker inside the
   * workflow task that received the model's answer, recorded as a marker — no workflow task and no
   * activity task of their own. They store their result by key like any tool call, so a retry (or a
   * replay after a lost worker) finds it.
   */
  localTools: LocalActivityInterfaceFor<AgentLoopActivities>;
  /**
   * Conversation store reads and writes as local activities: a few blob reads and writes each, idempotent
   * per sequence number (the first write wins), so re-running one after a lost workflow task is harmless.
   */
  store: LocalActivityInterfaceFor<AgentLoopActivities>;
  /** Sources, planning, model listing and talking to children. */
  orchestration: ActivityInterfaceFor<OrchestrationActivities>;
  /** The stored output schema and the worktree's git commands: short, retried. */
  run: ActivityInterfaceFor<RunActivities>;
  /** A recipe's checks: heartbeat, cancellable; each call sets its own time limit from the check's. */
  checks: ActivityInterfaceFor<RunActivities>;
}

/** Failure types that no retry can fix. */
const nonRetryableErrorTypes = [...nonRetryableFailureTypes];

/** Builds the proxies from the workflow's activity settings. */
export function createActivityProxies(settings: SubagentActivitySettings): AgentActivityProxies {
  /** Options of activities that call the model: heartbeat, the given time limit, retried on 429/5xx. */
  const modelCalls = (startToCloseTimeout: number) => ({
    startToCloseTimeout,
    heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
    // Wait for the activity to acknowledge cancellation, so "cancelled" means the HTTP call was aborted.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // First retry after 100 ms (a call lost with its worker, a reset connection), then ×4: with the default
    // 6 attempts the waits are 0.1, 0.4, 1.6, 6.4 and 25.6 s — about the 31 s an outage could last with
    // 1 s × 2 before, but a crash costs 0.9 s less (decisions 0014, 0015). A 429's Retry-After wins.
    retry: { initialInterval: 100, backoffCoefficient: 4, maximumInterval: 60_000, maximumAttempts: settings.modelMaximumAttempts, nonRetryableErrorTypes },
  });
  return {
    model: proxyActivities<AgentLoopActivities>(modelCalls(settings.modelCallTimeoutMs)),
    compaction: proxyActivities<AgentLoopActivities>(modelCalls(settings.modelCallTimeoutMs * compactionMaxCalls)),
    tools: proxyActivities<AgentLoopActivities>({
      startToCloseTimeout: settings.toolCallTimeoutMs,
      heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: 1_000, maximumAttempts: 3, nonRetryableErrorTypes },
    }),
    localTools: proxyLocalActivities<AgentLoopActivities>({
      startToCloseTimeout: Math.min(settings.toolCallTimeoutMs, localToolCallTimeoutMs),
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: 1_000, maximumAttempts: 3, nonRetryableErrorTypes },
    }),
    store: proxyLocalActivities<AgentLoopActivities>({
      startToCloseTimeout: storeCallTimeoutMs,
      retry: { initialInterval: 500, maximumAttempts: 10, nonRetryableErrorTypes },
    }),
    orchestration: proxyActivities<OrchestrationActivities>({
      // Planning may clone a git-synced store (several git commands); it heartbeats while it works.
      startToCloseTimeout: 10 * 60_000,
      heartbeatTimeout: 60_000,
      retry: { initialInterval: 500, maximumAttempts: 10, nonRetryableErrorTypes },
    }),
    run: proxyActivities<RunActivities>({
      // A worktree of a large repository takes a while to check out; each git command has its own limit.
      startToCloseTimeout: 10 * 60_000,
      retry: { initialInterval: 500, maximumAttempts: 5, nonRetryableErrorTypes },
    }),
    checks: proxyActivities<RunActivities>({
      startToCloseTimeout: settings.toolCallTimeoutMs,
      heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: 1_000, maximumAttempts: 3, nonRetryableErrorTypes },
    }),
  };
}
