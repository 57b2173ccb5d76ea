import type { BlobStore } from '../activities/blob-store';
import { loadJournal } from '../activities/workflow-journal-store';
import type { ErrandConfig } from '../settings/config';
import type { JsonValue } from '../contracts/json';
import { defaultContextWindow } from '../contracts/limits';
import type { StartWorkflowBody, WorkflowProjection } from '../contracts/workflow-api';
import { projectionRefusal, type ProjectionModel } from '../domain/workflow-projection';
import { usdToMicro } from '../domain/run-caps';
import { modelEntryId, type ModelEntry } from '../llm/provider-config';
import { findWorkflowScript, type WorkflowPlace } from '../sources/workflow-sources';
import { projectWorkflowRun } from '../workflow-scripts/project-workflow-run';
import { ApiProblem, ProblemKind } from './problem';
import type { WorkflowRunStartInput } from './workflow-run-service';

/**
 * Planning a workflow run (SEMANTICS §7): the script (inline, or a workflow source found by name), the caps
 * (a request lowers the operator's, never raises them: the route refused more), the concurrency and agent
 * ceilings, and the projection that refuses a run whose projected cost passes its money cap. Loaded with
 * `import()` by the workflow routes: the projection brings the script sandbox (QuickJS in WebAssembly),
 * which no other route needs.
 */

/** What planning answers: the run's input, and the projection it was checked with. */
export interface PlannedWorkflowRun {
  input: WorkflowRunStartInput;
  projection: WorkflowProjection;
}

/** What planning reads besides the body. */
export interface WorkflowPlanningContext {
  config: ErrandConfig;
  workingDir: string;
  /** Where workflow sources are found for this working directory (empty: none are). */
  places: readonly WorkflowPlace[];
  startedBy: string;
}

/** The script a body names: its text and its name; 422 naming the name and the places searched when there is none. */
export async function resolveWorkflowScript(body: Pick<StartWorkflowBody, 'script' | 'scriptName' | 'name'>, places: readonly WorkflowPlace[]): Promise<{ script: string; scriptName: string }> {
  if (body.script !== undefined) return { script: body.script, scriptName: body.scriptName ?? 'inline script' };
  const name = body.name ?? '';
  const found = await findWorkflowScript(name, places);
  if (!found.ok) {
    throw new ApiProblem(422, ProblemKind.sourceNotFound, 'Unknown workflow', {
      detail: `name: ${found.message}`,
      errors: [{ in: 'body', field: 'name', message: found.message }],
      ...(found.known.length > 0 ? { suggestions: found.known.slice(0, 10) } : {}),
    });
  }
  return { script: found.script.content, scriptName: name };
}

