import type { RunAgentHookInput, RunAgentHookOutput } from '../contracts/run-activities';
import type { BlobStore } from './blob-store';
import { conversationSegment } from './conversation-store';
import { matchingHooks, runHooks, type HookRunnerDependencies } from './agent-hook-runner';
import { withHeartbeat, type HeartbeatSettings } from './heartbeat';
import { storedOutcome, storeOutcome } from './stored-outcomes';

/** What the hook activity needs: the hook runner's worker settings, the blob store, heartbeats. */
export interface AgentHookActivityDependencies extends HookRunnerDependencies {
  blobs: BlobStore;
  heartbeats?: HeartbeatSettings;
}

/**
 * Runs an agent file's `SubagentStart` or `Stop` hooks (decision 0032) and stores what they came to by
 * attempt and step, like a recipe's checks: a retried activity never runs finished hooks again, and the
 * workflow reads the outcome from its history on replay.
 */
export async function runAgentHook(input: RunAgentHookInput, deps: AgentHookActivityDependencies): Promise<RunAgentHookOutput> {
  const key = `outcomes/hooks/${conversationSegment(input.conversationId)}/${input.step}.json`;
  const stored = await storedOutcome<RunAgentHookOutput>(deps.blobs, key);
  if (stored) return stored;
  const groups = input.event === 'SubagentStart' ? input.hooks.start : input.hooks.stop;
  const outcome = await withHeartbeat((abortSignal) => runHooks(matchingHooks(groups, undefined), input.event, input.eventInput, {
    hooks: input.hooks,
    workflowId: input.workflowId,
    workingDir: input.workingDir,
    ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    abortSignal,
  }, deps), deps.heartbeats);
  return storeOutcome(deps.blobs, key, outcome);
}
