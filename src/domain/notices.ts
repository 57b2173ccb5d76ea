import type { AgentState } from '../contracts/agent-state';
import type { PendingNotice } from '../contracts/carried-agent-state';
import { announcedApprovalCount } from '../contracts/limits/workflow';

/*
 * The agent's notices (decision 0040): what settled tasks and children's approvals have to say, waiting to
 * be put into the conversation before the next model call (or handed to an MCP client, which acknowledges
 * them by number). Pure functions over AgentState.
 */

/** Queues a notice. */
export function addNotice(state: AgentState, notice: PendingNotice): AgentState {
  return { ...state, pendingNotices: [...state.pendingNotices, notice] };
}

/** Takes every waiting notice. */
export function takeNotices(state: AgentState): { state: AgentState; notices: PendingNotice[] } {
  return { state: { ...state, pendingNotices: [] }, notices: state.pendingNotices };
}

/** Numbers every waiting notice that has no number yet (the first time it is offered to an MCP client). */
export function numberNotices(state: AgentState): AgentState {
  let lastNoticeNumber = state.lastNoticeNumber;
  const pendingNotices = state.pendingNotices.map((notice) => {
    if (notice.number !== undefined) return notice;
    lastNoticeNumber += 1;
    return { ...notice, number: lastNoticeNumber };
  });
  return { ...state, pendingNotices, lastNoticeNumber };
}

/** Drops the notices numbered up to `upTo` (the client got them); returns them as `acknowledged`. */
export function acknowledgeNotices(state: AgentState, upTo: number): { state: AgentState; acknowledged: PendingNotice[] } {
  const got = (notice: PendingNotice) => notice.number !== undefined && notice.number <= upTo;
  return { state: { ...state, pendingNotices: state.pendingNotices.filter((notice) => !got(notice)) }, acknowledged: state.pendingNotices.filter(got) };
}

/**
 * Notes a child's approval as announced to the model; false (and the state unchanged) when it already was.
 * The list keeps the latest `announcedApprovalCount` ids.
 */
export function announceApproval(state: AgentState, approvalId: string): { state: AgentState; announced: boolean } {
  if (state.announcedApprovals.includes(approvalId)) return { state, announced: false };
  return { state: { ...state, announcedApprovals: [...state.announcedApprovals, approvalId].slice(-announcedApprovalCount) }, announced: true };
}
