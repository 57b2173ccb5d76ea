import { createHash } from 'node:crypto';
import type { BlobStore } from '../activities/blob-store';
import type { PlanWorkflowRunInput, PlanWorkflowRunOutput } from '../contracts/activities';
import type { StartWorkflowBody } from '../contracts/workflow-api';
import { runWorkflowRequestSchema, type RunWorkflowRequest } from '../contracts/run-workflow-tool';
import type { WorkflowRunInput } from '../contracts/workflow-run';
import { formatUsd } from '../domain/model-cost';
import type { ErrandConfig } from '../settings/config';
import type { WorkflowPlace } from '../sources/workflow-sources';
import { isApiProblem } from '../api/problem';
import { planWorkflowRun } from '../api/workflow-run-planning';

/**
 * Planning a `run_workflow` call (decision 0045) on the worker: the tool's arguments checked, its caps
 * lowered to what the caller has left (and the operator's), and then the same planning as
 * `POST /v1/workflows` (the script from a workflow source or inline, the limits, the projection against the
 * money cap). A refusal is a message for the calling model, naming the tool's own argument names. The
 * run's input is stored by content, so a resume of the ended run (API, CLI) finds it (decision 0039).
 */

/** What the planner reads: the configuration, where workflow sources are for a working directory, the store. */
export interface WorkflowRunPlannerDeps {
  config: ErrandConfig;
  placesFor(workingDir: string): WorkflowPlace[];
  blobs: BlobStore;
}

/** The API's field names as the tool's: a refusal speaks the caller's language. */
const toolNames: [RegExp, string][] = [
  [/\bcostBudgetUsd\b/g, 'cost_budget_usd'],
  [/\btokenBudget\b/g, 'token_budget'],
  [/\btimeBudget\b/g, 'time_budget'],
  [/\bmaxAgents\b/g, 'max_agents'],
  [/ \(dryRun shows the projection\)/g, ''],
];

function inToolNames(text: string): string {
  return toolNames.reduce((out, [pattern, name]) => out.replace(pattern, name), text);
}

/** The smaller of a requested cap and what is left (either may be absent). */
function lower(requested: number | undefined, left: number | undefined): number | undefined {
  if (requested === undefined) return left;
  return left === undefined ? requested : Math.min(requested, left);
}

/** Plans one `run_workflow` call. */
export async function planRunWorkflowCall(deps: WorkflowRunPlannerDeps, input: PlanWorkflowRunInput): Promise<PlanWorkflowRunOutput> {
  const parsed = runWorkflowRequestSchema.safeParse(input.request);
  if (!parsed.success) {
    return { ok: false, message: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ') };
  }
  const request: RunWorkflowRequest = parsed.data;
  const leftUsd = input.remainingCostMicroUsd === undefined ? undefined : input.remainingCostMicroUsd / 1_000_000;
  const leftSecs = input.remainingTimeMs === undefined ? undefined : Math.max(1, Math.floor(input.remainingTimeMs / 1_000));
  const tokenBudget = lower(request.token_budget, input.remainingBudget);
  const timeBudget = lower(request.time_budget, leftSecs);
  const costBudgetUsd = lower(request.cost_budget_usd, leftUsd);
  const body: StartWorkflowBody = {
    ...(request.script !== undefined ? { script: request.script } : { name: request.name as string }),
    ...(request.args !== undefined ? { args: request.args } : {}),
    ...(tokenBudget !== undefined ? { tokenBudget } : {}),
    ...(timeBudget !== undefined ? { timeBudget } : {}),
    ...(costBudgetUsd !== undefined && costBudgetUsd > 0 ? { costBudgetUsd } : {}),
    ...(request.concurrency !== undefined ? { concurrency: request.concurrency } : {}),
    ...(request.max_agents !== undefined ? { maxAgents: request.max_agents } : {}),
  } as StartWorkflowBody;
  const fromCaller = leftUsd !== undefined && (request.cost_budget_usd === undefined || leftUsd < request.cost_budget_usd)
    ? ` (the run's cost_budget_usd is what is left of yours: ${formatUsd(input.remainingCostMicroUsd ?? 0)})`
    : '';
  let planned;
  try {
    planned = await planWorkflowRun(body, { config: deps.config, workingDir: input.workingDir, places: deps.placesFor(input.workingDir), startedBy: input.startedBy });
  } catch (error) {
    if (!isApiProblem(error)) throw error;
    const problems = error.options.errors?.map((problem) => `${problem.field}: ${problem.message}`).join('; ') ?? error.options.detail ?? error.title;
    const suggestions = error.options.suggestions?.length ? ` Workflows found: ${error.options.suggestions.join(', ')}.` : '';
    const said = inToolNames(problems).replace(/\.$/, '');
    return { ok: false, message: `${said}${error.options.errors?.some((problem) => problem.field === 'costBudgetUsd') ? fromCaller : ''}.${suggestions}` };
  }
  const runInput: WorkflowRunInput = { ...planned.input, ...(input.tenant ? { tenant: input.tenant } : {}) };
  const stored = JSON.stringify(planned.input);
  const inputKey = `workflow-runs/inputs/${createHash('sha256').update(stored, 'utf8').digest('hex')}`;
  await deps.blobs.put(inputKey, stored);
  const projection = planned.projection;
  const projectionText = `${projection.agents} agent${projection.agents === 1 ? '' : 's'}${projection.complete ? '' : ' or more'}, ${projection.tokens} tokens${projection.costMicroUsd !== null ? `, ${formatUsd(projection.costMicroUsd)}` : ''}`;
  return { ok: true, input: runInput, inputKey, projectionText };
}
