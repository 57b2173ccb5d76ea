import { carriedTranscriptEntries, previewLength } from '../contracts/limits';
import type { CarriedAgentState } from '../contracts/carried-agent-state';
import { zeroUsage } from '../contracts/model';
import type { SubagentPeek } from '../contracts/subagent-result';
import { usageView } from '../domain/model-cost';
import { carriedRegistry } from '../domain/task-registry';
import type { Agent } from './agent';

/*
 * What an agent shows of itself (its peek view) and what it carries into its next run. Both are read off
 * the agent's state and are JSON only: a peek crosses a query and a signal, the carried state
 * continue-as-new.
 */

/** Peek view of an agent. Durations are left to the reader (a query's clock stands still). */
export function peekAgent(agent: Agent, maxTurns: number): SubagentPeek {
  return {
    workflowId: agent.options.workflowId,
    label: agent.options.label,
    state: agent.state,
    startedAt: agent.startedAt,
    lastActivityAt: agent.lastActivityAt,
    turns: agent.turns,
    maxTurns,
    toolCalls: agent.toolCalls,
    ...(agent.context ? { compactions: agent.context.compactions } : {}),
    ...(agent.retryView ? { retry: agent.retryView } : {}),
    lastToolCall: agent.lastToolCall,
    lastAssistantText: agent.lastAssistantText,
    usage: usageView(agent.usage),
    totalUsage: usageView(agent.totalUsage()),
    model: agent.modelName,
    ...(agent.registry.tasks.length > 0
      ? {
          tasks: agent.registry.tasks.map((task) => ({
            taskId: task.taskId,
            workflowId: task.workflowId,
            state: task.state,
            description: task.description,
            turns: task.peek?.turns ?? task.result?.turns ?? 0,
            usage: usageView(task.totalUsage),
          })),
        }
      : {}),
    ...(agent.pendingMessages.length > 0 ? { queuedMessages: agent.pendingMessages.length } : {}),
    ...(agent.approvals.pending.length > 0 ? { pendingApprovals: agent.approvals.pending } : {}),
  };
}

/** State to carry into the next run (continue-as-new): previews and references, never whole outputs. */
export function carriedAgentState(agent: Agent, phase: CarriedAgentState['phase']): CarriedAgentState {
  agent.pruneTasks();
  const registry = carriedRegistry(agent.registry, previewLength);
  return {
    phase,
    startedAt: agent.startedAt,
    lastActivityAt: agent.lastActivityAt,
    length: agent.length,
    turns: agent.turns,
    toolCalls: agent.toolCalls,
    usage: agent.usage,
    // Absent until a record was dropped (the ledger starts as the shared zero).
    ...(agent.retiredUsage !== zeroUsage ? { retiredUsage: agent.retiredUsage } : {}),
    lastToolCall: agent.lastToolCall,
    lastAssistantText: agent.lastAssistantText,
    ...(agent.lastText ? { lastText: agent.lastText } : {}),
    tasks: registry.tasks,
    nextTaskNumber: registry.nextTaskNumber,
    announcedApprovals: agent.announcedApprovals,
    pendingNotices: agent.pendingNotices,
    ...(agent.lastNoticeNumber > 0 ? { lastNoticeNumber: agent.lastNoticeNumber } : {}),
    pendingMessages: agent.pendingMessages,
    recentMessageIds: agent.recentMessageIds,
    runTurns: agent.turnsThisRun,
    ...(agent.stopHookBlocked ? { stopHookBlocked: true as const } : {}),
    answers: agent.answers,
    ...(agent.context ? { context: agent.context } : {}),
    ...(agent.pending ? { pending: agent.pending } : {}),
    ...(agent.attempt.number > 1 ? { attempt: agent.attempt } : {}),
    ...(agent.retryView ? { retryView: agent.retryView } : {}),
    ...(agent.finalOutput ? { finalOutput: agent.finalOutput } : {}),
    ...(agent.worktree ? { worktree: agent.worktree } : {}),
    // Only the recent transcript travels: the whole conversation is in the conversation store.
    transcript: agent.transcript.slice(-carriedTranscriptEntries),
  };
}
