/**
 * A workflow run's projection (SEMANTICS §7 "Limits", decision 0039): the script runs in its sandbox, round
 * after round, with every `agent()` call answered at once by a placeholder (the smallest value the call's
 * schema allows), until it returns, fails, makes `maxAgents` calls or passes the projection's round or time
 * limit. The calls it made are the projected agents; each is counted at one full context window of the model
 * it names (src/domain/workflow-projection.ts). Nothing runs but the script: no model, no worker, no Temporal.
 */
import type { JsonValue } from '../contracts/json';
import { workflowProjectionMaxRounds, workflowProjectionRoundMs, workflowProjectionTotalMs } from '../contracts/limits';
import type { WorkflowProjection } from '../contracts/workflow-api';
import { defaultWorkflowScriptLimits, type WorkflowJournal, type WorkflowScriptDiagnostic } from '../contracts/workflow-script';
import { agentEstimate, placeholderResult, projectionFigures, type CountedAgents, type ProjectionModel } from '../domain/workflow-projection';
import { runWorkflowScriptRound } from './run-script-round';

/** What a projection needs. */
export interface ProjectionRequest {
  script: string;
  args: JsonValue;
  maxAgents: number;
  tokenBudget?: number | undefined;
  /** The model an agent runs on: its `model` option (`undefined`: the default model). */
  modelFor: (requested: string | undefined) => ProjectionModel;
  /** The journal of the run a resume starts from: its finished agents answer from it and are not counted. */
  journal?: WorkflowJournal;
  /** Limits of the projection itself (tests lower them). */
  limits?: { rounds?: number; roundMs?: number; totalMs?: number };
}

/** The placeholder content given for every agent definition a script names (its model is not read: see notes). */
const placeholderDefinition = '(agent definition: not read by a projection)';

/** Projects a run: the agents its script calls, and their tokens and cost. Never throws for anything the script does. */
export async function projectWorkflowRun(request: ProjectionRequest): Promise<WorkflowProjection> {
  const maxRounds = request.limits?.rounds ?? workflowProjectionMaxRounds;
  const deadline = Date.now() + (request.limits?.totalMs ?? workflowProjectionTotalMs);
  // Only finished agents answer from a resumed run's journal; a failed one runs again, so it is counted.
  const journal: WorkflowJournal = Object.fromEntries(Object.entries(request.journal ?? {}).filter(([, entry]) => entry.outcome === 'done'));
  const journaled = Object.keys(journal).length;
  const definitions: Record<string, string | null> = {};
  const counted: CountedAgents = new Map();
  const substituted = new Set<string>();
  let calls = 0;
  let rounds = 0;
  let complete = false;
  let stopped: string | undefined;
  let diagnostic: WorkflowScriptDiagnostic | undefined;
  for (;;) {
    if (rounds >= maxRounds) {
      stopped = `the projection stopped after ${maxRounds} rounds of the script (each round answers every agent it waits on)`;
      break;
    }
    if (Date.now() > deadline) {
      stopped = 'the projection stopped at its time limit';
      break;
    }
    rounds += 1;
    const round = await runWorkflowScriptRound({
      script: request.script,
      args: request.args,
      journal,
      agentDefinitions: definitions,
      budgetTokens: request.tokenBudget ?? null,
      limits: { ...defaultWorkflowScriptLimits, agents: request.maxAgents, roundMs: request.limits?.roundMs ?? workflowProjectionRoundMs },
    });
    if (round.status === 'done') {
      complete = true;
      break;
    }
    if (round.status === 'failed') {
      diagnostic = round.diagnostic;
      break;
    }
    for (const name of round.definitionsNeeded) definitions[name] = placeholderDefinition;
    for (const call of round.requests) {
      if (Object.hasOwn(journal, call.key)) continue;
      const requested = typeof call.options['model'] === 'string' ? call.options['model'] : undefined;
      const model = request.modelFor(requested);
      if (model.substitutedFor !== undefined) substituted.add(`${model.substitutedFor} (counted as ${model.name})`);
      const entry = counted.get(model.name) ?? { model, agents: 0 };
      entry.agents += 1;
      counted.set(model.name, entry);
      journal[call.key] = { outcome: 'done', result: placeholderResult(call.options['schema']), tokens: agentEstimate(model).tokens };
      calls += 1;
    }
    if (calls >= request.maxAgents) {
      stopped = `the projection reached maxAgents (${request.maxAgents}) agent() calls`;
      break;
    }
  }
  const figures = projectionFigures(counted, { tokenBudget: request.tokenBudget });
  const notes = [
    'Each agent is counted at one model call that fills its model\'s context window (prompt of the window less the output limit, answer of the whole output limit); an agent of many calls costs more, a short one less.',
    'Agents are answered by placeholders (the smallest value their schema allows: empty arrays, zero, empty strings), so agents a script starts for each item an earlier agent found are not counted.',
    ...(figures.cappedByTokenBudget ? [`The projected tokens are more than tokenBudget; the run stops at ${request.tokenBudget} tokens, so tokens and cost are counted up to it.`] : []),
    ...(stopped ? [`${stopped}: the figures count the agents up to there.`] : []),
    ...(journaled > 0 ? [`The run resumes from a journal of ${journaled} finished agent${journaled === 1 ? '' : 's'}: a call whose key is there answers from it and is not counted (a call naming an agent definition is counted, as the projection does not read definitions).`] : []),
    ...(substituted.size > 0 ? [`Models not in the provider configuration were counted at the default model: ${[...substituted].join(', ')}.`] : []),
    ...(Object.keys(definitions).length > 0 ? [`Agents of a named definition (${Object.keys(definitions).join(', ')}) are counted at the model their call names, or the default model: the definition's own model is not read.`] : []),
    ...(diagnostic ? ['The script stopped under the projection; with placeholder results a script may fail where a real run would not.'] : []),
  ];
  const { cappedByTokenBudget: _capped, ...shown } = figures;
  return { ...shown, complete, rounds, ...(diagnostic ? { diagnostic } : {}), notes };
}
