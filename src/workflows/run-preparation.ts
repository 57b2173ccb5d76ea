import { log, patched } from '@temporalio/workflow';
import { hookActivityTimeoutMs } from '../domain/activity-time-limits';
import type { SubagentInput, WorktreeOutcome } from '../contracts/subagent';
import type { Agent } from './agent';

/**
 * What a delegation sets up before its first turn and tidies after its last (SEMANTICS §5): the git
 * worktree of `isolation: worktree`, and the stored output schema of a structured-output run. Both are
 * activities that store their outcome, so a replay or a retry makes nothing twice.
 */

/**
 * Before the first turn: makes the worktree (the agent's tools work there from now on) and stores the
 * output schema (model calls then name it by key). `name` is the branch name wanted: the task id, or the
 * workflow id of a delegation the API or CLI started. A worktree that cannot be made ends the run
 * `failed` (the activity's failure is not retried: it names what to fix).
 */
export async function prepareRun(agent: Agent, input: SubagentInput, name: string): Promise<{ startContext: string[] }> {
  if (input.isolation === 'worktree') {
    const worktree = await agent.activities.run.prepareWorktree.executeWithOptions({ summary: `worktree errand/${name}` }, [{
      workflowId: agent.options.workflowId,
      conversationId: agent.options.conversationId,
      workingDir: input.workingDir,
      name,
    }]);
    agent.workIn(worktree);
  }
  if (input.outputSchema) {
    const schemaKey = await agent.activities.run.storeOutputSchema.executeWithOptions({ summary: 'store output schema' }, [{
      conversationId: agent.options.conversationId,
      schema: input.outputSchema,
    }]);
    agent.expectFinalOutput(schemaKey);
  }
  // An agent file's SubagentStart hooks (decision 0032): what they print joins the system prompt.
  if (input.hooks?.start && patched('agent-file-hooks')) {
    const started = await agent.activities.checks.runAgentHook.executeWithOptions({ summary: `SubagentStart hooks of ${input.hooks.agentName}`, startToCloseTimeout: hookActivityTimeoutMs(input.hooks.start) }, [{
      workflowId: agent.options.workflowId,
      conversationId: agent.options.conversationId,
      step: 'start',
      event: 'SubagentStart',
      hooks: input.hooks,
      workingDir: agent.options.workingDir,
      eventInput: {},
      ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    }]);
    for (const note of started.notes) agent.remember('event', `[hook] ${note}`);
    return { startContext: started.context };
  }
  return { startContext: [] };
}

/**
 * At the end: removes the worktree and its branch when nothing changed in them, keeps them otherwise.
 * Never throws: a worktree that could not be checked is reported as kept (nothing is lost that way).
 */
export async function finishWorktree(agent: Agent): Promise<WorktreeOutcome | undefined> {
  const worktree = agent.state.worktree;
  if (!worktree) return undefined;
  try {
    return await agent.activities.run.finishWorktree.executeWithOptions({ summary: `tidy worktree ${worktree.branch}` }, [{ conversationId: agent.options.conversationId, worktree }]);
  } catch (error) {
    log.warn('could not check the worktree; it is kept', { branch: worktree.branch, error: String(error) });
    return { branch: worktree.branch, path: worktree.relativePath, changed: true };
  }
}