/** Plans a run from a validated body: 422 for an unknown source, a script that cannot parse, or a projection over the money cap. */
export async function planWorkflowRun(
  body: StartWorkflowBody,
  context: WorkflowPlanningContext,
  script?: { script: string; scriptName: string },
  resumed?: { journalRef: string; blobs: BlobStore },
): Promise<PlannedWorkflowRun> {
  const { config } = context;
  // A resume projects only the agents the ended run's journal does not answer.
  const journal = resumed === undefined ? undefined : await loadJournal(resumed.blobs, resumed.journalRef);
  const resolved = script ?? (await resolveWorkflowScript(body, context.places));
  const operator = config.caps;
  const time = body.timeBudget !== undefined ? body.timeBudget * 1_000 : undefined;
  const cost = body.costBudgetUsd !== undefined ? usdToMicro(body.costBudgetUsd) : undefined;
  const timeBudgetMs = time === undefined ? operator.timeBudgetMs : Math.min(time, operator.timeBudgetMs ?? time);
  const costBudgetMicroUsd = cost === undefined ? operator.costBudgetMicroUsd : Math.min(cost, operator.costBudgetMicroUsd ?? cost);
  const limits = config.workflows;
  const over = [
    ...(body.concurrency !== undefined && body.concurrency > limits.maxConcurrentAgents ? [{ field: 'concurrency', message: `${body.concurrency} is over this deployment's limit of ${limits.maxConcurrentAgents} agents at once (ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS); ask for at most ${limits.maxConcurrentAgents}` }] : []),
    ...(body.maxAgents !== undefined && body.maxAgents > limits.maxAgents ? [{ field: 'maxAgents', message: `${body.maxAgents} is over this deployment's limit of ${limits.maxAgents} agent() calls per run (ERRAND_WORKFLOW_MAX_AGENTS); ask for at most ${limits.maxAgents}` }] : []),
  ];
  if (over.length > 0) {
    throw new ApiProblem(422, ProblemKind.limitExceeded, "The request asks for more than the operator's limits", {
      detail: over.map((problem) => `${problem.field}: ${problem.message}`).join('; '),
      errors: over.map((problem) => ({ in: 'body' as const, ...problem })),
    });
  }
  const maxAgents = body.maxAgents ?? limits.maxAgents;
  const args: JsonValue = body.args ?? null;
  const projection = await projectWorkflowRun({ script: resolved.script, args, maxAgents, tokenBudget: body.tokenBudget, modelFor: projectionModels(config), ...(journal ? { journal } : {}) });
  if (projection.diagnostic && (projection.diagnostic.kind === 'syntax' || projection.diagnostic.kind === 'unsupported')) {
    const where = projection.diagnostic.line === null ? '' : ` (line ${projection.diagnostic.line})`;
    const message = `${projection.diagnostic.message}${where}`;
    throw new ApiProblem(422, ProblemKind.invalidRequest, 'The workflow script cannot run', {
      detail: `${body.script !== undefined ? 'script' : `workflow ${resolved.scriptName}`}: ${message}`,
      errors: [{ in: 'body', field: body.script !== undefined ? 'script' : 'name', message }],
    });
  }
  const refusal = projectionRefusal(projection, costBudgetMicroUsd);
  if (refusal !== undefined && body.dryRun !== true) {
    throw new ApiProblem(422, ProblemKind.limitExceeded, 'The projected run passes its money cap', {
      detail: `costBudgetUsd: ${refusal}`,
      errors: [{ in: 'body', field: 'costBudgetUsd', message: refusal }],
    });
  }
  const input: WorkflowRunStartInput = {
    script: resolved.script,
    scriptName: resolved.scriptName,
    args,
    workingDir: context.workingDir,
    caps: {
      ...(body.tokenBudget !== undefined ? { tokenBudget: body.tokenBudget } : {}),
      ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}),
      ...(costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd } : {}),
    },
    concurrency: body.concurrency ?? limits.maxConcurrentAgents,
    maxAgents,
    startedBy: context.startedBy,
  };
  return { input, projection };
}

/**
 * The model an agent of a projection runs on: the operator's override, else the call's `model` (an alias,
 * `provider/model`, or a model id of any provider), else the default model. A model the configuration does
 * not have is counted at the default model, and the projection says so.
 */
export function projectionModels(config: ErrandConfig): (requested: string | undefined) => ProjectionModel {
  const find = (provider: string | undefined, model: string): ProjectionModel | undefined => {
    for (const candidate of config.providers) {
      if (provider !== undefined && candidate.name !== provider) continue;
      const entry = candidate.models.find((each) => modelEntryId(each) === model);
      if (entry === undefined) continue;
      const settings: Partial<ModelEntry> = typeof entry === 'string' ? {} : entry;
      return {
        name: `${candidate.name}/${model}`,
        contextWindow: settings.contextWindow ?? defaultContextWindow,
        maxOutputTokens: settings.maxOutputTokens ?? config.model.maxOutputTokens,
        prices: settings.prices,
      };
    }
    return undefined;
  };
  const named = (value: string): ProjectionModel | undefined => {
    const resolved = config.sources.modelAliases[value] ?? value;
    const slash = resolved.indexOf('/');
    return slash > 0 ? find(resolved.slice(0, slash), resolved.slice(slash + 1)) ?? find(undefined, resolved) : find(undefined, resolved);
  };
  const fallback: ProjectionModel = (config.defaultModel ? find(config.defaultModel.provider, config.defaultModel.model) : undefined) ?? {
    name: config.defaultModel ? `${config.defaultModel.provider}/${config.defaultModel.model}` : '(no default model)',
    contextWindow: defaultContextWindow,
    maxOutputTokens: config.model.maxOutputTokens,
    prices: undefined,
  };
  const override = config.subagent.modelOverride;
  return (requested) => {
    if (override !== undefined) return named(override) ?? fallback;
    if (requested === undefined) return fallback;
    return named(requested) ?? { ...fallback, substitutedFor: requested };
  };
}
