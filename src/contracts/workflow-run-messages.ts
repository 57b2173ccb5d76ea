import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { workflowRunMessageNames, type WorkflowRestartAgentInput, type WorkflowRunCancelInput, type WorkflowRunView } from './workflow-run';

/** The messages of a workflow run (names in workflow-run.ts), for the workflow and for clients. */

/** What the restart update answers: whether the key was dropped, and why not. */
export interface WorkflowRestartAgentOutput {
  restarted: boolean;
  message: string;
}

/** The run's view (SEMANTICS §7 "Control"). Never blocks. */
export const workflowViewQuery = defineQuery<WorkflowRunView>(workflowRunMessageNames.viewQuery);
/** No new agent starts; running ones finish. */
export const workflowPauseSignal = defineSignal<[]>(workflowRunMessageNames.pauseSignal);
/** Agents start again. */
export const workflowResumeSignal = defineSignal<[]>(workflowRunMessageNames.resumeSignal);
/** Cancels every running agent and ends the run `cancelled`. */
export const workflowCancelSignal = defineSignal<[WorkflowRunCancelInput]>(workflowRunMessageNames.cancelSignal);
/** Drops one key from the journal so its call runs again. */
export const workflowRestartAgentUpdate = defineUpdate<WorkflowRestartAgentOutput, [WorkflowRestartAgentInput]>(workflowRunMessageNames.restartAgentUpdate);
