import { patched } from '@temporalio/workflow';
import type { ToolCallRef } from '../contracts/activities';
import { inlineTextLimit } from '../contracts/limits/workflow';
import { hookActivityTimeoutMs } from '../domain/activity-time-limits';
import { preview, stopHookFeedback, stopHookTooLate, toolHookAdditions, toolHookBlocked, type StopTooLate } from '../domain/subagent-prompt';
import type { Agent } from './agent';
import type { OrchestrationTools, ToolOutcome } from './tool-outcome';

/*
 * The agent file's hooks (decision 0032) where the agent loop runs them itself: its Stop hooks when the
 * model stops, and PreToolUse / PostToolUse around the orchestration tools (runTool runs them around the
 * other tools). Each hook run is an activity.
 */

/**
 * Runs the agent file's Stop hooks (`SubagentStop`) for the answer stored at `seq`. Where the subagent could
 * go on (`tooLate` undefined), a block stores the hooks' feedback as the next message and returns true: the
 * run goes on. On its last turn or where a structured-output run ends, a block cannot send it back: the
 * feedback is noted in the history with the hooks' other notes, and the run ends as it would have.
 */
export async function runStopHooks(agent: Agent, seq: number, text: string, tooLate?: StopTooLate): Promise<boolean> {
  const hooks = agent.options.hooks;
  if (!hooks) return false;
  // The activity outlasts its hooks: a timed-out attempt would be retried and run them again.
  const stop = await agent.activities.checks.runAgentHook.executeWithOptions({ summary: `Stop hooks of ${hooks.agentName}`, startToCloseTimeout: hookActivityTimeoutMs(hooks.stop) }, [{
    workflowId: agent.options.workflowId,
    conversationId: agent.conversationId,
    step: `stop-${seq}`,
    event: 'SubagentStop',
    hooks,
    workingDir: agent.options.workingDir,
    eventInput: { stop_hook_active: agent.state.stopHookBlocked, last_assistant_message: preview(text, inlineTextLimit) },
    ...(agent.options.toolPolicy ? { toolPolicy: agent.options.toolPolicy } : {}),
  }]);
  for (const note of stop.notes) agent.remember('event', `[hook] ${note}`);
  if (!stop.blocked) return false;
  if (tooLate) {
    agent.remember('event', `[hook] ${stopHookTooLate(hooks.agentName, tooLate, stop.feedback)}`);
    return false;
  }
  agent.blockStop();
  await agent.append([{ role: 'user', content: stopHookFeedback(stop.feedback) }], 'store Stop hook feedback');
  return true;
}

/**
 * Runs an orchestration tool call (the workflow's own), inside the agent file's PreToolUse and
 * PostToolUse hooks whose matchers match it, as runTool runs the other tools inside theirs (decision
 * 0032): a blocking PreToolUse hook stops the call and its feedback is the result; PostToolUse feedback
 * follows a result that is not an error. The hooks are activities only for a call that has some.
 */
export async function runOrchestrationTool(agent: Agent, orchestration: OrchestrationTools, call: ToolCallRef, assistantSeq: number, index: number): Promise<ToolOutcome> {
  const hooks = agent.options.hooks;
  const pre = hooks?.orchestrationTools?.preToolUse?.includes(call.name) === true;
  const post = hooks?.orchestrationTools?.postToolUse?.includes(call.name) === true;
  if (!hooks || !(pre || post) || !patched('orchestration-tool-hooks')) return orchestration.run(call, { assistantSeq, index });
  const runHooks = (event: 'PreToolUse' | 'PostToolUse', response?: ToolOutcome) => agent.activities.checks.runAgentHook.executeWithOptions({
    summary: `${event} hooks of ${hooks.agentName} · ${call.name}`,
    startToCloseTimeout: hookActivityTimeoutMs(event === 'PreToolUse' ? hooks.preToolUse : hooks.postToolUse),
  }, [{
    workflowId: agent.options.workflowId,
    conversationId: agent.conversationId,
    step: `${event === 'PreToolUse' ? 'pre' : 'post'}-tool-${assistantSeq}-${index}`,
    event,
    hooks,
    workingDir: agent.options.workingDir,
    eventInput: { tool_input: call.arguments ?? {}, tool_use_id: call.id },
    toolName: call.name,
    ...(response ? { toolResponse: response.parts } : {}),
    ...(agent.options.toolPolicy ? { toolPolicy: agent.options.toolPolicy } : {}),
  }]);
  const before = pre ? await runHooks('PreToolUse') : undefined;
  for (const note of before?.notes ?? []) agent.remember('event', `[hook] ${note}`);
  if (before?.blocked) return { parts: [toolHookBlocked(call.name, hooks.agentName, before.feedback)], isError: true };
  const outcome = await orchestration.run(call, { assistantSeq, index });
  // PostToolUse in Claude Code follows a call that succeeded.
  const after = post && !outcome.isError ? await runHooks('PostToolUse', outcome) : undefined;
  for (const note of after?.notes ?? []) agent.remember('event', `[hook] ${note}`);
  const added = toolHookAdditions(before, after);
  return added.length > 0 ? { ...outcome, parts: [...outcome.parts, ...added.map((text) => `\n\n${text}`)] } : outcome;
}
