import { CancellationScope, getExternalWorkflowHandle, ParentClosePolicy, type ChildWorkflowOptions } from '@temporalio/workflow';
import { cancelSignal } from '../contracts/subagent-messages';
import type { SubagentInput } from '../contracts/subagent';
import { workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { searchAttributes } from '../contracts/search-attributes';
import type { AgentSlot } from './workflow-run-view';

/** What an agent's child delegation is started with. */
export interface AgentChildStart {
  slot: AgentSlot;
  /** The planned input, without a parent: the run's agents report to nobody, the run reads each result. */
  childInput: SubagentInput;
  sourceName: string;
  runId: string;
  tenant: string | undefined;
}

/** The start options of one agent's child delegation: its id, input, summary and search attributes. */
export function agentChildOptions(start: AgentChildStart): ChildWorkflowOptions & { args: [SubagentInput] } {
  const { slot, childInput } = start;
  return {
    workflowId: slot.workflowId,
    args: [childInput],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    workflowTaskTimeout: workflowTaskTimeoutMs,
    staticSummary: slot.label ?? childInput.label,
    staticDetails: [`workflow run: ${start.runId}`, `agent ${slot.n}${slot.phase ? `, phase ${slot.phase}` : ''}`, `key: ${slot.key}`].join('\n'),
    typedSearchAttributes: [
      { key: searchAttributes.kind, value: 'subagent' },
      { key: searchAttributes.source, value: start.sourceName },
      { key: searchAttributes.parent, value: start.runId },
      { key: searchAttributes.status, value: 'running' },
      { key: searchAttributes.model, value: `${childInput.route.provider}/${childInput.route.model}` },
      { key: searchAttributes.turns, value: 0 },
      ...(start.tenant ? [{ key: searchAttributes.tenant, value: start.tenant }] : []),
    ],
  };
}

/** Asks a running agent's delegation to cancel (not cancelled with the run's scope); one that has ended meanwhile is left. */
export async function signalAgentCancel(workflowId: string, reason: string): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(workflowId).signal(cancelSignal, { reason }));
  } catch {
    // It has ended meanwhile.
  }
}
