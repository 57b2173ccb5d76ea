import type { AgentStateView } from '../contracts/agent-state';
import type { TokenUsage } from '../contracts/model';
import type { SubagentState } from '../contracts/subagent';
import type { PendingApproval } from '../contracts/subagent-messages';

/**
 * What an agent shows of itself, as its peek view (agent-snapshot.ts) and its search attributes and current
 * details (agent-views.ts) read it. The `Agent` class implements it; those readers take this instead of
 * the class, so the class can hold them without their modules importing it back.
 */
export interface AgentLook {
  readonly options: { readonly workflowId: string; readonly label: string };
  readonly state: AgentStateView;
  /** The live status: running, waiting for a message or an approval, or how it ended. */
  readonly status: SubagentState;
  /** Turn limit of the current run. */
  readonly currentLimit: number;
  /** `provider/model` of the agent's route. */
  readonly modelName: string;
  readonly approvals: { readonly pending: readonly PendingApproval[] };
  /** Tokens used by the agent and all its descendants. */
  totalUsage(): TokenUsage;
}
