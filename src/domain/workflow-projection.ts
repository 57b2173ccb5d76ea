import type { JsonValue } from '../contracts/json';
import type { WorkflowProjection } from '../contracts/workflow-api';
import { formatUsd, type ModelPrices } from './model-cost';

/**
 * The arithmetic of a workflow run's projection (SEMANTICS §7 "Limits", decision 0039): what each projected
 * agent is counted at, the total, and whether it passes the run's money cap. Pure; the rounds that count the
 * agents are src/workflow-scripts/project-workflow-run.ts.
 */

/** What a projection knows of the model an agent would run on. */
export interface ProjectionModel {
  /** `provider/model`. */
  name: string;
  contextWindow: number;
  /** The model's output-token limit of one call. */
  maxOutputTokens: number;
  prices: ModelPrices | undefined;
  /** Set when the agent asked for a model the projection could not find (it is counted at this one instead). */
  substitutedFor?: string;
}

/**
 * One agent's tokens and cost: one model call that fills the model's context window — a prompt of the
 * window less the output limit, and an answer of the whole output limit. An agent that makes many calls
 * costs more; a short one much less. The figure is a yardstick that scales with the run's shape and the
 * models' sizes and prices, not a bill.
 */
export function agentEstimate(model: ProjectionModel): { tokens: number; inputTokens: number; outputTokens: number; costMicroUsd: number | null } {
  const outputTokens = Math.min(model.maxOutputTokens, Math.max(1, model.contextWindow - 1));
  const inputTokens = Math.max(0, model.contextWindow - outputTokens);
  const costMicroUsd = model.prices === undefined ? null : Math.round(inputTokens * model.prices.input + outputTokens * model.prices.output);
  return { tokens: inputTokens + outputTokens, inputTokens, outputTokens, costMicroUsd };
}

/** The agents a projection counted, by model. */
export type CountedAgents = Map<string, { model: ProjectionModel; agents: number }>;

/** The projection's figures from the agents counted; a token budget bounds the tokens (and scales the cost with them). */
export function projectionFigures(counted: CountedAgents, run: { tokenBudget?: number | undefined }): Pick<WorkflowProjection, 'agents' | 'tokens' | 'costMicroUsd' | 'costUsd' | 'unpricedAgents' | 'models'> & { cappedByTokenBudget: boolean } {
  let agents = 0;
  let tokens = 0;
  let cost = 0;
  let unpricedAgents = 0;
  const models: WorkflowProjection['models'] = [];
  for (const { model, agents: count } of counted.values()) {
    const each = agentEstimate(model);
    agents += count;
    tokens += each.tokens * count;
    if (each.costMicroUsd === null) unpricedAgents += count;
    else cost += each.costMicroUsd * count;
    models.push({ model: model.name, agents: count, tokensPerAgent: each.tokens, costMicroUsdPerAgent: each.costMicroUsd });
  }
  let cappedByTokenBudget = false;
  if (run.tokenBudget !== undefined && tokens > run.tokenBudget) {
    // The run stops at its token cap: it cannot spend more than that share of the projected cost.
    cost = Math.round((cost * run.tokenBudget) / tokens);
    tokens = run.tokenBudget;
    cappedByTokenBudget = true;
  }
  const costMicroUsd = unpricedAgents > 0 ? null : cost;
  return { agents, tokens, costMicroUsd, costUsd: costMicroUsd === null ? null : costMicroUsd / 1_000_000, unpricedAgents, models, cappedByTokenBudget };
}

/**
 * Why a run may not start with this projection and money cap, or undefined when it may (SEMANTICS §7: a run
 * whose projected agents and tokens would pass its money cap is refused, naming the projection).
 */
export function projectionRefusal(projection: WorkflowProjection, costCapMicroUsd: number | undefined): string | undefined {
  if (costCapMicroUsd === undefined) return undefined;
  const what = `the run is projected at ${projection.agents} agent${projection.agents === 1 ? '' : 's'}${projection.complete ? '' : ' or more'} and ${projection.tokens} tokens`;
  if (projection.costMicroUsd === null) {
    const unpriced = projection.models.filter((model) => model.costMicroUsdPerAgent === null).map((model) => model.model);
    return `${what}, and ${projection.unpricedAgents} of them would run on ${unpriced.join(', ')}, which has no prices in the provider configuration, so the run's cost cannot be kept under costBudgetUsd ${formatUsd(costCapMicroUsd)}; give the model prices, choose priced models, or leave costBudgetUsd out.`;
  }
  if (projection.costMicroUsd <= costCapMicroUsd) return undefined;
  return `${what}, ${formatUsd(projection.costMicroUsd)}, more than its costBudgetUsd of ${formatUsd(costCapMicroUsd)}; raise costBudgetUsd, lower maxAgents or tokenBudget, or run fewer agents (dryRun shows the projection).`;
}

/**
 * A placeholder result for an agent in a projection: the smallest value its `schema` (a JSON Schema) allows,
 * so the script reads fields without throwing; an agent without a schema answers a string. Arrays are empty
 * and numbers zero, so a fan-out over an agent's findings projects no agents (decision 0039).
 */
export function placeholderResult(schema: JsonValue | undefined, depth = 0): JsonValue {
  if (schema === undefined || schema === null || typeof schema !== 'object' || Array.isArray(schema) || depth > 8) return schema === undefined ? '(projected result)' : null;
  if ('const' in schema) return schema['const'] ?? null;
  const choices = schema['enum'];
  if (Array.isArray(choices) && choices.length > 0) return choices[0] ?? null;
  const alternatives = schema['anyOf'] ?? schema['oneOf'];
  if (Array.isArray(alternatives) && alternatives.length > 0) return placeholderResult(alternatives[0], depth + 1);
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'object': {
      const properties = schema['properties'];
      const value: Record<string, JsonValue> = {};
      if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
        for (const [key, property] of Object.entries(properties)) value[key] = placeholderResult(property, depth + 1);
      }
      return value;
    }
    case 'array':
      return [];
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}
