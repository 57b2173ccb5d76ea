import type { ModelPrices } from './model-cost';
import { defaultOutputTokensFor, describeEfforts } from './model-precedence';
import { suggestNames } from './name-suggestions';

/**
 * The text of `list_subagent_models` (SEMANTICS §5 "Model routes"): route discovery in three levels, so a
 * model asks only for what it needs — providers; one provider's models; one model's reasoning efforts.
 * Unknown names get suggestions (case-insensitive substring and edit distance, as for sources). Pure.
 */

/** One model of the catalog, with the defaults of errand applied where its entry says nothing. */
export interface CatalogModel {
  id: string;
  contextWindow: number;
  /** The entry's own output-token limit; absent: the configured default applies. */
  maxOutputTokens?: number;
  reasoningEfforts: readonly string[];
  defaultReasoningEffort?: string;
  /** What a call costs, when the entry has prices (SEMANTICS §6 "Spend"). */
  prices?: ModelPrices;
}

/** One provider of the catalog. */
export interface CatalogProvider {
  name: string;
  kind: string;
  defaultModel?: string;
  models: readonly CatalogModel[];
}

/** Everything the listing shows besides the providers. */
export interface DiscoveryContext {
  /** The route a delegation takes when nothing chooses one (`ERRAND_DEFAULT_MODEL`). */
  defaultRoute?: { provider: string; model: string };
  /** `ERRAND_MAX_OUTPUT_TOKENS`: the output-token limit of a model whose entry sets none. */
  defaultMaxOutputTokens: number;
}

/** Which level to list: nothing (providers), a provider (its models), or a provider and a model (its efforts). */
export interface DiscoveryQuery {
  provider?: string;
  model?: string;
}

/** The answer of `list_subagent_models(provider?, model?)`. */
export function formatRouteDiscovery(catalog: readonly CatalogProvider[], context: DiscoveryContext, query: DiscoveryQuery): string {
  if (catalog.length === 0) return 'No providers are configured (ERRAND_PROVIDERS): no delegation can choose a route.';
  if (query.provider === undefined) {
    if (query.model === undefined) return listProviders(catalog, context);
    // A model without a provider: the provider that has it, else suggestions among all models.
    const owners = catalog.filter((provider) => provider.models.some((model) => model.id === query.model));
    const [owner] = owners;
    if (owners.length === 1 && owner) return listEfforts(owner, query.model);
    if (owners.length > 1) return `Model "${query.model}" is offered by several providers: ${owners.map((provider) => provider.name).join(', ')}. Call list_subagent_models with provider and model.`;
    const all = catalog.flatMap((provider) => provider.models.map((model) => model.id));
    return `No provider offers a model named "${query.model}".${didYouMean(query.model, all)} Call list_subagent_models(provider) to see a provider's models.`;
  }
  const provider = catalog.find((candidate) => candidate.name === query.provider);
  if (!provider) {
    return `No provider named "${query.provider}" is configured.${didYouMean(query.provider, catalog.map((candidate) => candidate.name))} Providers: ${catalog.map((candidate) => candidate.name).join(', ')}.`;
  }
  return query.model === undefined ? listModels(provider, context) : listEfforts(provider, query.model);
}

function listProviders(catalog: readonly CatalogProvider[], context: DiscoveryContext): string {
  const lines = ['Providers a delegation may use:'];
  for (const provider of catalog) {
    const count = `${provider.models.length} model${provider.models.length === 1 ? '' : 's'}`;
    lines.push(`- ${provider.name} (${provider.kind}): ${count}, ${provider.defaultModel ? `default model ${provider.defaultModel}` : 'no default model (name one)'}`);
  }
  if (context.defaultRoute) lines.push(`A delegation that names no route runs on ${context.defaultRoute.provider}/${context.defaultRoute.model}.`);
  lines.push('Next: list_subagent_models(provider) lists a provider\'s models; list_subagent_models(provider, model) a model\'s reasoning efforts. Pass provider, model and reasoning_effort to delegate to choose a route.');
  return lines.join('\n');
}

function listModels(provider: CatalogProvider, context: DiscoveryContext): string {
  const defaultId = provider.defaultModel;
  const lines = [`Models of provider ${provider.name} (${provider.kind}):`];
  for (const model of provider.models) {
    const marks = [
      model.id === defaultId ? 'the provider\'s default' : '',
      context.defaultRoute?.provider === provider.name && context.defaultRoute.model === model.id ? 'the default route' : '',
    ].filter(Boolean);
    const fallback = defaultOutputTokensFor(model.contextWindow, context.defaultMaxOutputTokens);
    const output = model.maxOutputTokens !== undefined
      ? `${model.maxOutputTokens}`
      : fallback < context.defaultMaxOutputTokens ? `${fallback} (half its context window, under the configured default)` : `${fallback} (the configured default)`;
    const efforts = model.reasoningEfforts.length > 0 ? describeEfforts({ efforts: model.reasoningEfforts, ...(model.defaultReasoningEffort ? { default: model.defaultReasoningEffort } : {}) }) : 'none';
    // Prices let the model weigh a cheaper route; a model without them says nothing about cost.
    const prices = model.prices ? `, US dollars per million tokens: ${model.prices.input} in, ${model.prices.output} out${model.prices.cachedInput !== undefined ? `, ${model.prices.cachedInput} cached in` : ''}` : '';
    lines.push(`- ${model.id}${marks.length > 0 ? ` (${marks.join(', ')})` : ''}: context window ${model.contextWindow} tokens, output limit ${output} tokens, reasoning efforts: ${efforts}${prices}`);
  }
  lines.push(`Next: list_subagent_models("${provider.name}", model) shows a model's reasoning efforts; delegate with provider "${provider.name}" and model to use one.`);
  return lines.join('\n');
}

function listEfforts(provider: CatalogProvider, modelId: string): string {
  const model = provider.models.find((candidate) => candidate.id === modelId);
  if (!model) {
    return `Provider ${provider.name} has no model named "${modelId}".${didYouMean(modelId, provider.models.map((candidate) => candidate.id))} Its models: ${provider.models.map((candidate) => candidate.id).join(', ')}.`;
  }
  const route = `${provider.name}/${model.id}`;
  if (model.reasoningEfforts.length === 0) {
    return `${route} takes no reasoning effort (its provider entry lists no reasoningEfforts): delegate to it without reasoning_effort.`;
  }
  const lines = [`Reasoning efforts of ${route}:`];
  for (const effort of model.reasoningEfforts) lines.push(`- ${effort}${effort === model.defaultReasoningEffort ? ' (default)' : ''}`);
  lines.push(
    model.defaultReasoningEffort
      ? `A delegation to ${route} without reasoning_effort uses ${model.defaultReasoningEffort} (or your own effort, when you run on ${route} yourself).`
      : `A delegation to ${route} without reasoning_effort sends none (the provider decides), unless you run on ${route} yourself with an effort.`,
  );
  return lines.join('\n');
}

function didYouMean(name: string, names: readonly string[]): string {
  const suggestions = suggestNames(name, names);
  return suggestions.length > 0 ? ` Did you mean ${suggestions.map((suggestion) => `"${suggestion}"`).join(', ')}?` : '';
}
