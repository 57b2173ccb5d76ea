import type { AgentHookGroup } from '../contracts/agent-hooks';
import type { JsonObject } from '../contracts/json';
import type { RunAgentHookInput, RunAgentHookOutput } from '../contracts/run-activities';
import type { BlobStore } from './blob-store';
import { conversationSegment, type ConversationStore } from './conversation-store';
import { hookToolNames, matchingHooks } from './agent-hook-matching';
import { runHooks, type HookRunnerDependencies } from './agent-hook-runner';
import { withHeartbeat, type HeartbeatSettings } from './heartbeat';
import { mayHaveRun } from './first-writer-wins';
import { hookProgress } from './hook-progress';
import { storedOutcome, storeOutcome } from './stored-outcomes';
import { resolveTextParts } from './text-parts';

/** What the hook activity needs: the hook runner's worker settings, the blob store, heartbeats. */
export interface AgentHookActivityDependencies extends HookRunnerDependencies {
  blobs: BlobStore;
  /** Where the texts a PostToolUse hook's `tool_response` refers to are stored (the worker's conversation store). */
  conversations?: ConversationStore;
  heartbeats?: HeartbeatSettings;
}

/**
 * Runs an agent file's `SubagentStart` or `Stop` hooks, or the `PreToolUse` / `PostToolUse` hooks around a
 * call of an orchestration tool (which the workflow runs itself, decision 0032), and stores what they came
 * to by attempt and step, like a recipe's checks (and each hook's as it finishes): a retried activity never runs finished hooks again, and
 * the workflow reads the outcome from its history on replay. A tool event's hooks get the same input as
 * around a tool that runTool runs: `tool_name` (the Claude Code name), `tool_input`, `tool_use_id`,
 * `errand_tool_name`, and `tool_response` after the call.
 */
export async function runAgentHook(input: RunAgentHookInput, deps: AgentHookActivityDependencies): Promise<RunAgentHookOutput> {
  const key = `outcomes/hooks/${conversationSegment(input.conversationId)}/${input.step}.json`;
  const stored = await storedOutcome<RunAgentHookOutput>(deps.blobs, key);
  if (stored) return stored;
  let hooks: AgentHookGroup['hooks'];
  let eventInput: JsonObject = input.eventInput;
  if (input.event === 'PreToolUse' || input.event === 'PostToolUse') {
    const toolName = input.toolName ?? '';
    const names = hookToolNames(toolName);
    hooks = matchingHooks(input.event === 'PreToolUse' ? input.hooks.preToolUse : input.hooks.postToolUse, names);
    eventInput = { tool_name: names[0] ?? toolName, ...input.eventInput, errand_tool_name: toolName };
    if (input.event === 'PostToolUse' && input.toolResponse) {
      eventInput.tool_response = deps.conversations
        ? await resolveTextParts(input.toolResponse, { conversations: deps.conversations, blobs: deps.blobs })
        : input.toolResponse.map((part) => (typeof part === 'string' ? part : '[…]')).join('');
    }
  } else {
    hooks = matchingHooks(input.event === 'SubagentStart' ? input.hooks.start : input.hooks.stop, undefined);
  }
  const matched = hooks;
  // Each hook's outcome is stored as it finishes: a retry resumes after the last one (a hook runs once).
  const progress = await hookProgress(deps.blobs, `outcomes/hooks/${conversationSegment(input.conversationId)}/${input.step}`, matched.length, mayHaveRun());
  const outcome = await withHeartbeat((abortSignal) => runHooks(matched, input.event, eventInput, {
    hooks: input.hooks,
    workflowId: input.workflowId,
    workingDir: input.workingDir,
    ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    abortSignal,
  }, deps, progress), deps.heartbeats);
  return storeOutcome(deps.blobs, key, outcome);
}
