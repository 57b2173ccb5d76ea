import { condition } from '@temporalio/workflow';
import type { ApprovalDecision, ToolCallRef } from '../contracts/activities';
import type { ApprovalInput, PendingApproval } from '../contracts/subagent-messages';
import type { SubagentState } from '../contracts/subagent';
import { FailureType } from '../contracts/failures';
import { updateRefusal } from './update-refusal';

/** What approvals need of the agent they belong to. */
export interface ApprovalHost {
  readonly options: { workflowId: string; approvalTimeoutMs: number; approvers: 'human' | 'human-or-parent' };
  readonly status: SubagentState;
  setStatus(status: SubagentState): void;
  flushViews(): void;
  /** Something a parent or a person should see changed. */
  changed(): void;
}

/**
 * Tool calls under an `ask` policy that wait for a decision. The wait is a condition on workflow state,
 * so it survives worker and server restarts; no decision within the approval timeout counts as a denial.
 * A pending approval cannot exist at continue-as-new: it lives inside a turn, and the workflow continues
 * as new only between turns.
 */
export class Approvals {
  pending: PendingApproval[] = [];
  private decisions: Record<string, ApprovalDecision> = {};

  constructor(private readonly agent: ApprovalHost) {}

  /** Waits for the decision on one call of the assistant message at `assistantSeq`. */
  async await(call: ToolCallRef, assistantSeq: number, index: number): Promise<ApprovalDecision> {
    const agent = this.agent;
    const id = `${agent.options.workflowId}:${assistantSeq}:${index}`;
    const now = Date.now();
    const timeoutMs = agent.options.approvalTimeoutMs;
    this.pending.push({ id, workflowId: agent.options.workflowId, tool: call.name, argumentsPreview: call.argumentsPreview, requestedAt: now, expiresAt: now + timeoutMs });
    agent.setStatus('waiting_approval');
    agent.changed();
    try {
      agent.flushViews();
      const decided = await condition(() => this.decisions[id] !== undefined, timeoutMs);
      const decision = this.decisions[id];
      if (decided && decision) return decision;
      return { decision: 'deny', by: 'timeout', reason: `no decision within ${Math.round(timeoutMs / 1000)} s` };
    } finally {
      this.pending = this.pending.filter((entry) => entry.id !== id);
      delete this.decisions[id];
      if (this.pending.length === 0 && agent.status === 'waiting_approval') agent.setStatus('running');
    }
  }

  /** Validates a decision: the id must be a pending approval of this workflow. Throws with the reason. */
  validate(input: ApprovalInput): void {
    if (!input || typeof input.approvalId !== 'string' || !this.pending.some((entry) => entry.id === input.approvalId)) {
      const pending = this.pending.map((entry) => entry.id);
      throw updateRefusal(FailureType.approvalNotPending, `no pending approval "${String(input?.approvalId)}" in ${this.agent.options.workflowId}; pending: ${pending.length > 0 ? pending.join(', ') : '(none)'}`);
    }
    if (input.decision !== 'approve' && input.decision !== 'deny') throw updateRefusal(FailureType.invalidInput, `decision must be "approve" or "deny", not "${String(input.decision)}"`);
    // A delegating model may decide only where the operator allows it (toolPolicy.approvers) and the agent
    // file does not say `permissionMode: auto`; a person always may.
    if (typeof input.by === 'string' && input.by.startsWith('parent ') && this.agent.options.approvers !== 'human-or-parent') {
      throw updateRefusal(FailureType.approvalByPersonOnly, `approvals in ${this.agent.options.workflowId} are decided by a person (toolPolicy.approvers is "human", or its agent file says permissionMode: auto), not by the delegating agent`);
    }
  }

  /** Records a decision (after {@link validate}). */
  decide(input: ApprovalInput): { accepted: true } {
    this.decisions[input.approvalId] = { decision: input.decision, by: input.by ?? 'api', ...(input.reason ? { reason: input.reason } : {}) };
    return { accepted: true };
  }
}
