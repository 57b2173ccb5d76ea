/** The workflow bundle's entry point: every workflow type errand registers. */
export { subagentWorkflow } from './subagent-workflow';
export { sessionWorkflow } from './session-workflow';
export { tenantSpendWorkflow } from './tenant-spend-workflow';
export { workflowRunWorkflow } from './workflow-run';
