import type { SubagentPeek } from '../contracts/subagent-result';
import { usageView } from '../domain/model-cost';
import type { AgentLook } from './agent-look';

/*
 * What an agent shows of itself (its peek view), read off its state. JSON only: a peek crosses a query and
 * a signal. (What it carries into its next run is its state, whole: src/domain/agent-state.ts.)
 */

/** Peek view of an agent. Durations are left to the reader (a query's clock stands still). */
export function peekAgent(agent: AgentLook, maxTurns: number): SubagentPeek {
  return {
    workflowId: agent.options.workflowId,
    label: agent.options.label,
    state: agent.status,
    startedAt: agent.state.startedAt,
    lastActivityAt: agent.state.lastActivityAt,
    turns: agent.state.turns,
    maxTurns,
    toolCalls: agent.state.toolCalls,
    ...(agent.state.context ? { compactions: agent.state.context.compactions } : {}),
    ...(agent.state.retryView ? { retry: agent.state.retryView } : {}),
    lastToolCall: agent.state.lastToolCall,
    lastAssistantText: agent.state.lastAssistantText,
    usage: usageView(agent.state.usage),
    totalUsage: usageView(agent.totalUsage()),
    model: agent.modelName,
    ...(agent.state.tasks.length > 0
      ? {
          tasks: agent.state.tasks.map((task) => ({
            taskId: task.taskId,
            workflowId: task.workflowId,
            ...(task.kind ? { kind: task.kind } : {}),
            state: task.state,
            description: task.description,
            turns: task.peek?.turns ?? task.result?.turns ?? 0,
            usage: usageView(task.totalUsage),
          })),
        }
      : {}),
    ...(agent.state.pendingMessages.length > 0 ? { queuedMessages: agent.state.pendingMessages.length } : {}),
    ...(agent.approvals.pending.length > 0 ? { pendingApprovals: [...agent.approvals.pending] } : {}),
  };
}
