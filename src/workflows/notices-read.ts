import type { PendingNotice } from '../contracts/carried-agent-state';
import { findTask, markRead } from '../domain/task-registry';
import type { Agent } from './agent';

/**
 * Notices reached their reader (the conversation, or an MCP client that acknowledged them): the results
 * of the settled tasks they are about count as read now, so their records' time to live starts.
 */
export function markNoticesRead(agent: Agent, notices: readonly PendingNotice[]): void {
  const now = Date.now();
  for (const notice of notices) {
    const task = notice.taskId ? findTask(agent.state, notice.taskId) : undefined;
    if (task && task.state !== 'waiting' && task.state !== 'running') agent.updateTask(task.taskId, (record) => markRead(record, now));
  }
}
