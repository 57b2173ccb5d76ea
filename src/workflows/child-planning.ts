import type { PlanDelegationOutput } from '../contracts/activities';
import type { TaskRecord } from '../contracts/carried-agent-state';
import type { JsonObject } from '../contracts/json';
import { leftForChildren } from '../domain/child-budgets';
import type { Agent } from './agent';
import type { CallPosition } from './child-messages';
import { forkReference } from './conversation';

/**
 * Asks the planning activity to turn a `delegate` call into a child input: the call's arguments, and what
 * the parent gives the child (its tools, route, recipe, tenant, what is left of its caps, a fork's
 * conversation by reference).
 */
export function planChild(agent: Agent, record: TaskRecord, args: JsonObject, position: CallPosition): Promise<PlanDelegationOutput> {
  const options = agent.options;
  // With budgets that add up, a child is offered what its running siblings do not hold.
  const remaining = agent.spendAddsUp ? leftForChildren(agent.remainingCaps(), agent.state.tasks) : agent.remainingCaps();
  return agent.activities.orchestration.planDelegation.executeWithOptions({ summary: `plan ${record.taskId}: ${record.description}` }, [{
    request: args,
    parent: {
      workflowId: options.workflowId,
      taskId: record.taskId,
      childDepth: options.depth + 1,
      maxDepth: options.maxDepth,
      workingDir: options.workingDir,
      ...(options.route ? { route: options.route } : {}),
      toolsets: options.toolsets,
      ...(options.toolFilter ? { toolFilter: options.toolFilter } : {}),
      ...(options.recipe ? { recipe: options.recipe } : {}),
      ...(options.toolPolicy ? { toolPolicy: options.toolPolicy } : {}),
      ...(options.recipeServers ? { recipeServers: options.recipeServers } : {}),
      ...(options.tenant ? { tenant: options.tenant } : {}),
      ...(remaining.tokens !== undefined ? { remainingBudget: remaining.tokens } : {}),
      ...(remaining.timeMs !== undefined ? { remainingTimeMs: remaining.timeMs } : {}),
      ...(remaining.costMicroUsd !== undefined ? { remainingCostMicroUsd: remaining.costMicroUsd } : {}),
      approvers: options.approvers,
      activity: options.activity,
      // Only a fork needs the conversation (by reference): other plans stay as small as before.
      ...(args.fork === true ? { conversation: forkReference(agent, position.assistantSeq) } : {}),
      ...(args.fork === true && agent.lastPromptTokens !== undefined ? { conversationTokens: agent.lastPromptTokens } : {}),
    },
  }]);
}
